package org.gphash.index;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.util.OptionalLong;

import org.gphash.Backend;
import org.gphash.GPHashConfig;
import org.gphash.Outcome;
import org.gphash.bktcache.BktCacheConfig;
import org.gphash.format.HeapChunk;
import org.gphash.format.PoolHeader;
import org.gphash.index.api.TestPools;
import org.gphash.spi.CrashHook;
import org.gphash.spi.CrashPoint;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Resizing (GPHash §3.2.3): a new top level, the bottom level emptied, and its space reused. */
class ResizeTest {

    private final TestPools pools = TestPools.create();

    @AfterEach
    void cleanUp() {
        pools.close();
    }

    @Test
    void theEmptiedBottomLevelBecomesValueHeapSpace() {
        GPHashConfig config = Configs.of(pools.pool("r.pool"), 8, 128, 0, 0, 0, 16, Long.MAX_VALUE, Backend.CPU,
                false, OptionalLong.of(3), CrashHook.NONE, BktCacheConfig.DISABLED);
        try (CpuEngine engine = CpuEngine.create(config)) {
            CpuTable table = engine.table();
            PoolHeader before = table.table.headers.current();
            long bottom = before.levelOffsets()[0];
            long bottomBytes = before.bucketsInLevel(0) * before.geometry().bucketSize();
            long blocksBefore = table.table.heap.totalBlocks();
            long key = 0;
            while (table.table.headers.current().resizes() == 0) {
                engine.insert(CrashPointTest.key(key++), MemorySegment.ofArray(new byte[128]));
            }
            PoolHeader after = table.table.headers.current();
            assertEquals(before.topLog2() + 1, after.topLog2());
            assertEquals(before.geometry().levels(), after.levelOffsets().length, "still two levels");
            assertEquals(before.levelOffsets()[1], after.levelOffsets()[0], "the old top level is the new bottom level");
            assertTrue(after.heapChunks().contains(new HeapChunk(bottom, bottomBytes)), "old bottom level joined the heap: " + after);
            assertEquals(blocksBefore + bottomBytes / 128, table.table.heap.totalBlocks());
            for (long k = 0; k < key; k++) {
                assertEquals(Outcome.FOUND, engine.get(CrashPointTest.key(k), MemorySegment.ofArray(new byte[128])));
            }
            assertTrue(engine.verify().sound());
        }
    }

    @Test
    void manyResizesKeepEveryItemAndTheHeaderBounded() {
        GPHashConfig config = Configs.of(pools.pool("m.pool"), 8, 16, 0, 0, 0, 1, Long.MAX_VALUE, Backend.CPU,
                false, OptionalLong.of(4), CrashHook.NONE, BktCacheConfig.DISABLED);
        try (CpuEngine engine = CpuEngine.create(config)) {
            for (long k = 0; k < 50_000; k++) {
                engine.insert(CrashPointTest.key(k), MemorySegment.ofArray(new byte[16]));
            }
            PoolHeader h = engine.table().table.headers.current();
            assertTrue(h.resizes() >= 10, "resized " + h.resizes() + " times");
            assertTrue(h.heapChunks().size() < PoolHeader.MAX_HEAP_CHUNKS / 2, "heap chunks: " + h.heapChunks().size());
            assertEquals(50_000, engine.stats().size());
            assertTrue(engine.verify().sound());
        }
    }

    private static GPHashConfig tinyBuckets(java.nio.file.Path path, CrashHook hook) {
        // One level, two hashes, one slot per bucket: a rehashed item has two one-slot buckets to go
        // to in the new level, which items from other buckets compete for, so rehashing into the new
        // level alone fails often and the resize must add more levels. (With one hash a rehash only
        // splits buckets and cannot fail.)
        return Configs.of(path, 8, 128, 1, 2, 1, 4, Long.MAX_VALUE, Backend.CPU, false, OptionalLong.of(11), hook, BktCacheConfig.DISABLED);
    }

    @Test
    void aResizeThatCannotPlaceAnItemAddsAnotherLevelAndStillLosesNothing() {
        CrashPointTest.ArmedHook counter = new CrashPointTest.ArmedHook();
        java.nio.file.Path path = pools.pool("tiny.pool");
        int n = 3000;
        try (CpuEngine engine = CpuEngine.create(tinyBuckets(path, counter))) {
            for (long k = 0; k < n; k++) {
                assertEquals(Outcome.INSERTED, engine.insert(CrashPointTest.key(k), MemorySegment.ofArray(CrashPointTest.value(k, 1))));
            }
            assertTrue(engine.verify().sound());
            assertEquals(1, engine.table().layout().levelCount());
        }
        int levelsAdded = counter.counts.getOrDefault(CrashPoint.RESIZE_LEVEL_ALLOCATED, 0);
        int resizes = counter.counts.getOrDefault(CrashPoint.RESIZE_STARTED, 0);
        assertTrue(levelsAdded > resizes, "some resize had to add an extra level: " + counter.counts);
        java.util.Map<Long, Long> model = new java.util.HashMap<>();
        for (long k = 0; k < n; k++) {
            model.put(k, 1L);
        }
        CrashPointTest.checkRecovered(path, model, new CrashPointTest.Op(CrashPointTest.Kind.UPDATE, -1, 0), false);
    }

    @org.junit.jupiter.params.ParameterizedTest(name = "crash at {0} #{1}")
    @org.junit.jupiter.params.provider.CsvSource({
        "RESIZE_LEVEL_ALLOCATED, 3", "RESIZE_LEVEL_ALLOCATED, 6", "RESIZE_LEVEL_ALLOCATED, 9",
        "HEADER_FIRST_COPY_WRITTEN, 5", "HEADER_FIRST_COPY_WRITTEN, 12", "RESIZE_ITEM_COPIED, 4",
        "RESIZE_ITEM_MOVED, 4", "RESIZE_REHASHED, 3", "RESIZE_COMMITTED, 3", "RESIZE_COMMITTED, 5"})
    void aCrashInAResizeWithExtraLevelsIsRecovered(CrashPoint point, int k) {
        java.nio.file.Path path = pools.pool("tinycrash.pool");
        CrashPointTest.ArmedHook hook = new CrashPointTest.ArmedHook();
        java.util.Map<Long, Long> model = new java.util.HashMap<>();
        CpuEngine engine = CpuEngine.create(tinyBuckets(path, hook));
        hook.arm(point, k);
        CrashPointTest.Op inFlight = null;
        for (long key = 0; key < 3000 && inFlight == null; key++) {
            try {
                engine.insert(CrashPointTest.key(key), MemorySegment.ofArray(CrashPointTest.value(key, 1)));
                model.put(key, 1L);
            } catch (CrashPointTest.SimulatedCrash crash) {
                engine.abandon();
                inFlight = new CrashPointTest.Op(CrashPointTest.Kind.INSERT, key, 1);
            }
        }
        org.junit.jupiter.api.Assertions.assertNotNull(inFlight, point + " #" + k + " was never reached");
        CrashPointTest.checkRecovered(path, model, inFlight);
    }
}
