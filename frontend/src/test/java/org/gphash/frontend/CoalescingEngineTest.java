package org.gphash.frontend;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.Coalescing;
import org.gphash.GPHashIndex;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.index.api.TestPools;
import org.gphash.spi.Engine;
import org.gphash.spi.ForwardingEngine;
import org.junit.jupiter.api.Test;

/** The coalescer on its own, over an engine that behaves as a backend may. */
class CoalescingEngineTest {

    private static final int VALUE = 32;

    /** Key k's value of version v: the two numbers, little-endian, then zeros. */
    private static byte[] value(long k, long v) {
        return java.nio.ByteBuffer.allocate(VALUE).order(java.nio.ByteOrder.LITTLE_ENDIAN).putLong(k).putLong(v).array();
    }

    /** An 8-byte key, little-endian (as the index encodes long keys). */
    private static java.lang.foreign.MemorySegment key(long k) {
        return java.lang.foreign.MemorySegment.ofArray(
                java.nio.ByteBuffer.allocate(8).order(java.nio.ByteOrder.LITTLE_ENDIAN).putLong(k).array());
    }

    /**
     * Behind an engine that does not keep batch order per key (the GPU engine without its mirror), no
     * engine batch holds two requests on one key, and a caller's async operations on few keys still
     * see each other in order.
     */
    @Test
    void requestsOnOneKeyShareNoBatchWhereTheEngineWouldReorderThem() {
        try (TestPools p = TestPools.create();
             Engine cpu = org.gphash.index.CpuEngine.create(GPHashIndex.builder(p.pool("u.pool")).keySize(8).valueSize(VALUE)
                     .config())) {
            java.util.concurrent.atomic.AtomicInteger batchesWithRepeats = new java.util.concurrent.atomic.AtomicInteger();
            java.util.concurrent.atomic.AtomicInteger merged = new java.util.concurrent.atomic.AtomicInteger();
            Engine unordered = new ForwardingEngine(cpu) {
                @Override
                public boolean ordersOperationsOnAKey() {
                    return false;
                }

                @Override
                public void execute(Batch batch, BatchResult result) {
                    java.util.Set<Long> keys = new java.util.HashSet<>();
                    for (int i = 0; i < batch.size(); i++) {
                        if (!keys.add(java.nio.ByteBuffer.wrap(batch.key(i)).order(java.nio.ByteOrder.LITTLE_ENDIAN).getLong())) {
                            batchesWithRepeats.incrementAndGet();
                        }
                    }
                    if (batch.size() > 1) {
                        merged.incrementAndGet();
                    }
                    super.execute(batch, result);
                }
            };
            CoalescingEngine c = new CoalescingEngine(unordered, Coalescing.on(Duration.ofMillis(1), 4096));
            Map<Long, byte[]> model = new HashMap<>();
            List<Runnable> checks = new ArrayList<>();
            for (int i = 0; i < 3000; i++) {
                long k = i % 5;
                byte[] v = value(k, i + 1);
                byte[] before = model.get(k);
                if (i % 3 == 2) {
                    CompletableFuture<byte[]> f = c.getAsync(key(k));
                    checks.add(() -> assertArrayEquals(before, f.join(), "getAsync " + k));
                } else {
                    CoalescedRequest r = c.submit(OpKind.PUT, key(k),
                            java.lang.foreign.MemorySegment.ofArray(v), null);
                    model.put(k, v);
                    checks.add(() -> assertEquals(before == null ? Outcome.INSERTED : Outcome.UPDATED, r.join(), "put " + k));
                }
            }
            checks.forEach(Runnable::run);
            assertEquals(0, batchesWithRepeats.get(), "no engine batch held one key twice");
            assertTrue(merged.get() > 0, "requests on different keys were still merged");
            c.close();
        }
    }

    /**
     * A caller's batch of gets is never merged with other callers' batches (the GPU engine runs such
     * batches side by side), and runs only after the caller's own queued operations: an async put
     * still waiting behind a slow engine batch is seen by the same thread's batch of gets. Writing
     * batches of the same size from the same threads are still merged.
     */
    @Test
    void batchesOfGetsRunDirectlyAfterTheCallersQueuedOperations() throws Exception {
        try (TestPools p = TestPools.create();
             Engine cpu = org.gphash.index.CpuEngine.create(GPHashIndex.builder(p.pool("g.pool")).keySize(8).valueSize(VALUE)
                     .config())) {
            java.util.List<Integer> getBatches = java.util.Collections.synchronizedList(new ArrayList<>());
            java.util.List<Integer> putBatches = java.util.Collections.synchronizedList(new ArrayList<>());
            Engine slow = new ForwardingEngine(cpu) {
                @Override
                public void execute(Batch batch, BatchResult result) {
                    boolean gets = batch.onlyGets();
                    (gets ? getBatches : putBatches).add(batch.size());
                    try {
                        // Long enough for the other threads' batches to queue meanwhile; a write the
                        // longer, so that a batch of gets not waiting for it would miss it.
                        Thread.sleep(gets ? 20 : 100);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    super.execute(batch, result);
                }
            };
            CoalescingEngine c = new CoalescingEngine(slow, Coalescing.on(Duration.ZERO, 4096));
            // One thread: an async put, queued behind the slow engine, then its own batch of gets.
            byte[] v = value(7, 1);
            CoalescedRequest put = c.submit(OpKind.PUT, key(7), java.lang.foreign.MemorySegment.ofArray(v), null);
            Batch gets = Batch.create(8, VALUE, 1);
            gets.add(OpKind.GET, key(7), null);
            BatchResult r = new BatchResult(VALUE, 1);
            c.execute(gets, r);
            assertEquals(Outcome.FOUND, r.outcome(0), "the batch of gets saw the caller's put queued before it");
            assertArrayEquals(v, r.value(0));
            assertEquals(Outcome.INSERTED, put.join());
            // Four threads at once, each a batch of 100 gets, then a batch of 100 puts.
            getBatches.clear();
            putBatches.clear();
            java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(4);
            try {
                List<java.util.concurrent.Future<?>> done = new ArrayList<>();
                for (int t = 0; t < 4; t++) {
                    long base = t * 1000L;
                    done.add(pool.submit(() -> {
                        Batch g = Batch.create(8, VALUE, 100);
                        Batch w = Batch.create(8, VALUE, 100);
                        for (long k = base; k < base + 100; k++) {
                            g.add(OpKind.GET, key(k), null);
                            w.add(OpKind.PUT, key(k), java.lang.foreign.MemorySegment.ofArray(value(k, 2)));
                        }
                        c.execute(g, new BatchResult(VALUE, 100));
                        c.execute(w, new BatchResult(VALUE, 100));
                    }));
                }
                for (java.util.concurrent.Future<?> f : done) {
                    f.get();
                }
            } finally {
                pool.shutdown();
            }
            assertEquals(List.of(100, 100, 100, 100), getBatches, "every batch of gets ran alone");
            assertTrue(putBatches.size() < 4, "batches of puts were merged: " + putBatches);
            c.close();
        }
    }

    /**
     * Issue 57: over an engine that runs single calls in place (the GPU engine), AUTO passes single
     * calls straight through and still merges a caller's writing batch; ON merges single calls too.
     */
    @Test
    void autoPassesSingleCallsThroughWhereTheEngineRunsThemInPlace() {
        try (TestPools p = TestPools.create();
             Engine cpu = org.gphash.index.CpuEngine.create(GPHashIndex.builder(p.pool("s.pool")).keySize(8).valueSize(VALUE)
                     .config())) {
            java.util.concurrent.atomic.AtomicInteger batches = new java.util.concurrent.atomic.AtomicInteger();
            Engine inPlace = new ForwardingEngine(cpu) {
                @Override
                public boolean runsSingleCallsInPlace() {
                    return true;
                }

                @Override
                public void execute(Batch batch, BatchResult result) {
                    batches.incrementAndGet();
                    super.execute(batch, result);
                }

                @Override
                public org.gphash.spi.SubmittedBatch submit(Batch batch, BatchResult result) {
                    batches.incrementAndGet();
                    return super.submit(batch, result);
                }
            };
            CoalescingEngine auto = new CoalescingEngine(inPlace, Coalescing.AUTO);
            java.lang.foreign.MemorySegment out = java.lang.foreign.MemorySegment.ofArray(new byte[VALUE]);
            for (long k = 0; k < 100; k++) {
                assertEquals(Outcome.INSERTED, auto.put(key(k), java.lang.foreign.MemorySegment.ofArray(value(k, 1))));
                assertEquals(Outcome.UPDATED, auto.update(key(k), java.lang.foreign.MemorySegment.ofArray(value(k, 2))));
                assertEquals(Outcome.FOUND, auto.get(key(k), out));
                assertArrayEquals(value(k, 2), out.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
            }
            assertEquals(Outcome.DELETED, auto.delete(key(0)));
            assertEquals(Outcome.INSERTED, auto.insert(key(0), java.lang.foreign.MemorySegment.ofArray(value(0, 3))));
            assertEquals(0, batches.get(), "single calls ran in place, never in a batch");
            assertEquals(0, auto.coalescerStats().batches());
            Batch writes = Batch.create(8, VALUE, 10);
            for (long k = 100; k < 110; k++) {
                writes.put(key(k).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE), value(k, 1));
            }
            auto.execute(writes, new BatchResult(VALUE, 10));
            assertEquals(0, auto.coalescerStats().batches(), "a lone caller's writing batch did not go through the dispatcher");
            assertEquals(1, batches.get(), "it ran as it came");
            auto.close();
        }
    }

    /**
     * AUTO runs a caller's writing batch on the caller's thread where the engine would run it on the
     * host now ({@code Engine.runsBatchInPlace}) or where no other caller's batch is there to merge it
     * with, and merges it through the dispatcher where another caller's is, telling the engine how
     * long its caller waited ({@code Engine.callerWaited}).
     */
    @Test
    void autoMergesACallersBatchOnlyWithAnotherCallersBatch() throws Exception {
        try (TestPools p = TestPools.create();
             Engine cpu = org.gphash.index.CpuEngine.create(GPHashIndex.builder(p.pool("b.pool")).keySize(8).valueSize(VALUE)
                     .config())) {
            boolean[] inPlace = {true};
            List<Thread> ranOn = new ArrayList<>();
            List<String> waited = new ArrayList<>();
            java.util.concurrent.CountDownLatch inside = new java.util.concurrent.CountDownLatch(1);
            java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
            Engine engine = new ForwardingEngine(cpu) {
                @Override
                public boolean runsSingleCallsInPlace() {
                    return true;
                }

                @Override
                public boolean runsBatchInPlace(Batch batch) {
                    return inPlace[0];
                }

                @Override
                public void callerWaited(int operations, boolean writes, long nanos) {
                    waited.add(operations + (writes ? " writing" : " gets") + (nanos > 0 ? "" : " no time"));
                }

                @Override
                public void execute(Batch batch, BatchResult result) {
                    synchronized (ranOn) {
                        ranOn.add(Thread.currentThread());
                    }
                    if (Thread.currentThread().getName().equals("first caller")) {
                        inside.countDown();
                        try {
                            release.await();
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }
                    super.execute(batch, result);
                }
            };
            CoalescingEngine auto = new CoalescingEngine(engine, Coalescing.AUTO);
            for (int round = 0; round < 2; round++) {
                BatchResult result = new BatchResult(VALUE, 10);
                auto.execute(puts(0, round), result);
                for (int i = 0; i < 10; i++) {
                    assertEquals(round == 0 ? Outcome.INSERTED : Outcome.UPDATED, result.outcome(i));
                }
                inPlace[0] = false;
            }
            assertEquals(List.of(Thread.currentThread(), Thread.currentThread()), ranOn,
                    "the batch the engine runs in place, then a lone caller's, ran on the caller's thread");
            assertEquals(0, auto.coalescerStats().batches());
            // A caller's batch while another's is inside: merged through the dispatcher.
            BatchResult firstResult = new BatchResult(VALUE, 10);
            Thread first = new Thread(() -> auto.execute(puts(0, 2), firstResult), "first caller");
            first.start();
            inside.await();
            BatchResult result = new BatchResult(VALUE, 10);
            auto.execute(puts(100, 2), result);
            for (int i = 0; i < 10; i++) {
                assertEquals(Outcome.INSERTED, result.outcome(i));
            }
            release.countDown();
            first.join();
            for (int i = 0; i < 10; i++) {
                assertEquals(Outcome.UPDATED, firstResult.outcome(i));
            }
            assertEquals(first, ranOn.get(2), "the first caller's batch ran on its thread");
            assertTrue(ranOn.get(3) != Thread.currentThread() && ranOn.get(3) != first,
                    "the second went through the dispatcher: " + ranOn);
            assertEquals(1, auto.coalescerStats().batches());
            assertEquals(List.of("10 writing"), waited, "the merged batch's wait told to the engine, the others' not");
            auto.close();
        }
    }

    /** Ten puts of keys {@code from..from+9}, values of {@code round}. */
    private static Batch puts(long from, int round) {
        Batch writes = Batch.create(8, VALUE, 10);
        for (long k = from; k < from + 10; k++) {
            writes.put(key(k).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE), value(k, round));
        }
        return writes;
    }

    /**
     * Where the engine's values have lengths of their own (a format 3 pool), the merged batch's result
     * reaches the engine with its values packed, as the batch's are: a result of places of the value
     * size cost a GPU engine's packed route a copy and a zero fill of a whole place per value read
     * (docs/lab/2026-12-02-route-costs-and-the-jit.md); the CPU engine turns such a result over itself.
     */
    @Test
    void theMergedResultLiesPackedWhereTheEnginesValuesHaveLengths() {
        try (TestPools p = TestPools.create();
             Engine cpu = org.gphash.index.CpuEngine.create(GPHashIndex.builder(p.pool("p.pool")).keySize(8).valueSize(VALUE)
                     .poolFormat(3).config())) {
            assertTrue(cpu.valueLengths());
            java.util.concurrent.atomic.AtomicInteger batches = new java.util.concurrent.atomic.AtomicInteger();
            java.util.concurrent.atomic.AtomicInteger unpackedResults = new java.util.concurrent.atomic.AtomicInteger();
            Engine seeing = new ForwardingEngine(cpu) {
                @Override
                public boolean valueLengths() {
                    return true;  // passed through, as the GPU engine's router does
                }

                @Override
                public void execute(Batch batch, BatchResult result) {
                    batches.incrementAndGet();
                    if (result.valuesPacked() != batch.valuesPacked()) {
                        unpackedResults.incrementAndGet();
                    }
                    super.execute(batch, result);
                }
            };
            CoalescingEngine on = new CoalescingEngine(seeing, Coalescing.on(Duration.ZERO, 4096));
            for (long k = 0; k < 20; k++) {
                byte[] v = java.util.Arrays.copyOf(value(k, 1), (int) k);
                assertEquals(Outcome.INSERTED, on.put(key(k), java.lang.foreign.MemorySegment.ofArray(v)));
            }
            java.lang.foreign.MemorySegment out = java.lang.foreign.MemorySegment.ofArray(new byte[VALUE]);
            assertEquals(Outcome.FOUND, on.get(key(7), out));
            assertArrayEquals(java.util.Arrays.copyOf(java.util.Arrays.copyOf(value(7, 1), 7), VALUE),
                    out.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
            assertTrue(batches.get() > 0, "the calls reached the engine as merged batches");
            assertEquals(0, unpackedResults.get(), "merged results laid out as their batches");
            on.close();
        }
    }

    /**
     * A request the merged batch refuses (here a value shorter than the value size, behind a wrapper
     * that does not pass the engine's lengths through) fails its caller with the batch's reason, and
     * the coalescer goes on serving: thrown on its thread, it ended the dispatcher and every caller
     * after it waited for ever.
     */
    @Test
    @org.junit.jupiter.api.Timeout(value = 30, threadMode = org.junit.jupiter.api.Timeout.ThreadMode.SEPARATE_THREAD)
    void aRequestTheBatchRefusesFailsItsCallerAndTheCoalescerGoesOn() {
        try (TestPools p = TestPools.create();
             Engine cpu = org.gphash.index.CpuEngine.create(GPHashIndex.builder(p.pool("r.pool")).keySize(8).valueSize(VALUE)
                     .poolFormat(3).config())) {
            Engine notPassingLengths = new ForwardingEngine(cpu) { };
            CoalescingEngine on = new CoalescingEngine(notPassingLengths, Coalescing.on(Duration.ZERO, 4096));
            java.lang.foreign.MemorySegment shortValue = java.lang.foreign.MemorySegment.ofArray(new byte[3]);
            IllegalArgumentException refused = assertThrows(IllegalArgumentException.class, () -> on.put(key(1), shortValue));
            assertTrue(refused.getMessage().contains("value must be"), refused.getMessage());
            assertEquals(Outcome.INSERTED, on.put(key(2), java.lang.foreign.MemorySegment.ofArray(value(2, 1))));
            on.close();
        }
    }

    @Test
    void onMergesSingleCallsEvenWhereTheEngineRunsThemInPlace() {
        try (TestPools p = TestPools.create();
             Engine cpu = org.gphash.index.CpuEngine.create(GPHashIndex.builder(p.pool("o.pool")).keySize(8).valueSize(VALUE)
                     .config())) {
            Engine inPlace = new ForwardingEngine(cpu) {
                @Override
                public boolean runsSingleCallsInPlace() {
                    return true;
                }
            };
            CoalescingEngine on = new CoalescingEngine(inPlace, Coalescing.on(Duration.ZERO, 4096));
            for (long k = 0; k < 20; k++) {
                assertEquals(Outcome.INSERTED, on.put(key(k), java.lang.foreign.MemorySegment.ofArray(value(k, 1))));
            }
            assertTrue(on.coalescerStats().operations() >= 20, "single puts were merged: " + on.coalescerStats());
            on.close();
        }
    }
}
