package org.gphash.format;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Random;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;

/**
 * Values in their blocks, per pool format ({@link ValueFormat}): format 2 is the bare value at the
 * block's start, nothing written around it, every block whole (today's layout, byte for byte); format
 * 3 is the header ({@link ValueBlockHeader}: the pool's value size, no checksum, little-endian) and then
 * the value, whole only where the header is whole for the class of the word that names the block and
 * its length at most the pool's value size; or, for a value whose length is a block size where the
 * pool keeps no item checksums, the value alone in a bare block of that size.
 */
class ValueFormatTest {

    private static final ValueLayout.OfLong HEADER = ValueLayout.JAVA_LONG.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** A block's bytes after the value is copied in and the frame written, as the engines write them. */
    private static MemorySegment written(ValueFormat f, long block, byte[] value, long poolBytes) {
        MemorySegment pool = Arena.ofAuto().allocate(poolBytes, 16);  // a pool's mapping: native, aligned
        pool.fill((byte) 0x5A);
        int c = f.classOf(value.length);
        assertEquals(f.valueAt(block, c) - block + value.length, f.write(pool, block, MemorySegment.ofArray(value), 0,
                value.length), "the bytes to persist: the frame and the value");
        byte[] back = new byte[value.length];
        assertEquals(value.length, f.read(pool, block, c, MemorySegment.ofArray(back), 0));
        assertArrayEquals(value, back, "the value read back");
        return pool;
    }

    @Property(tries = 300)
    void formatTwoIsTheBareValueAtItsBlock(@ForAll @IntRange(min = 0, max = 4096) int valueSize,
                                          @ForAll @IntRange(min = 0, max = 64) int blockUnits,
                                          @ForAll @LongRange(min = 0, max = Long.MAX_VALUE) long seed) {
        ValueFormat f = ValueFormat.v2(valueSize);
        long block = 16L * blockUnits;
        byte[] value = new byte[valueSize];
        new Random(seed).nextBytes(value);
        MemorySegment pool = written(f, block, value, block + valueSize + 64);
        assertEquals(2, f.version());
        assertEquals(block, f.valueAt(block, -1));
        MemorySegment expected = MemorySegment.ofArray(new byte[(int) pool.byteSize()]);
        expected.fill((byte) 0x5A);
        MemorySegment.copy(MemorySegment.ofArray(value), 0, expected, block, valueSize);
        assertArrayEquals(expected.toArray(ValueLayout.JAVA_BYTE), pool.toArray(ValueLayout.JAVA_BYTE),
                "format 2 writes the value and nothing else");
        assertTrue(f.frameWhole(pool, block, -1));
    }

    @Property(tries = 300)
    void formatThreeFramesTheValueBehindItsHeader(@ForAll @IntRange(min = 0, max = 1 << 16) int valueSize,
                                                 @ForAll @IntRange(min = 0, max = 64) int blockUnits,
                                                 @ForAll @LongRange(min = 0, max = Long.MAX_VALUE) long seed) {
        ValueFormat f = ValueFormat.v3(valueSize, false);
        long block = 16L * blockUnits;
        byte[] value = new byte[valueSize];
        Random r = new Random(seed);
        r.nextBytes(value);
        MemorySegment pool = written(f, block, value, block + ValueClasses.blockBytes(ValueClasses.classOf(valueSize)));
        assertEquals(3, f.version());
        int c = ValueClasses.classOf(valueSize);
        assertEquals(c, f.classOf(valueSize), "a pool that keeps item checksums frames every value");
        assertEquals(block + ValueClasses.HEADER_BYTES, f.valueAt(block, c));
        assertTrue(ValueClasses.HEADER_BYTES + valueSize <= ValueClasses.blockBytes(c), "the frame fits the class's block");
        assertEquals(ValueBlockHeader.make(valueSize, 0), pool.get(HEADER, block), "the header's known answer");
        assertArrayEquals(value, pool.asSlice(f.valueAt(block, c), valueSize).toArray(ValueLayout.JAVA_BYTE));
        assertTrue(f.frameWhole(pool, block, c));
        // A torn header (a bit of its length flipped) is refused where its length leaves the word's class or
        // passes the pool's value size; within the class only an item checksum could tell (not in format 3 yet).
        long header = pool.get(HEADER, block);
        int bit = r.nextInt(32);
        long torn = ValueBlockHeader.length(header ^ (1L << bit));
        pool.set(HEADER, block, header ^ (1L << bit));
        boolean stillWhole = torn <= valueSize && ValueClasses.classOf(torn) == c;
        assertEquals(stillWhole, f.frameWhole(pool, block, c), "a header with length bit " + bit + " flipped");
        pool.set(HEADER, block, header);
        assertTrue(f.frameWhole(pool, block, c));
    }

    @Property(tries = 200)
    void aBlockIsWholeOnlyForItsOwnClassAndUpToThePoolsSize(@ForAll @IntRange(min = 0, max = 4096) int size,
                                                    @ForAll @IntRange(min = 0, max = 4096) int other) {
        if (size == other) {
            return;
        }
        MemorySegment pool = written(ValueFormat.v3(4096, false), 0, new byte[size],
                ValueClasses.blockBytes(ValueClasses.classOf(size)) + 8192);
        int otherClass = ValueClasses.classOf(other);
        assertEquals(ValueClasses.classOf(size) == otherClass, ValueFormat.v3(4096, false).frameWhole(pool, 0, otherClass),
                "a value of " + size + " bytes read through a word of the class of " + other);
        assertFalse(ValueFormat.v3(size - 1 < 0 ? 0 : size - 1, false).frameWhole(pool, 0, ValueClasses.classOf(size))
                && size > 0, "a value longer than the pool's values");
    }

    /**
     * Where the pool keeps no item checksums, a value of the pool's value size, where that size is a
     * block size, goes alone into a bare block of that size, written byte for byte as format 2 writes a
     * value, its length the block's; any other value is framed as before (a shorter one even where its
     * length is a block size). A bare block is whole where its size is at most the pool's value size.
     */
    @Property(tries = 500)
    void aValueOfTheValueSizeGoesBareWhereItIsABlockSize(@ForAll @IntRange(min = 0, max = 5000) int valueSize,
                                                         @ForAll boolean shorter,
                                                         @ForAll @IntRange(min = 0, max = 64) int blockUnits,
                                                         @ForAll @LongRange(min = 0, max = Long.MAX_VALUE) long seed) {
        Random r = new Random(seed);
        if (r.nextBoolean()) {
            valueSize = ValueClasses.blockBytes(r.nextInt(60));  // often a block size
        }
        ValueFormat f = ValueFormat.v3(valueSize, true);
        int length = shorter && valueSize > 0 ? r.nextInt(valueSize) : valueSize;
        long block = 16L * blockUnits;
        byte[] value = new byte[length];
        r.nextBytes(value);
        int c = f.classOf(length);
        MemorySegment pool = written(f, block, value, block + ValueClasses.blockBytes(c) + 64);
        int bare = length == valueSize ? ValueClasses.bareClassOf(length) : -1;
        if (bare < 0) {
            assertEquals(ValueClasses.classOf(length), c, "no block of " + length + " bytes: framed");
            assertEquals(ValueBlockHeader.make(length, 0), pool.get(HEADER, block));
            return;
        }
        assertEquals(bare, c);
        assertTrue(ValueClasses.isBare(c) && ValueClasses.blockBytes(c) == length && ValueClasses.headerBytes(c) == 0);
        assertEquals(block, f.valueAt(block, c));
        MemorySegment expected = MemorySegment.ofArray(new byte[(int) pool.byteSize()]);
        expected.fill((byte) 0x5A);
        MemorySegment.copy(MemorySegment.ofArray(value), 0, expected, block, length);
        assertArrayEquals(expected.toArray(ValueLayout.JAVA_BYTE), pool.toArray(ValueLayout.JAVA_BYTE),
                "a bare block holds the value and nothing else");
        assertTrue(f.frameWhole(pool, block, c));
        assertFalse(ValueFormat.v3(length - 1, true).frameWhole(pool, block, c), "a bare block over the pool's value size");
        assertEquals(c - 1, ValueClasses.classOf(length - ValueClasses.HEADER_BYTES), "the framed class of the same block");
    }
}
