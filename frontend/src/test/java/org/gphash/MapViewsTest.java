package org.gphash;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import org.gphash.index.api.TestPools;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 28: two {@link GPHashMap} views over one index lost updates (14,845 of 20,000 merges
 * survived, a key had two putIfAbsent winners) because each view's striped locks were its own. The
 * maps now build on the index's conditional writes, atomic in the engine: any number of views and
 * direct index writes stay linearizable.
 */
class MapViewsTest {

    private static final int THREADS = 4;
    private final TestPools pools = TestPools.create();

    @AfterEach
    void cleanUp() {
        pools.close();
    }

    /** What one of {@link #THREADS} threads does, given its number. */
    @FunctionalInterface
    private interface ThreadBody {
        void run(int id) throws Exception;
    }

    /**
     * Runs {@code body} on {@link #THREADS} threads that start together, and fails with the first
     * thread's failure (an assertion in a thread fails the test, not only the thread).
     */
    private static void inThreads(ThreadBody body) throws InterruptedException {
        java.util.Queue<Throwable> failures = new java.util.concurrent.ConcurrentLinkedQueue<>();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            int id = t;
            threads.add(Thread.ofPlatform().start(() -> {
                try {
                    start.await();
                    body.run(id);
                } catch (Throwable e) {
                    failures.add(e);
                }
            }));
        }
        start.countDown();
        for (Thread t : threads) {
            t.join();
        }
        if (!failures.isEmpty()) {
            throw new AssertionError("a thread failed", failures.peek());
        }
    }

    /** A pool of 8-byte keys and values, with the coalescer in front or not. */
    private GPHashIndex index(String name, boolean coalesce) {
        GPHashIndex.Builder b = GPHashIndex.builder(pools.pool(name + "-" + coalesce + ".pool")).keySize(8).valueSize(8);
        if (coalesce) {
            b.coalescing(Coalescing.on(java.time.Duration.ofMillis(1), 4096));
        }
        return b.create();
    }

    private static byte[] longBytes(long v) {
        return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(0, v).array();
    }

    @Test
    void compareAndSetAndCompareAndDeleteOnTheIndex() {
        try (GPHashIndex index = GPHashIndex.builder(pools.pool("cas.pool")).keySize(8).valueSize(8).create()) {
            assertFalse(index.compareAndSet(1L, longBytes(0), longBytes(1)), "absent key swapped");
            index.put(1L, longBytes(5));
            assertFalse(index.compareAndSet(1L, longBytes(4), longBytes(6)), "swapped on another value");
            assertTrue(index.compareAndSet(1L, longBytes(5), longBytes(6)));
            assertArrayEquals(longBytes(6), index.get(1L));
            assertFalse(index.compareAndDelete(1L, longBytes(5)));
            assertTrue(index.compareAndDelete(1L, longBytes(6)));
            assertNull(index.get(1L));
            assertEquals(0, index.size());
        }
    }

    /** With and without the coalescer in front of the engine (its conditional writes bypass the queue). */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(booleans = {false, true})
    void twoViewsAndDirectWritesLoseNoUpdate(boolean coalesce) throws Exception {
        try (GPHashIndex index = index("views", coalesce)) {
            List<ConcurrentMap<Long, Long>> views = List.of(GPHashMap.of(index, Codec.longs(), Codec.longs()),
                    GPHashMap.of(index, Codec.longs(), Codec.longs()));
            int perThread = 2_500;
            int keys = 8;
            AtomicInteger directIncrements = new AtomicInteger();
            AtomicInteger[] winners = new AtomicInteger[200];
            for (int i = 0; i < winners.length; i++) {
                winners[i] = new AtomicInteger();
            }
            inThreads(id -> {
                for (int i = 0; i < perThread; i++) {
                    long key = i % keys;
                    views.get((id + i) % 2).merge(key, 1L, Long::sum);
                    if (i % 5 == 0) {
                        // A direct increment on the index, beside the maps.
                        for (;;) {
                            byte[] old = index.get(key);
                            if (old != null && index.compareAndSet(key, old, longBytes(
                                    ByteBuffer.wrap(old).order(ByteOrder.LITTLE_ENDIAN).getLong() + 1))) {
                                directIncrements.incrementAndGet();
                                break;
                            }
                        }
                    }
                }
                for (int k = 0; k < winners.length; k++) {
                    if (views.get((id + k) % 2).putIfAbsent(1_000L + k, (long) id) == null) {
                        winners[k].incrementAndGet();
                    }
                }
            });
            long sum = 0;
            for (long k = 0; k < keys; k++) {
                sum += views.get(0).get(k);
            }
            assertEquals((long) THREADS * perThread + directIncrements.get(), sum, "updates were lost");
            for (int k = 0; k < winners.length; k++) {
                assertEquals(1, winners[k].get(), "key " + (1_000 + k) + " had " + winners[k].get() + " putIfAbsent winners");
            }
        }
    }

    /**
     * Batches with conditional operations from several threads on shared keys, through the
     * coalescer (which merges them into one engine batch, expected values and all) and without it:
     * each thread reads a counter and adds one to it by a batch's compareAndSet, retrying when
     * another came first. The counters end at the number of compareAndSets that answered UPDATED.
     */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(booleans = {false, true})
    void conditionalBatchesFromSeveralThreadsLoseNoIncrement(boolean coalesce) throws Exception {
        try (GPHashIndex index = index("batches", coalesce)) {
            int counters = 4;
            for (long k = 0; k < counters; k++) {
                index.put(k, longBytes(0));
            }
            AtomicInteger updated = new AtomicInteger();
            AtomicInteger exists = new AtomicInteger();
            inThreads(id -> incrementByBatches(index, id, counters, updated, exists, coalesce));
            long sum = 0;
            for (long k = 0; k < counters; k++) {
                sum += ByteBuffer.wrap(index.get(k)).order(ByteOrder.LITTLE_ENDIAN).getLong();
            }
            assertEquals(updated.get(), sum, "increments lost or doubled");
            assertEquals((long) THREADS * 300, updated.get() + exists.get(), "every compareAndSet answered");
            assertTrue(updated.get() > 0);
        }
    }

    /**
     * 300 increments of counters by a batch's compareAndSet, each after a get of the counter.
     * {@code whole}: no other thread's operation runs between two of a batch's (the coalescer runs
     * one merged batch at a time); the CPU engine alone runs different threads' batches side by side.
     */
    private static void incrementByBatches(GPHashIndex index, int id, int counters, AtomicInteger updated,
                                           AtomicInteger exists, boolean whole) {
        for (int i = 0; i < 300; i++) {
            long key = (id + i) % counters;
            byte[] old = index.get(key);
            long v = ByteBuffer.wrap(old).order(ByteOrder.LITTLE_ENDIAN).getLong();
            // A mismatching compare-and-delete beside it must change nothing.
            Batch batch = index.newBatch(3).get(key).compareAndSet(key, old, longBytes(v + 1))
                    .compareAndDelete(key, longBytes(-1));
            BatchResult r = index.execute(batch);
            if (whole) {
                // The get runs just before the compareAndSet on the same key, in batch order: it
                // swaps exactly when the get saw the expected value (the expected column came through
                // the coalescer's merge).
                boolean sawOld = java.util.Arrays.equals(old, r.value(0));
                assertEquals(sawOld ? Outcome.UPDATED : Outcome.EXISTS, r.outcome(1),
                        "the compareAndSet after a get of " + (sawOld ? "the expected" : "another") + " value");
            } else {
                assertTrue(r.outcome(1) == Outcome.UPDATED || r.outcome(1) == Outcome.EXISTS, r.outcome(1).toString());
            }
            if (r.outcome(1) == Outcome.UPDATED) {
                updated.incrementAndGet();
            } else {
                exists.incrementAndGet();
            }
            assertEquals(Outcome.EXISTS, r.outcome(2));
        }
    }
}
