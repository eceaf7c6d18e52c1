package org.gphash.index.api;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;

import org.gphash.Backend;
import org.gphash.GPHashIndex;
import org.gphash.PoolConfigMismatchException;
import org.gphash.format.MetaFormat;
import org.gphash.format.PoolHeader;
import org.gphash.format.SlotMeta;
import org.gphash.format.ValueBlockHeader;
import org.gphash.format.ValueClasses;
import org.gphash.table.PoolInspector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A format 3 pool made on request by the CPU engine (issue 53, step 3: one value size, values in a
 * heap of size classes): its header says format 3 and every value lies behind its block header, or
 * alone in a bare block where the value size is a block size (framed where the pool keeps item
 * checksums, which the header holds); it survives growth, resizes and reopens; open refuses a pool of
 * another format than the one asked for; the tools' reader opens it (recovery's FormatThreeToolsTest
 * runs the tools).
 * The map's behaviour on format 3 is {@link ModelProperties}'s (every call, batch, reopen and crash).
 */
class FormatThreePoolTest {

    private static final int VALUE = 128;

    /**
     * 128 bytes is a block size: the values go bare, in blocks of 128 (the close record names each
     * segment's class: a bare block has no header to). 120 bytes is not: each value goes behind its
     * header in a block of 128, of the framed class. With item checksums every value is framed (the
     * checksum is in the header).
     */
    @ParameterizedTest(name = "values of {0} bytes, item checksums {1}")
    @CsvSource({"128, false", "120, false", "128, true"})
    void aFormatThreePoolHoldsItsValuesThroughGrowthResizesAndReopens(int valueSize, boolean checksums) throws IOException {
        try (TestPools pools = TestPools.create()) {
            Path path = pools.pool("f3");
            int n = 20_000;  // from a capacity of 64: heap growths and table resizes on the way
            try (GPHashIndex index = GPHashIndex.builder(path).backend(Backend.CPU).keySize(8).valueSize(valueSize)
                    .itemChecksums(checksums).initialCapacity(64).poolFormat(3).create()) {
                for (long k = 0; k < n; k++) {
                    index.put(k, ModelProperties.value(k, 1, valueSize));
                }
                for (long k = 0; k < n; k += 3) {
                    index.put(k, ModelProperties.value(k, 2, valueSize));  // updates: new blocks, old ones reclaimed
                }
                assertTrue(index.stats().resizes() > 0, "the table resized: " + index.stats());
            }
            assertEquals(PoolHeader.FORMAT_3, headerVersion(path));
            try (GPHashIndex index = GPHashIndex.builder(path).open()) {
                assertTrue(index.lastRecovery().fromCloseRecord(), "a clean close's record, no scan: " + index.lastRecovery());
                assertEquals(n, index.size());
                for (long k = 0; k < n; k++) {
                    assertArrayEquals(ModelProperties.value(k, k % 3 == 0 ? 2 : 1, valueSize), index.get(k), "key " + k);
                }
            }
            int expectedClass = !checksums && ValueClasses.bareClassOf(valueSize) >= 0 ? ValueClasses.bareClassOf(valueSize)
                    : ValueClasses.classOf(valueSize);
            assertEquals(n, valuesLaidOutIn(path, valueSize, expectedClass),
                    "every value in a block of class " + expectedClass + ", behind a whole header where it is framed");
        }
    }

    /**
     * Values of any length (step 4) through every way out of the pool: single calls, a batch's gets
     * (each value at its length beside the fixed-width column, the rest of its place zeroed), a
     * read-modify-write's previous value, a cursor, and all of them again after a reopen from the close
     * record; a value over the value size is refused, a batch's values have the value size.
     */
    @Test
    void valuesOfAnyLengthComeBackAtTheirLengthFromCallsBatchesAndCursors() throws IOException {
        try (TestPools pools = TestPools.create()) {
            Path path = pools.pool("lengths");
            int max = 5000;
            int n = 3000;
            java.util.Map<Long, byte[]> model = new java.util.HashMap<>();
            try (GPHashIndex index = GPHashIndex.builder(path).backend(Backend.CPU).keySize(8).valueSize(max)
                    .initialCapacity(64).poolFormat(3).create()) {
                assertTrue(index.valueLengths());
                for (long k = 0; k < n; k++) {
                    byte[] v = ModelProperties.value(k, 1, (int) (k * 7919 % (max + 1)));
                    index.put(k, v);
                    model.put(k, v);
                }
                assertThrows(IllegalArgumentException.class, () -> index.put(1L, new byte[max + 1]));
                assertThrows(IllegalArgumentException.class, () -> index.newBatch(1).put(new byte[8], new byte[max + 1]),
                        "a batch's values have at most the value size");
                org.gphash.Batch fixed = org.gphash.Batch.create(8, max, 1);
                assertThrows(IllegalArgumentException.class, () -> fixed.put(new byte[8], new byte[10]),
                        "a batch made below the index takes values of the value size");
                org.gphash.Batch puts = index.newBatch(300);
                for (long k = n; k < n + 300; k++) {  // a batch of values of many lengths
                    byte[] v = ModelProperties.value(k, 1, (int) (k * 104729 % (max + 1)));
                    puts.put(k, v);
                    model.put(k, v);
                    assertEquals(v.length, puts.valueLength((int) (k - n)));
                }
                assertEquals(300, index.execute(puts).count(org.gphash.Outcome.INSERTED));
                everyWayOut(index, model, "before the close");
                org.gphash.Batch rmw = index.newBatch(1).readModifyWrite(5L, new byte[max]);
                org.gphash.BatchResult r = index.execute(rmw);
                assertArrayEquals(model.get(5L), r.value(0), "the value a read-modify-write replaced, at its length");
                model.put(5L, new byte[max]);
            }
            try (GPHashIndex index = GPHashIndex.builder(path).open()) {
                assertTrue(index.lastRecovery().previousShutdownClean());
                assertEquals(model.size(), index.lastRecovery().valueBlocksInUse());
                everyWayOut(index, model, "after the reopen");
            }
        }
    }

    private static void everyWayOut(GPHashIndex index, java.util.Map<Long, byte[]> model, String when) {
        int max = index.valueSize();
        org.gphash.Batch gets = index.newBatch(model.size());
        for (long k = 0; k < model.size(); k++) {
            gets.get(k);  // the keys are 0 .. size - 1
        }
        org.gphash.BatchResult r = index.execute(gets);
        // The same gets in a batch whose values each have a place of the value size (made below the index).
        org.gphash.Batch placed = org.gphash.Batch.create(8, max, model.size());
        for (long k = 0; k < model.size(); k++) {
            placed.get(k);
        }
        org.gphash.BatchResult inPlaces = index.execute(placed);
        byte[] out = new byte[max];
        long packedBytes = 0;
        for (long k = 0; k < model.size(); k++) {
            byte[] v = model.get(k);
            assertArrayEquals(v, index.get(k), when + ": get of key " + k);
            assertEquals(v.length, index.read(longKey(k), MemorySegment.ofArray(out)), when + ": read's length, key " + k);
            assertArrayEquals(v, java.util.Arrays.copyOf(out, v.length));
            int i = (int) k;
            assertEquals(v.length, r.valueLength(i), when + ": the batch's length, key " + k);
            assertArrayEquals(v, r.value(i), when + ": the batch's value, key " + k);
            assertArrayEquals(v, r.values().asSlice(r.valueOffset(i), v.length).toArray(ValueLayout.JAVA_BYTE),
                    when + ": the batch's value where its offset says, key " + k);
            packedBytes += v.length;
            assertEquals(v.length, inPlaces.valueLength(i), when + ": the placed batch's length, key " + k);
            assertArrayEquals(v, inPlaces.value(i), when + ": the placed batch's value, key " + k);
            long zeros = inPlaces.values().asSlice((long) i * max + v.length, max - v.length).elements(ValueLayout.JAVA_BYTE)
                    .filter(b -> b.get(ValueLayout.JAVA_BYTE, 0) != 0).count();
            assertEquals(0, zeros, when + ": the rest of the placed batch's place zeroed, key " + k);
        }
        assertEquals(packedBytes, r.values().byteSize(), when + ": the results hold the values packed, nothing more");
        int seen = 0;
        try (org.gphash.Cursor c = index.cursor()) {
            while (c.next()) {
                byte[] v = model.get(c.longKey());
                assertArrayEquals(v, c.value(), when + ": the cursor's value of key " + c.longKey());
                assertEquals(v.length, c.valueSegment().byteSize());
                seen++;
            }
        }
        assertEquals(model.size(), seen, when + ": the cursor's entries");
    }

    private static MemorySegment longKey(long k) {
        return MemorySegment.ofArray(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(k).array());
    }

    @Test
    void openRefusesAPoolOfAnotherFormatThanAskedFor() throws IOException {
        try (TestPools pools = TestPools.create()) {
            Path two = pools.pool("two");
            Path three = pools.pool("three");
            GPHashIndex.builder(two).backend(Backend.CPU).valueSize(VALUE).create().close();
            GPHashIndex.builder(three).backend(Backend.CPU).valueSize(VALUE).poolFormat(3).create().close();
            byte[] before = Files.readAllBytes(three);
            PoolConfigMismatchException e = assertThrows(PoolConfigMismatchException.class,
                    () -> GPHashIndex.builder(three).poolFormat(2).open());
            assertTrue(e.getMessage().contains("poolFormat 2 was asked for but the pool has 3"), e.getMessage());
            assertArrayEquals(before, Files.readAllBytes(three), "a refused open writes nothing");
            assertThrows(PoolConfigMismatchException.class, () -> GPHashIndex.builder(two).poolFormat(3).open());
            GPHashIndex.builder(three).poolFormat(3).open().close();
        }
    }

    /** The tools' reader opens a format 3 pool (recovery's FormatThreeToolsTest runs the tools on it). */
    @Test
    void theToolsReaderOpensAFormatThreePool() throws IOException {
        try (TestPools pools = TestPools.create()) {
            Path path = pools.pool("tools");
            try (GPHashIndex index = GPHashIndex.builder(path).backend(Backend.CPU).valueSize(VALUE).poolFormat(3).create()) {
                index.put(1L, ModelProperties.value(1, 1, VALUE));
            }
            byte[] before = Files.readAllBytes(path);
            try (PoolInspector in = PoolInspector.open(path)) {
                assertEquals(PoolHeader.FORMAT_3, in.header().formatVersion());
                assertEquals(1, in.trustedCloseRecord().items(), "the close record, numbered as format 3 numbers blocks");
            }
            assertArrayEquals(before, Files.readAllBytes(path));
        }
    }

    /**
     * A format 3 word names offsets up to 32 TiB (its class field took a bit of the offset): a pool
     * that would need more is refused before anything is made, naming the limit, where format 2 (256
     * TiB) would pass this check.
     */
    @Test
    void aFormatThreePoolPastWhatAWordCanAddressIsRefusedBeforeAnythingIsMade() throws IOException {
        try (TestPools pools = TestPools.create()) {
            Path path = pools.pool("huge");
            long capacity = 1L << 38;  // about 44 TiB of table and heap
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> GPHashIndex.builder(path)
                    .backend(Backend.CPU).valueSize(VALUE).initialCapacity(capacity).poolFormat(3).create());
            assertTrue(e.getMessage().contains("a value offset can address")
                    && e.getMessage().contains(Long.toString(org.gphash.format.SlotMetaV3.MAX_OFFSET)), e.getMessage());
            assertTrue(Files.notExists(path), "nothing was created");
        }
    }

    @Test
    void onlyTwoAndThreeAreFormats() {
        assertThrows(IllegalArgumentException.class, () -> GPHashIndex.builder(Path.of("unused")).poolFormat(4));
        assertThrows(IllegalArgumentException.class, () -> GPHashIndex.builder(Path.of("unused")).poolFormat(1));
    }

    /** The format version of the header copy at the file's start. */
    private static int headerVersion(Path path) throws IOException {
        byte[] b = Files.readAllBytes(path);
        return ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).getInt(PoolHeader.OFF_VERSION);
    }

    /**
     * Counts the items whose meta word names a block of {@code valueClass} that holds, where the class
     * is framed, a header whole for it that gives the value size: what a format 2 pool never holds.
     */
    private static long valuesLaidOutIn(Path path, int valueSize, int valueClass) throws IOException {
        MemorySegment pool = MemorySegment.ofArray(Files.readAllBytes(path));
        PoolHeader h = PoolHeader.readFrom(pool, 0, path);
        MetaFormat meta = MetaFormat.of(PoolHeader.FORMAT_3);
        int slots = h.geometry().slotsPerBucket();
        int slotSize = h.geometry().slotSize();
        long[] levels = h.levelOffsets();
        long framed = 0;
        for (int d = 0; d < levels.length; d++) {
            for (long b = 0; b < h.bucketsInLevel(d); b++) {
                for (int i = 0; i < slots; i++) {
                    long word = pool.get(WORD, levels[d] + b * h.geometry().bucketSize() + (long) i * slotSize);
                    if (!SlotMeta.isItem(word)) {
                        continue;
                    }
                    if (meta.valueClass(word) != valueClass) {
                        continue;
                    }
                    long header = pool.get(WORD, meta.valueOffset(word));
                    if (ValueClasses.isBare(valueClass)
                            || ValueBlockHeader.wholeIn(header, valueClass) && ValueBlockHeader.length(header) == valueSize) {
                        framed++;
                    }
                }
            }
        }
        return framed;
    }

    private static final ValueLayout.OfLong WORD = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
}
