package org.gphash.table;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;

import org.gphash.error.PoolFormatException;
import org.gphash.format.HeapChunk;
import org.junit.jupiter.api.Test;

/**
 * Blocks taken from the value heap many at a time ({@link ValueHeap#allocateNear}) and given back
 * many at a time ({@link ValueHeap#freeAll}), as a CPU batch's rounds and the epoch gate do: the
 * reserve is left, no block is handed out twice, and the free count ends where it started.
 */
class HeapGrantsTest {

    private static final int STRIDE = 128;

    private static ValueHeap heap(long blocks) {
        ValueHeap h = new ValueHeap(STRIDE, List.of(new HeapChunk(4096, blocks * STRIDE)));
        h.startRebuild();
        h.finishRebuild();
        return h;
    }

    @Test
    void aGrantLeavesTheReserveAndOnlyASingleAllocationTakesIt() {
        ValueHeap heap = heap(1000);
        long[] out = new long[1000];
        int got = heap.allocateNear(out, 1000, ValueHeap.UPDATE_RESERVE);
        assertEquals(1000 - ValueHeap.UPDATE_RESERVE, got);
        assertEquals(ValueHeap.UPDATE_RESERVE, heap.freeBlocks());
        assertEquals(got, java.util.Arrays.stream(out, 0, got).distinct().count(), "a block handed out twice");
        for (int i = 0; i < got; i++) {
            assertTrue(heap.isBlock(out[i]), "not a block: " + out[i]);
        }
        assertEquals(0, heap.allocateNear(out, 1, ValueHeap.UPDATE_RESERVE), "a grant dipped into the reserve");
        assertEquals(-1, heap.allocate(ValueHeap.UPDATE_RESERVE));
        long reserve = heap.allocate(0);
        assertTrue(heap.isBlock(reserve), "an update may take a reserve block");
        heap.freeAll(out, 0, got);
        heap.free(reserve);
        assertEquals(1000, heap.freeBlocks());
    }

    @Test
    void aBlockFreedTwiceIsRefusedAndTheOnesBeforeItAreCountedFree() {
        ValueHeap heap = heap(256);
        long[] out = new long[10];
        assertEquals(10, heap.allocateNear(out, 10, 0));
        heap.free(out[5]);
        PoolFormatException e = assertThrows(PoolFormatException.class, () -> heap.freeAll(out, 0, 10));
        assertTrue(e.getMessage().contains("freed twice"), e.getMessage());
        assertEquals(256 - 10 + 1 + 5, heap.freeBlocks(), "the five freed before the bad one are free");
    }

    @Test
    void threadsTakingAndGivingBackGrantsNeverShareABlock() throws Exception {
        ValueHeap heap = heap(4096);
        Set<Long> held = ConcurrentHashMap.newKeySet();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            int seed = t;
            threads.add(Thread.ofPlatform().start(() -> {
                SplittableRandom r = new SplittableRandom(seed);
                long[] out = new long[64];
                try {
                    for (int round = 0; round < 2000; round++) {
                        int got = heap.allocateNear(out, 1 + r.nextInt(64), ValueHeap.UPDATE_RESERVE);
                        for (int i = 0; i < got; i++) {
                            if (!held.add(out[i])) {
                                throw new AssertionError("block " + out[i] + " handed to two threads at once");
                            }
                        }
                        for (int i = 0; i < got; i++) {
                            held.remove(out[i]);
                        }
                        heap.freeAll(out, 0, got);
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }));
        }
        for (Thread t : threads) {
            t.join();
        }
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
        assertEquals(4096, heap.freeBlocks());
        long[] all = new long[4096];
        assertEquals(4096, heap.allocateNear(all, 4096, 0), "every block is free again");
    }
}
