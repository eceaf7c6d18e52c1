package org.gphash.index;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.util.OptionalLong;

import org.gphash.Backend;
import org.gphash.GPHashConfig;
import org.gphash.Outcome;
import org.gphash.TestPools;
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
        GPHashConfig config = new GPHashConfig(pools.pool("r.pool"), 8, 128, 0, 0, 0, 16, Long.MAX_VALUE, Backend.CPU,
                false, OptionalLong.of(3), CrashHook.NONE);
        try (CpuEngine engine = CpuEngine.create(config)) {
            CpuTable table = engine.table();
            PoolHeader before = table.headers.current();
            long bottom = before.levelOffsets()[0];
            long bottomBytes = before.bucketsInLevel(0) * before.geometry().bucketSize();
            long blocksBefore = table.heap.totalBlocks();
            long key = 0;
            while (table.headers.current().resizes() == 0) {
                engine.insert(CrashPointTest.key(key++), MemorySegment.ofArray(new byte[128]));
            }
            PoolHeader after = table.headers.current();
            assertEquals(before.topLog2() + 1, after.topLog2());
            assertEquals(before.geometry().levels(), after.levelOffsets().length, "still two levels");
            assertEquals(before.levelOffsets()[1], after.levelOffsets()[0], "the old top level is the new bottom level");
            assertTrue(after.heapChunks().contains(new HeapChunk(bottom, bottomBytes)), "old bottom level joined the heap: " + after);
            assertEquals(blocksBefore + bottomBytes / 128, table.heap.totalBlocks());
            for (long k = 0; k < key; k++) {
                assertEquals(Outcome.FOUND, engine.get(CrashPointTest.key(k), MemorySegment.ofArray(new byte[128])));
            }
            assertTrue(engine.verify().sound());
        }
    }

    @Test
    void manyResizesKeepEveryItemAndTheHeaderBounded() {
        GPHashConfig config = new GPHashConfig(pools.pool("m.pool"), 8, 16, 0, 0, 0, 1, Long.MAX_VALUE, Backend.CPU,
                false, OptionalLong.of(4), CrashHook.NONE);
        try (CpuEngine engine = CpuEngine.create(config)) {
            for (long k = 0; k < 50_000; k++) {
                engine.insert(CrashPointTest.key(k), MemorySegment.ofArray(new byte[16]));
            }
            PoolHeader h = engine.table().headers.current();
            assertTrue(h.resizes() >= 10, "resized " + h.resizes() + " times");
            assertTrue(h.heapChunks().size() < PoolHeader.MAX_HEAP_CHUNKS / 2, "heap chunks: " + h.heapChunks().size());
            assertEquals(50_000, engine.stats().size());
            assertTrue(engine.verify().sound());
        }
    }
}
