package org.gphash.table;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;

import org.gphash.Backend;
import org.gphash.GPHashConfig;
import org.gphash.GPHashIndex;
import org.gphash.Geometry;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.error.PoolFormatException;
import org.gphash.format.MetaFormat;
import org.gphash.format.SlotMeta;
import org.gphash.format.ValueClasses;
import org.gphash.index.CpuOperations;
import org.gphash.index.api.TestPools;
import org.gphash.persistence.PoolFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The Java half of recovery by class (the GPU's recovery kernels on a format 3 pool, issue 53): the
 * passes of an engine with kernels ({@link KernelPasses}) rebuild format 3's heap from the units and
 * segment classes the kernels mark ({@link TableKernels#markValueSegments}), as a clean close's record
 * is restored. Here the kernels are Java loops over the mapped pool, so this runs in CI; the GPU's own
 * ({@code mark_level} with {@code kScanByClass}) run in {@code FormatThreeOnGpuTest} on the GPU machine.
 * A pool of values of many lengths, left without a close record, opens with every value at its length
 * and its heap hands out only free blocks after; a mark that is no block of its segment's class is
 * refused as corruption before anything is written. (Two classes in one segment the kernels count
 * themselves, {@code kOtherClasses}.)
 */
class RecoveryBySegmentClassTest {

    private static final int VS = 600;
    private static final int UNIT = 16;
    private static final int UNITS_PER_SEGMENT = SizeClassHeap.SEGMENT_BYTES / UNIT;

    private final TestPools pools = TestPools.create();

    @AfterEach
    void cleanUp() {
        pools.close();
    }

    /** Kernels as Java loops: recovery finds nothing to clear (the image is of finished operations) and marks by class. */
    private static final class JavaMarks implements TableKernels {
        PoolFile file;
        Geometry geometry;
        /** Whether to report one mark a unit off its block's start: corruption. */
        final boolean misplaced;

        JavaMarks(boolean misplaced) {
            this.misplaced = misplaced;
        }

        @Override
        public void attach(PoolFile file, Geometry geometry, long[] seeds, int formatVersion) {
            this.file = file;
            this.geometry = geometry;
        }

        @Override
        public boolean supportsFormat(int version) {
            return true;
        }

        @Override
        public RecoveryCounts countBrokenAndDuplicates(TableLayout layout) {
            return new RecoveryCounts(0, 0, 0);
        }

        @Override
        public RecoveryCounts clearBrokenAndDuplicates(TableLayout layout) {
            return new RecoveryCounts(0, 0, 0);
        }

        @Override
        public MarkedBlocks markValueBlocks(TableLayout layout, HeapLayout heap, boolean validItemsOnly) {
            throw new UnsupportedOperationException("format 3 marks by class");
        }

        @Override
        public MarkedSegments markValueSegments(TableLayout layout, long[] segmentOffsets, boolean validItemsOnly) {
            MemorySegment pool = file.segment();
            long[] bits = new long[(int) (((long) segmentOffsets.length * UNITS_PER_SEGMENT + 63) >>> 6)];
            byte[] classes = new byte[segmentOffsets.length];
            Arrays.fill(classes, (byte) -1);
            long items = 0;
            for (int d = 0; d < layout.levelCount(); d++) {
                for (long b = 0; b < layout.bucketsAtDepth(d); b++) {
                    for (int s = 0; s < geometry.slotsPerBucket(); s++) {
                        long slot = layout.levelOffset(d) + b * geometry.bucketSize() + (long) s * geometry.slotSize();
                        long meta = Slots.getMeta(pool, slot);
                        if (!SlotMeta.isItem(meta)) {
                            continue;
                        }
                        long offset = MetaFormat.V3.valueOffset(meta);
                        int seg = Arrays.binarySearch(segmentOffsets, offset);
                        seg = seg >= 0 ? seg : -seg - 2;
                        long unit = (long) seg * UNITS_PER_SEGMENT + (offset - segmentOffsets[seg]) / UNIT;
                        bits[(int) (unit >>> 6)] |= 1L << unit;
                        classes[seg] = (byte) MetaFormat.V3.valueClass(meta);
                        items++;
                    }
                }
            }
            if (misplaced) {
                // One mark a unit past its block's start, in a segment of blocks wider than a unit: an item
                // whose word names an offset inside another block (what the kernels' unit check lets by).
                for (long unit = 0; unit < (long) bits.length * 64; unit++) {
                    int seg = (int) (unit / UNITS_PER_SEGMENT);
                    if ((bits[(int) (unit >>> 6)] & (1L << unit)) != 0 && classes[seg] >= 0
                            && ValueClasses.blockBytes(classes[seg]) > UNIT && (unit + 1) % UNITS_PER_SEGMENT != 0
                            && (bits[(int) ((unit + 1) >>> 6)] & (1L << (unit + 1))) == 0) {
                        bits[(int) (unit >>> 6)] &= ~(1L << unit);
                        bits[(int) ((unit + 1) >>> 6)] |= 1L << (unit + 1);
                        break;
                    }
                }
            }
            return new MarkedSegments(bits, classes, items);
        }

        @Override
        public RehashResult rehashBottom(TableLayout layout) {
            throw new UnsupportedOperationException("no resize in these tests");
        }
    }

    private static GPHashConfig config(Path p) {
        return GPHashIndex.builder(p).backend(Backend.CPU).keySize(8).valueSize(VS).poolFormat(3).initialCapacity(20_000)
                .seed(7).config();
    }

    private static MemorySegment key(long k) {
        return MemorySegment.ofArray(TestPools.longKey(k));
    }

    /** Inserts keys {@code from..to-1}, each with a value of 0 to 600 random bytes, into the pool and {@code model}. */
    private static void insertRandom(CpuOperations ops, long from, long to, Random r, Map<Long, byte[]> model) {
        for (long k = from; k < to; k++) {
            byte[] v = new byte[r.nextInt(VS + 1)];
            r.nextBytes(v);
            assertEquals(Outcome.INSERTED.code(), ops.write(OpKind.PUT, key(k), 0, MemorySegment.ofArray(v), 0, v.length,
                    null, 0, 0));
            model.put(k, v);
        }
    }

    /** A pool of 6,000 values of 0 to 600 bytes, some deleted, copied while open: a crash image; the model of it. */
    private Map<Long, byte[]> crashImage(Path live, Path image) throws Exception {
        Map<Long, byte[]> model = new HashMap<>();
        Random r = new Random(5353);
        PoolTable pool = PoolTable.create(config(live), null);
        try {
            CpuOperations ops = CpuOperations.on(pool);
            insertRandom(ops, 0, 6_000, r, model);
            for (long k = 0; k < 6_000; k += 7) {
                assertEquals(Outcome.DELETED.code(), ops.write(OpKind.DELETE, key(k), 0, null, 0, 0, null, 0, 0));
                model.remove(k);
            }
            Files.copy(live, image);  // no close record: the open runs recovery's passes
        } finally {
            pool.close();
        }
        return model;
    }

    @Test
    void aPoolOfManyClassesComesBackFromTheKernelsMarksAndTakesOnlyFreeBlocksAfter() throws Exception {
        Path image = pools.pool("image.pool");
        Map<Long, byte[]> model = crashImage(pools.pool("live.pool"), image);
        PoolTable pool = PoolTable.open(config(image), new JavaMarks(false));
        try {
            assertTrue(!pool.recovery().previousShutdownClean() && !pool.recovery().fromCloseRecord(),
                    "the image has no close record: recovery's passes ran");
            CpuOperations ops = CpuOperations.on(pool);
            MemorySegment out = MemorySegment.ofArray(new byte[VS]);
            // New values of new keys: a block the rebuild left free while a value lives in it would be overwritten.
            insertRandom(ops, 6_000, 9_000, new Random(11), model);
            for (Map.Entry<Long, byte[]> e : model.entrySet()) {
                assertEquals(Outcome.FOUND.code(), ops.get(key(e.getKey()), 0, out, 0), "key " + e.getKey());
                byte[] want = e.getValue();
                assertEquals(want.length, ops.lastReadLength(), "key " + e.getKey() + ": its length");
                assertArrayEquals(want, Arrays.copyOf(out.toArray(ValueLayout.JAVA_BYTE), want.length),
                        "key " + e.getKey());
            }
        } finally {
            pool.close();
        }
    }

    @Test
    void aMarkThatIsNoBlockOfItsSegmentsClassIsRefusedBeforeAnyWrite() throws Exception {
        Path image = pools.pool("image.pool");
        crashImage(pools.pool("live.pool"), image);
        byte[] before = Files.readAllBytes(image);
        PoolFormatException e = assertThrows(PoolFormatException.class,
                () -> PoolTable.open(config(image), new JavaMarks(true)).close());
        assertEquals(PoolFormatException.Reason.CORRUPT, e.reason());
        assertTrue(e.getMessage().contains("nothing was changed"), e.getMessage());
        assertArrayEquals(before, Files.readAllBytes(image), "a refused recovery wrote to the pool");
    }
}
