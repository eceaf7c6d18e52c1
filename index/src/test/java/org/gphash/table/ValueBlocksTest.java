package org.gphash.table;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.LongRange;
import org.gphash.format.ValueClasses;
import org.junit.jupiter.api.Test;

/** Format 3's values in blocks of their class, behind their headers (issue 53), against a plain map. */
class ValueBlocksTest {

    private static final int SEG = SizeClassHeap.SEGMENT_BYTES;

    /** Where a key's value lies now. */
    private record Ref(long offset, int valueClass) {
    }

    private static ValueBlocks blocks(Arena arena, int segments) {
        SizeClassHeap heap = new SizeClassHeap();
        heap.addRegion(SEG, (long) segments * SEG);
        return new ValueBlocks(arena.allocate((long) (segments + 1) * SEG, 16), heap);
    }

    /**
     * Values of random lengths (0 B to 3 KB mostly, now and then 20-70 KB, which take runs of whole
     * segments) written, rewritten with another length (the new block first, then the old one freed,
     * as an update does), deleted, and read back: every read gives the map's bytes and length.
     */
    @Property(tries = 60)
    void valuesOfAnyLengthReadBackAsWritten(@ForAll @LongRange(min = 1, max = Long.MAX_VALUE) long seed) {
        Random random = new Random(seed);
        try (Arena arena = Arena.ofConfined()) {
            SizeClassHeap heap = new SizeClassHeap();
            heap.addRegion(SEG, 96L * SEG);
            ValueBlocks values = new ValueBlocks(arena.allocate(97L * SEG, 16), heap);
            Map<Integer, byte[]> model = new HashMap<>();
            Map<Integer, Ref> refs = new HashMap<>();
            MemorySegment out = arena.allocate(ValueClasses.MAX_VALUE_BYTES);
            for (int step = 0; step < 400; step++) {
                int key = random.nextInt(60);
                if (random.nextInt(4) == 0 && refs.containsKey(key)) {
                    Ref r = refs.remove(key);
                    values.free(r.offset(), r.valueClass());
                    model.remove(key);
                } else {
                    int length = random.nextInt(30) == 0 ? 20_000 + random.nextInt(50_000) : random.nextInt(3000);
                    byte[] v = new byte[length];
                    random.nextBytes(v);
                    long at = values.write(MemorySegment.ofArray(v), 0, length, random.nextInt());
                    if (at < 0) {
                        continue;  // no room in the test's heap: nothing was written
                    }
                    Ref old = refs.put(key, new Ref(at, ValueClasses.classOf(length)));
                    if (old != null) {
                        values.free(old.offset(), old.valueClass());
                    }
                    model.put(key, v);
                }
                for (Map.Entry<Integer, Ref> e : refs.entrySet()) {
                    byte[] want = model.get(e.getKey());
                    int got = values.read(e.getValue().offset(), e.getValue().valueClass(), out, 0);
                    assertEquals(want.length, got, "key " + e.getKey());
                    assertArrayEquals(want, out.asSlice(0, got).toArray(ValueLayout.JAVA_BYTE), "key " + e.getKey());
                }
            }
            for (Ref r : refs.values()) {
                values.free(r.offset(), r.valueClass());
            }
            assertEquals(0, heap.heldBytes(), "every segment back once every value is freed");
        }
    }

    /** A block whose header no value of its class could have is never read: -1, and nothing copied. */
    @Test
    void aBlockWithATornHeaderIsNotRead() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment pool = arena.allocate(5L * SEG, 16);
            SizeClassHeap heap = new SizeClassHeap();
            heap.addRegion(SEG, 4L * SEG);
            ValueBlocks values = new ValueBlocks(pool, heap);
            byte[] v = new byte[100];
            new Random(1).nextBytes(v);
            long at = values.write(MemorySegment.ofArray(v), 0, v.length, 77);
            int c = ValueClasses.classOf(100);
            assertEquals(100, values.length(at, c));
            assertEquals(77, values.checksum(at));
            MemorySegment out = arena.allocate(200);
            for (long torn : new long[] {0xFFFF_FFFF_FFFF_FFFFL, 5000L, 0L, 1_000_000L}) {
                pool.set(ValueLayout.JAVA_LONG_UNALIGNED, at, torn);
                out.fill((byte) 9);
                assertEquals(-1, values.read(at, c, out, 0), "header " + Long.toHexString(torn));
                assertEquals(9, out.get(ValueLayout.JAVA_BYTE, 0), "nothing copied");
            }
        }
    }

    /**
     * A block freed and taken by a value of another class is not read as the old class's value: a
     * reader that still holds the old word gets -1.
     */
    @Test
    void aBlockTakenByAnotherClassIsNotReadAsTheOldOne() {
        try (Arena arena = Arena.ofConfined()) {
            ValueBlocks values = blocks(arena, 4);
            long first = values.write(MemorySegment.ofArray(new byte[100]), 0, 100, 0);
            int c = ValueClasses.classOf(100);
            values.free(first, c);  // its segment, now empty, goes back to the pool
            long second = values.write(MemorySegment.ofArray(new byte[20]), 0, 20, 0);
            assertEquals(first, second, "the same bytes, taken by a value of another class");
            assertEquals(-1, values.read(first, c, arena.allocate(200), 0));
            assertEquals(20, values.length(second, ValueClasses.classOf(20)));
        }
    }

    @Test
    void badSizesAreRefusedAndAFullHeapWritesNothing() {
        try (Arena arena = Arena.ofConfined()) {
            SizeClassHeap heap = new SizeClassHeap();
            heap.addRegion(SEG, 2L * SEG);
            assertThrows(IllegalArgumentException.class, () -> new ValueBlocks(arena.allocate(SEG, 16), heap),
                    "a pool smaller than its heap");
            ValueBlocks values = new ValueBlocks(arena.allocate(3L * SEG, 16), heap);
            MemorySegment big = arena.allocate(ValueClasses.MAX_VALUE_BYTES + 1L);
            assertThrows(IllegalArgumentException.class, () -> values.write(big, 0, ValueClasses.MAX_VALUE_BYTES + 1, 0));
            assertEquals(-1, values.write(big, 0, 200_000, 0), "no run of four segments in two");
            List<Long> taken = new ArrayList<>();
            for (long at; (at = values.write(big, 0, 4000, 0)) > 0; ) {
                taken.add(at);
            }
            assertEquals(2 * (SEG / ValueClasses.blockBytes(ValueClasses.classOf(4000))), taken.size(), "both segments filled");
        }
    }
}
