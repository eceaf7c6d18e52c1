package org.gphash.index;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import org.gphash.Backend;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.bktcache.BktCacheConfig;
import org.gphash.index.api.TestPools;
import org.gphash.spi.CrashHook;
import org.gphash.table.PoolTable;
import org.gphash.table.VerifyReport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The hand-off the GPU engine's host writes rely on, without a GPU: host threads write with
 * {@link CpuOperations} side by side; then the owner takes the pool back, reclaims what they retired
 * ({@link PoolTable#reclaimRetired}) and keeps the heap's bitmap elsewhere (as the GPU does), growing
 * the heap or the table where a write needed it; then lends the bitmap back. After every hand-off the
 * bitmap taken marks exactly the blocks live items hold (no block stuck in reclamation, none shared),
 * and every thread's writes are there.
 */
class CpuOperationsHandoffTest {

    private static final int VS = 16;
    private final TestPools pools = TestPools.create();

    @AfterEach
    void cleanUp() {
        pools.close();
    }

    private static MemorySegment key(long k) {
        return CrashPointTest.key(k);
    }

    private static MemorySegment value(long k, int version) {
        byte[] v = new byte[VS];
        Arrays.fill(v, (byte) (k * 17 + version));
        return MemorySegment.ofArray(v);
    }

    private static long usedBlocks(long[] bits) {
        long n = 0;
        for (long w : bits) {
            n += Long.bitCount(w);
        }
        return n;
    }

    @Test
    void theBitmapTakenBackMarksExactlyTheLiveItemsAndNoWriteIsLost() throws Exception {
        PoolTable pool = PoolTable.create(Configs.of(pools.pool("handoff.pool"), 8, VS, 0, 0, 0, 256, Long.MAX_VALUE,
                Backend.CPU, false, OptionalLong.of(3), CrashHook.NONE, BktCacheConfig.DISABLED), null);
        try {
            CpuOperations ops = CpuOperations.on(pool);
            int threads = 4;
            List<Map<Long, MemorySegment>> models = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                models.add(new HashMap<>());
            }
            int[] versions = new int[threads];
            for (int round = 0; round < 30; round++) {
                // The host's turn: threads write side by side, each on keys of its own, until one needs the owner.
                AtomicBoolean needsOwner = new AtomicBoolean();
                AtomicReference<Throwable> failure = new AtomicReference<>();
                CountDownLatch start = new CountDownLatch(1);
                List<Thread> all = new ArrayList<>();
                int r = round;
                for (int t = 0; t < threads; t++) {
                    int id = t;
                    all.add(Thread.ofPlatform().start(() -> {
                        try {
                            start.await();
                            Random random = new Random(r * 31L + id);
                            Map<Long, MemorySegment> model = models.get(id);
                            for (int n = 0; n < 400 && !needsOwner.get(); n++) {
                                long k = ((long) id << 32) + random.nextInt(300);
                                MemorySegment v = value(k, ++versions[id]);
                                OpKind kind = random.nextInt(4) == 0 ? OpKind.DELETE : OpKind.PUT;
                                int code = ops.write(kind, key(k), 0, v, 0, null, 0);
                                if (code == CpuOperations.NEEDS_OWNER) {
                                    needsOwner.set(true);
                                    break;
                                }
                                Outcome o = Outcome.ofCode(code);
                                if (kind == OpKind.PUT) {
                                    assertTrue(o == Outcome.INSERTED || o == Outcome.UPDATED, o.toString());
                                    model.put(k, v);
                                } else {
                                    assertEquals(model.remove(k) != null ? Outcome.DELETED : Outcome.NOT_FOUND, o);
                                }
                            }
                        } catch (Throwable e) {
                            failure.compareAndSet(null, e);
                        }
                    }));
                }
                start.countDown();
                for (Thread th : all) {
                    th.join();
                }
                if (failure.get() != null) {
                    throw new AssertionError(failure.get());
                }
                // The owner's turn: what the host retired is reclaimed, and the bitmap it takes marks
                // exactly the live items' blocks.
                pool.reclaimRetired();
                long[] taken = pool.heapUsedBits();
                long live = models.stream().mapToLong(Map::size).sum();
                assertEquals(live, pool.size(), "items, round " + round);
                assertEquals(live, usedBlocks(taken), "blocks in use in the bitmap taken back, round " + round);
                if (needsOwner.get()) {  // what only the owner may do: grow the heap, or resize the table
                    if (pool.freeBlocks() < 2 * threads + org.gphash.table.ValueHeap.UPDATE_RESERVE) {
                        pool.ensureFreeBlocks(pool.totalBlocks());
                    } else {
                        pool.resize(pool.layout());
                    }
                }
                pool.replaceHeapUsedBits(pool.heapUsedBits());  // lent again: the host takes the bitmap as the owner left it
                VerifyReport report = pool.verify();
                assertTrue(report.sound(), report.toString());
            }
            MemorySegment out = MemorySegment.ofArray(new byte[VS]);
            for (Map<Long, MemorySegment> model : models) {
                for (Map.Entry<Long, MemorySegment> e : model.entrySet()) {
                    assertEquals(Outcome.FOUND.code(), ops.get(key(e.getKey()), 0, out, 0), "key " + e.getKey());
                    assertEquals(-1, out.mismatch(e.getValue()));
                }
            }
            org.gphash.IndexStats stats = pool.stats(Backend.CPU);
            assertTrue(stats.resizes() > 0, "the owner resized the table between turns: " + stats);
        } finally {
            pool.close();
        }
    }
}
