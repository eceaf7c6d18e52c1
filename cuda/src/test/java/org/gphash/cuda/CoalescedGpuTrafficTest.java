package org.gphash.cuda;

import static org.gphash.cuda.GpuTestSupport.value;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;

import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.CoalescerStats;
import org.gphash.Coalescing;
import org.gphash.GPHashIndex;
import org.gphash.Outcome;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Many threads on the GPU engine through the coalescer (asked for: the engine's default runs single calls on the host), each mixing
 * synchronous single calls, asynchronous calls kept in flight and batches, on keys of its own, so a
 * per-thread model says what every call must return: a caller's operations take effect in its
 * order, none is lost or applied twice, whatever batches they were merged into (the small-get,
 * distinct-key and pipeline paths all run). The host read cache is on.
 */
class CoalescedGpuTrafficTest {

    /** The coalescer with the settings it had by default on this engine before issue 57: host cache, spinning waits. */
    private static final Coalescing COALESCED = new Coalescing(Coalescing.Mode.ON, Duration.ZERO, 1 << 16,
            Coalescing.AUTO_HOST_CACHE, false, Duration.ofNanos(50_000), 1);


    private static final int THREADS = 24;
    private static final int OPS = 2_500;
    private static final int KEYS_PER_THREAD = 300;

    @BeforeEach
    void gpu() {
        GpuTestSupport.assumeGpu();
    }

    /** What a caller expects of an asynchronous call, checked when it completes. */
    private record Expectation(CompletableFuture<?> future, Object expected, String what) {
        void check() {
            Object got = future.join();
            if (expected instanceof byte[] b) {
                assertArrayEquals(b, (byte[]) got, what);
            } else {
                assertEquals(expected, got, what);
            }
        }
    }

    @Test
    void callersKeepTheirOrderAndLoseNothingThroughTheCoalescer() throws Exception {
        try (GpuTestSupport t = GpuTestSupport.create();
             GPHashIndex index = GPHashIndex.builder(t.pool("coalesced")).backend(Backend.GPU).keySize(8)
                     .valueSize(GpuTestSupport.VALUE_SIZE).initialCapacity(1024).coalescing(COALESCED)
                     .recordStats().create()) {
            ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
            @SuppressWarnings("unchecked")
            Map<Long, byte[]>[] models = new Map[THREADS];
            Thread[] threads = new Thread[THREADS];
            for (int id = 0; id < THREADS; id++) {
                Map<Long, byte[]> model = models[id] = new HashMap<>();
                long base = (id + 1) * 1_000_000L;
                SplittableRandom r = new SplittableRandom(id);
                threads[id] = Thread.ofPlatform().start(() -> {
                    try {
                        drive(index, base, r, model);
                    } catch (Throwable e) {
                        failures.add(e);
                    }
                });
            }
            for (Thread th : threads) {
                th.join();
            }
            if (!failures.isEmpty()) {
                throw new AssertionError(failures.peek());
            }
            long items = 0;
            for (Map<Long, byte[]> model : models) {
                for (Map.Entry<Long, byte[]> e : model.entrySet()) {
                    assertArrayEquals(e.getValue(), index.get(e.getKey()), "key " + e.getKey());
                }
                items += model.size();
            }
            assertEquals(items, index.size());
            CoalescerStats s = index.coalescerStats().orElseThrow();
            assertTrue(s.meanBatchSize() > 1.5, "calls of " + THREADS + " threads were merged: " + s);
            assertTrue(index.stats().resizes() > 0, "the traffic grew the table: " + index.stats());
            System.out.printf("coalesced GPU traffic: %s; %s%n", s, index.operationStats());
        }
    }

    private static void drive(GPHashIndex index, long base, SplittableRandom r, Map<Long, byte[]> model) {
        ArrayDeque<Expectation> inFlight = new ArrayDeque<>();
        for (int i = 0; i < OPS; i++) {
            long k = base + r.nextInt(KEYS_PER_THREAD);
            byte[] v = value(k, i + 1);
            byte[] old = model.get(k);
            int choice = r.nextInt(10);
            if (choice == 9 || inFlight.size() > 48) {
                // A batch (and a synchronous call in general) comes after this caller's async calls.
                while (!inFlight.isEmpty()) {
                    inFlight.poll().check();
                }
            }
            switch (choice) {
                case 0, 1 -> {
                    assertEquals(old == null, index.put(k, v), "put " + k);
                    model.put(k, v);
                }
                case 2 -> assertArrayEquals(old, index.get(k), "get " + k);
                case 3 -> {
                    assertEquals(old != null, index.delete(k), "delete " + k);
                    model.remove(k);
                }
                case 4, 5 -> {
                    inFlight.add(new Expectation(index.putAsync(k, v), old == null, "putAsync " + k));
                    model.put(k, v);
                }
                case 6, 7 -> inFlight.add(new Expectation(index.getAsync(k), old, "getAsync " + k));
                case 8 -> {
                    inFlight.add(new Expectation(index.deleteAsync(k), old != null, "deleteAsync " + k));
                    model.remove(k);
                }
                default -> {
                    long k2 = k + 1 + r.nextInt(5);
                    k2 = k2 >= base + KEYS_PER_THREAD ? base : k2;
                    k2 = k2 == k ? k + 1 : k2;  // another key: without the mirror one batch's order per key is not promised
                    Batch b = index.newBatch(2).put(k, v).get(k2);
                    BatchResult res = index.execute(b);
                    assertEquals(old == null ? Outcome.INSERTED : Outcome.UPDATED, res.outcome(0), "batch put " + k);
                    model.put(k, v);
                    byte[] expected = model.get(k2);
                    assertEquals(expected == null ? Outcome.NOT_FOUND : Outcome.FOUND, res.outcome(1), "batch get " + k2);
                    if (expected != null) {
                        assertArrayEquals(expected, res.value(1), "batch get " + k2);
                    }
                }
            }
        }
        while (!inFlight.isEmpty()) {
            inFlight.poll().check();
        }
    }
}
