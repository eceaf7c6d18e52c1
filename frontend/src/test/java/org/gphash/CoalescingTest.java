package org.gphash;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;

import org.gphash.index.api.ModelProperties;
import org.gphash.index.api.TestPools;
import org.gphash.spi.Engine;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 15, the coalescer, with the CPU engine behind it (no GPU needed): many threads mixing
 * synchronous single operations, asynchronous ones and batches, each thread on keys of its own so
 * that its model says exactly what every result must be (its own order kept, nothing lost or
 * applied twice), and the calls must really have been merged.
 */
class CoalescingTest {

    private static final int VALUE = 32;

    private final TestPools pools = TestPools.create();

    @AfterEach
    void cleanUp() {
        pools.close();
    }

    private GPHashIndex index(String name, Coalescing c) {
        return GPHashIndex.builder(pools.pool(name)).valueSize(VALUE).initialCapacity(1024).coalescing(c).create();
    }

    static byte[] value(long k, long v) {
        return ModelProperties.value(k, v, VALUE);
    }

    /** With waiting threads parking at once, and spinning first (the default for the GPU backend). */
    @org.junit.jupiter.params.ParameterizedTest(name = "spin {0} us")
    @org.junit.jupiter.params.provider.ValueSource(longs = {0, 50, 2000})
    void manyCallersKeepTheirOrderAndLoseNothing(long spinMicros) throws Exception {
        int threads = 12;
        int opsPerThread = 3_000;
        try (GPHashIndex index = index("c.pool", Coalescing.on(Duration.ZERO, 4096).withSpin(Duration.ofNanos(1000 * spinMicros)))) {
            callersHoldTheirModels(index, threads, opsPerThread);
            CoalescerStats s = index.coalescerStats().orElseThrow();
            assertTrue(s.operations() >= (long) threads * opsPerThread / 2, s.toString());
            if (spinMicros == 0) {
                // A spinning dispatcher takes each request as it comes when the engine is this fast
                // (the CPU engine on two cores), so merging is asserted where it parks.
                assertTrue(s.meanBatchSize() > 1.5, "calls from " + threads + " threads were not merged: " + s);
            }
        }
    }

    /**
     * A format 3 pool's values have any length, and the coalescer passes each through: many callers'
     * single calls, async calls and batches with values of 0 to the value size keep their order and
     * their lengths (the host cache asked for is not kept: its entries have the value size); a reopen
     * reads them back; a batch with shorter values is still refused by an index of fixed ones.
     */
    @Test
    void coalescedCallsKeepEachValuesLength() throws Exception {
        java.nio.file.Path path = pools.pool("any-length.pool");
        Coalescing on = Coalescing.on(Duration.ZERO, 4096).withHostCache(1 << 20);
        try (GPHashIndex index = GPHashIndex.builder(path).valueSize(VALUE).poolFormat(3).initialCapacity(1024)
                .coalescing(on).create()) {
            assertTrue(index.valueLengths(), "the coalescer passes the engine's lengths through");
            callersHoldTheirModels(index, 8, 2_000);
            CoalescerStats s = index.coalescerStats().orElseThrow();
            assertTrue(s.operations() > 8_000, s.toString());
            assertEquals(0, s.hostCacheHits() + s.hostCacheMisses(), "no host cache for values of any length: " + s);
            index.put(1L, new byte[] {1, 2, 3});
            assertArrayEquals(new byte[] {1, 2, 3}, index.putAsync(2L, new byte[] {4}).thenApply(x -> index.get(1L)).join());
            assertArrayEquals(new byte[] {4}, index.getAsync(2L).join());
        }
        try (GPHashIndex index = GPHashIndex.builder(path).coalescing(on).open();
             GPHashIndex fixed = GPHashIndex.builder(pools.pool("fixed.pool")).valueSize(VALUE).create()) {
            assertArrayEquals(new byte[] {1, 2, 3}, index.get(1L));
            Batch shorter = index.newBatch(1).put(2L, new byte[5]);
            IllegalArgumentException batch = assertThrows(IllegalArgumentException.class, () -> fixed.execute(shorter));
            assertTrue(batch.getMessage().contains("values of any length"), batch.getMessage());
            assertEquals(0, fixed.size());
        }
    }

    /**
     * Over a sharded index (issue 30) the coalescer's merged batches are split across the shards and
     * merged back: every caller's operations keep their order and nothing is lost, host cache on.
     */
    @Test
    void callersOfAShardedIndexKeepTheirOrderAndLoseNothing() throws Exception {
        try (GPHashIndex index = GPHashIndex.builder(pools.pool("sharded")).valueSize(VALUE).initialCapacity(1024).shards(3)
                .coalescing(Coalescing.on(Duration.ZERO, 4096).withHostCache(1 << 20)).create()) {
            callersHoldTheirModels(index, 8, 2_000);
            assertTrue(index.coalescerStats().orElseThrow().operations() > 0);
            assertEquals(3, index.shardStats().size());
        }
    }

    /** The index holds exactly what the callers' models (on disjoint keys) say. */
    static void assertHoldsModels(GPHashIndex index, List<Map<Long, byte[]>> models) {
        long expected = 0;
        for (Map<Long, byte[]> model : models) {
            for (Map.Entry<Long, byte[]> e : model.entrySet()) {
                assertArrayEquals(e.getValue(), index.get(e.getKey()), "key " + e.getKey());
            }
            expected += model.size();
        }
        assertEquals(expected, index.size());
    }

    /** Runs {@code body(id)} on {@code n} threads at once; the first failure of any fails the test. */
    static void inThreads(int n, java.util.function.IntConsumer body) throws InterruptedException {
        ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < n; t++) {
            int id = t;
            ts.add(Thread.ofPlatform().start(() -> {
                try {
                    body.accept(id);
                } catch (Throwable e) {
                    failures.add(e);
                }
            }));
        }
        for (Thread t : ts) {
            t.join();
        }
        if (!failures.isEmpty()) {
            throw new AssertionError(failures.peek());
        }
    }

    /** One caller: its own keys, a random mix of sync, async (several in flight) and batch operations. */
    /** {@code callers} threads each run {@link #callerRun} on keys of their own; then every caller's model must hold. */
    static void callersHoldTheirModels(GPHashIndex index, int callers, int ops) throws InterruptedException {
        callersHoldTheirModels(index, callers, ops, 0, other -> { });
    }

    /**
     * As {@link #callersHoldTheirModels(GPHashIndex, int, int)}, beside {@code others} threads that
     * run {@code other} (given their number, from 0).
     */
    static void callersHoldTheirModels(GPHashIndex index, int callers, int ops, int others,
                                       java.util.function.IntConsumer other) throws InterruptedException {
        List<Map<Long, byte[]>> models = new ArrayList<>();
        for (int t = 0; t < callers; t++) {
            models.add(new HashMap<>());
        }
        inThreads(callers + others, id -> {
            if (id < callers) {
                callerRun(index, id, ops, models.get(id));
            } else {
                other.accept(id - callers);
            }
        });
        assertHoldsModels(index, models);
    }

    static void callerRun(GPHashIndex index, int id, int ops, Map<Long, byte[]> model) {
        SplittableRandom r = new SplittableRandom(id * 31L + 7);
        long base = id * 1_000_000L;
        List<CompletableFuture<?>> pending = new ArrayList<>();
        List<Runnable> checks = new ArrayList<>();
        for (int i = 0; i < ops; i++) {
            long k = base + r.nextInt(200);
            byte[] v = value(k, i + 1);
            if (index.valueLengths()) {
                v = java.util.Arrays.copyOf(v, r.nextInt(VALUE + 1));   // any length, 0 to the value size
            }
            byte[] before = model.get(k);
            switch (r.nextInt(7)) {
                case 0 -> {
                    assertEquals(before == null, index.put(k, v), "put " + k);
                    model.put(k, v);
                }
                case 1 -> {
                    assertEquals(before != null, index.delete(k), "delete " + k);
                    model.remove(k);
                }
                case 2 -> assertArrayEquals(before, index.get(k), "get " + k);
                case 3 -> {
                    // Asynchronous: the result is what the model said at issue time, since this
                    // caller's later operations take effect after it.
                    CompletableFuture<Boolean> f = index.putAsync(k, v);
                    model.put(k, v);
                    pending.add(f);
                    checks.add(() -> assertEquals(before == null, f.join(), "putAsync " + k));
                }
                case 4 -> {
                    CompletableFuture<byte[]> f = index.getAsync(k);
                    pending.add(f);
                    checks.add(() -> assertArrayEquals(before, f.join(), "getAsync " + k));
                }
                case 5 -> {
                    CompletableFuture<Boolean> f = index.deleteAsync(k);
                    model.remove(k);
                    pending.add(f);
                    checks.add(() -> assertEquals(before != null, f.join(), "deleteAsync " + k));
                }
                default -> {
                    // A batch after queued async operations: they must have taken effect first.
                    for (Runnable c : checks) {
                        c.run();
                    }
                    checks.clear();
                    pending.clear();
                    Batch b = index.newBatch(4);
                    b.put(k, v).get(k);
                    BatchResult res = index.execute(b);
                    assertEquals(before == null ? Outcome.INSERTED : Outcome.UPDATED, res.outcome(0));
                    assertArrayEquals(v, res.value(1));
                    model.put(k, v);
                }
            }
            if (pending.size() > 64) {
                for (Runnable c : checks) {
                    c.run();
                }
                checks.clear();
                pending.clear();
            }
        }
        for (Runnable c : checks) {
            c.run();
        }
    }

    /**
     * With the host read cache: readers hammer a few hot keys while each writer rewrites its own
     * keys with increasing versions, through single calls, async calls and batches. A reader may
     * see an older version only while a newer one is still being written; once a writer's call
     * returned, every later read (cache or not) sees at least that version.
     */
    @Test
    void theHostCacheNeverServesAValueOlderThanAFinishedWrite() throws Exception {
        try (GPHashIndex index = index("h.pool", Coalescing.on(Duration.ZERO, 4096).withHostCache(1 << 20))) {
            int keys = 16;
            java.util.concurrent.atomic.AtomicLongArray done = new java.util.concurrent.atomic.AtomicLongArray(keys);
            for (int k = 0; k < keys; k++) {
                index.put(k, value(k, 1));
                done.set(k, 1);
            }
            ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
            java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
            List<Thread> ts = new ArrayList<>();
            for (int w = 0; w < 2; w++) {
                int id = w;
                ts.add(Thread.ofPlatform().start(() -> {
                    SplittableRandom r = new SplittableRandom(id);
                    try {
                        for (long version = 2; version < 1500; version++) {
                            int k = id + 2 * r.nextInt(keys / 2);  // writer id owns keys of its parity
                            long v = Math.max(version, done.get(k) + 1);
                            switch (r.nextInt(20) == 0 ? 3 : r.nextInt(3)) {
                                case 0 -> index.put(k, value(k, v));
                                case 1 -> index.putAsync(k, value(k, v)).join();
                                case 2 -> index.execute(index.newBatch(1).put(k, value(k, v)));
                                default -> {
                                    // Large enough for the cache's bulk invalidation (writtenAll).
                                    Batch big = index.newBatch(org.gphash.frontend.FrontEndInternals.WRITTEN_ONE_BY_ONE_MAX + 2);
                                    for (int f = 0; f <= org.gphash.frontend.FrontEndInternals.WRITTEN_ONE_BY_ONE_MAX; f++) {
                                        big.put(1000 + id * 10_000 + f, value(1000 + f, v));
                                    }
                                    index.execute(big.put(k, value(k, v)));
                                }
                            }
                            done.set(k, v);
                        }
                    } catch (Throwable e) {
                        failures.add(e);
                    }
                }));
            }
            for (int rd = 0; rd < 4; rd++) {
                int id = rd;
                ts.add(Thread.ofPlatform().start(() -> {
                    SplittableRandom r = new SplittableRandom(100 + id);
                    try {
                        while (!stop.get()) {
                            int k = r.nextInt(keys);
                            long floor = done.get(k);
                            byte[] v = r.nextBoolean() ? index.get(k) : index.getAsync((long) k).join();
                            long seen = java.nio.ByteBuffer.wrap(v).order(java.nio.ByteOrder.LITTLE_ENDIAN).getLong(0);
                            if (seen < floor) {
                                throw new AssertionError("key " + k + ": read version " + seen + " after version "
                                        + floor + " was written");
                            }
                        }
                    } catch (Throwable e) {
                        failures.add(e);
                    }
                }));
            }
            for (int i = 0; i < 2; i++) {
                ts.get(i).join();
            }
            stop.set(true);
            for (Thread t : ts) {
                t.join();
            }
            if (!failures.isEmpty()) {
                throw new AssertionError(failures.peek());
            }
            CoalescerStats s = index.coalescerStats().orElseThrow();
            assertTrue(s.hostCacheHits() > 0, "the hot keys were never served from the host: " + s);
            for (int k = 0; k < keys; k++) {
                assertArrayEquals(value(k, done.get(k)), index.get(k), "key " + k);
            }
        }
    }

    /**
     * Key 1 written and read twice, so the host cache holds it; returns its hits so far (some). The
     * reads are asynchronous: a synchronous get goes to the engine first while no write came lately.
     */
    private static long warmHostCache(GPHashIndex index) {
        index.put(1L, value(1, 1));
        index.getAsync(1L).join();
        index.getAsync(1L).join();
        long hits = index.coalescerStats().orElseThrow().hostCacheHits();
        assertTrue(hits > 0);
        return hits;
    }

    /**
     * A synchronous get looks in the host cache only while writes came lately (a batch may hold the
     * pool); otherwise it reads the engine at once, the cache neither asked nor filled.
     */
    @Test
    void getsLookInTheHostCacheOnlyWhileWritesCameLately() throws Exception {
        try (GPHashIndex index = index("lately.pool", Coalescing.on(Duration.ZERO, 4096).withHostCache(1 << 20))) {
            index.put(1L, value(1, 1));
            // Right after a write the cache is asked (a miss, then hits); a slow machine may let the
            // window pass between the two calls, so the pair is tried a few times.
            long asked = 0;
            for (int round = 0; round < 50 && asked == 0; round++) {
                index.put(2L, value(2, round));
                assertArrayEquals(value(1, 1), index.get(1L));
                var stats = index.coalescerStats().orElseThrow();
                asked = stats.hostCacheHits() + stats.hostCacheMisses();
            }
            assertTrue(asked > 0, "gets right after a write looked in the cache");
            Thread.sleep(50);  // five times CoalescingEngine.WRITES_LATELY_NANOS
            var before = index.coalescerStats().orElseThrow();
            for (int i = 0; i < 100; i++) {
                assertArrayEquals(value(1, 1), index.get(1L));
            }
            var after = index.coalescerStats().orElseThrow();
            assertEquals(before.hostCacheHits() + before.hostCacheMisses(),
                    after.hostCacheHits() + after.hostCacheMisses(), "with no write lately the gets went to the engine");
            assertTrue(after.getsRunAtOnce() >= before.getsRunAtOnce() + 100);
        }
    }

    @Test
    void askingForTheEngineTurnsTheHostCacheOff() {
        try (GPHashIndex index = index("e.pool", Coalescing.on(Duration.ZERO, 4096).withHostCache(1 << 20))) {
            long hits = warmHostCache(index);
            Engine e = index.engine();  // its own methods would bypass the cache
            e.put(java.lang.foreign.MemorySegment.ofArray(LongKeys.encode(1L, 8)),
                    java.lang.foreign.MemorySegment.ofArray(value(1, 2)));
            assertArrayEquals(value(1, 2), index.getAsync(1L).join(), "a write past the cache must be seen");
            assertEquals(hits, index.coalescerStats().orElseThrow().hostCacheHits());
        }
    }

    @Test
    void theGpuViewIsEmptyOnTheCpuEngineAndAskingTurnsTheHostCacheOff() {
        try (GPHashIndex index = index("g.pool", Coalescing.on(Duration.ZERO, 4096).withHostCache(1 << 20))) {
            long hits = warmHostCache(index);
            assertTrue(index.gpu().isEmpty(), "the CPU engine has no GPU features");
            assertArrayEquals(value(1, 1), index.getAsync(1L).join());
            assertEquals(hits, index.coalescerStats().orElseThrow().hostCacheHits(), "the cache is off once asked");
        }
    }

    /** A caller's batch of more than half an engine batch runs directly; one of half or less goes through the dispatcher. */
    @Test
    void batchesOfMoreThanHalfAnEngineBatchAreNotMerged() {
        int max = 1 << 10;
        try (GPHashIndex index = index("half.pool", Coalescing.on(Duration.ZERO, max))) {
            long before = index.coalescerStats().orElseThrow().batches();
            Batch half = index.newBatch(max / 2);
            for (int i = 0; i < max / 2; i++) {
                half.put(i, value(i, 1));
            }
            assertEquals(max / 2, index.execute(half).count(Outcome.INSERTED));
            long merged = index.coalescerStats().orElseThrow().batches();
            assertEquals(before + 1, merged, "half an engine batch went through the dispatcher");
            Batch more = index.newBatch(max / 2 + 1);
            for (int i = 0; i <= max / 2; i++) {
                more.get(i);
            }
            assertEquals(max / 2, index.execute(more).count(Outcome.FOUND));
            assertEquals(merged, index.coalescerStats().orElseThrow().batches(), "a larger batch ran directly");
        }
    }

    /**
     * Under a large engine batch, a caller's writing batch of more than 2048 operations runs directly
     * too: merged, bench ycsb's A from 16 threads at batches of 4096 and 16384 ran at a third to a
     * half of its rate direct (docs/lab/2026-12-02-host-heads-and-merging.md).
     */
    @Test
    void writingBatchesOfMoreThan2048AreNotMergedWhateverTheEngineBatch() {
        try (GPHashIndex index = index("w.pool", Coalescing.on(Duration.ZERO, 1 << 16))) {
            long before = index.coalescerStats().orElseThrow().batches();
            Batch most = index.newBatch(2048);
            for (int i = 0; i < 2048; i++) {
                most.put(i, value(i, 1));
            }
            assertEquals(2048, index.execute(most).count(Outcome.INSERTED));
            long merged = index.coalescerStats().orElseThrow().batches();
            assertEquals(before + 1, merged, "2048 writes went through the dispatcher");
            Batch more = index.newBatch(2049);
            for (int i = 0; i < 2049; i++) {
                more.put(i, value(i, 2));
            }
            assertEquals(2048, index.execute(more).count(Outcome.UPDATED));
            assertEquals(merged, index.coalescerStats().orElseThrow().batches(), "2049 writes ran directly");
        }
    }

    /** Batches from many threads are merged into engine batches; each caller gets its own results, in its order. */
    @Test
    void batchesFromManyThreadsAreMergedAndSplitBack() throws Exception {
        try (GPHashIndex index = index("m.pool", Coalescing.on(Duration.ofMillis(2), 1 << 14))) {
            int threads = 8;
            inThreads(threads, id -> {
                SplittableRandom r = new SplittableRandom(id);
                Map<Long, byte[]> model = new HashMap<>();
                long base = id * 1_000_000L;
                for (int round = 0; round < 30; round++) {
                    Batch b = index.newBatch(300);
                    List<Outcome> expected = new ArrayList<>();
                    List<byte[]> expectedValues = new ArrayList<>();
                    for (int i = 0; i < 300; i++) {
                        long k = base + r.nextInt(100);
                        byte[] v = value(k, round * 1000L + i + 1);
                        switch (r.nextInt(3)) {
                            case 0 -> {
                                b.put(k, v);
                                expected.add(model.put(k, v) == null ? Outcome.INSERTED : Outcome.UPDATED);
                                expectedValues.add(null);
                            }
                            case 1 -> {
                                b.delete(k);
                                expected.add(model.remove(k) != null ? Outcome.DELETED : Outcome.NOT_FOUND);
                                expectedValues.add(null);
                            }
                            default -> {
                                b.get(k);
                                byte[] cur = model.get(k);
                                expected.add(cur != null ? Outcome.FOUND : Outcome.NOT_FOUND);
                                expectedValues.add(cur);
                            }
                        }
                    }
                    BatchResult res = index.execute(b);
                    assertEquals(300, res.size());
                    for (int i = 0; i < 300; i++) {
                        assertEquals(expected.get(i), res.outcome(i), "thread " + id + " op " + i);
                        if (expectedValues.get(i) != null) {
                            assertArrayEquals(expectedValues.get(i), res.value(i), "thread " + id + " op " + i);
                        }
                    }
                }
            });
            CoalescerStats s = index.coalescerStats().orElseThrow();
            assertEquals((long) threads * 30 * 300, s.operations());
            assertTrue(s.batches() < threads * 30, "no caller batches were merged: " + s);
        }
    }

    @Test
    void badSettingsAreRefusedByName() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Coalescing.on(Duration.ofMillis(-1), 16));
        assertTrue(e.getMessage().contains("linger"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Coalescing.on(Duration.ZERO, 0));
        assertTrue(e.getMessage().contains("maxBatch"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Coalescing.AUTO.withHostCache(-5));
        assertTrue(e.getMessage().contains("hostCacheBytes"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Coalescing.AUTO.withSpin(Duration.ofNanos(-1)));
        assertTrue(e.getMessage().contains("spin"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Coalescing.AUTO.withBatchesInFlight(3));
        assertTrue(e.getMessage().contains("batchesInFlight"), e.getMessage());
        assertThrows(NullPointerException.class, () -> GPHashIndex.builder(pools.pool("n.pool")).coalescing(null));
        assertThrows(NullPointerException.class, () -> GPHashIndex.builder(pools.pool("n.pool")).durability(null));
    }

    @Test
    void lingerGathersMoreIntoOneBatch() throws Exception {
        try (GPHashIndex index = index("l.pool", Coalescing.on(Duration.ofMillis(20), 4096))) {
            List<CompletableFuture<Boolean>> fs = new ArrayList<>();
            for (long k = 0; k < 500; k++) {
                fs.add(index.putAsync(k, value(k, 1)));
            }
            for (CompletableFuture<Boolean> f : fs) {
                assertTrue(f.join());
            }
            CoalescerStats s = index.coalescerStats().orElseThrow();
            assertEquals(500, s.operations());
            assertTrue(s.batches() <= 5, "500 operations within the linger ran in " + s.batches() + " batches");
        }
    }

    @Test
    void autoLeavesTheCpuEngineAloneAndAsyncStillWorks() {
        try (GPHashIndex index = index("a.pool", Coalescing.AUTO)) {
            assertTrue(index.coalescerStats().isEmpty());
            assertTrue(index.putAsync(5L, value(5, 1)).join());
            assertArrayEquals(value(5, 1), index.getAsync(5L).join());
            assertTrue(index.deleteAsync(5L).join());
            assertEquals(null, index.getAsync(5L).join());
        }
    }

    /** Issue 28: AUTO merges the CPU engine's calls only where a batch's flush would be shared (a disk). */
    @Test
    void autoIsGroupCommitForTheCpuEngineOnADisk() {
        assertTrue(Coalescing.AUTO.appliesTo(Backend.GPU, false), "the GPU engine's batches are merged (issue 57)");
        assertTrue(Coalescing.AUTO.appliesTo(Backend.GPU, true));
        assertTrue(Coalescing.AUTO.appliesTo(Backend.CPU, true));
        assertFalse(Coalescing.AUTO.appliesTo(Backend.CPU, false));
        assertFalse(Coalescing.OFF.appliesTo(Backend.CPU, true));
        Coalescing g = Coalescing.AUTO.forGroupCommit();
        assertEquals(0, g.hostCacheBytes());
        assertEquals(java.time.Duration.ZERO, g.spin());
    }

    @Test
    void closeRunsWhatIsQueuedAndRefusesTheRest() {
        GPHashIndex index = index("x.pool", Coalescing.on(Duration.ofMillis(50), 4096));
        List<CompletableFuture<Boolean>> fs = new ArrayList<>();
        for (long k = 0; k < 100; k++) {
            fs.add(index.putAsync(k, value(k, 1)));
        }
        index.close();
        for (CompletableFuture<Boolean> f : fs) {
            assertTrue(f.join(), "queued before close: run");
        }
        assertThrows(IndexClosedException.class, () -> index.putAsync(1L, value(1, 2)));
        try (GPHashIndex again = GPHashIndex.builder(index.path()).coalescing(Coalescing.OFF).open()) {
            assertEquals(100, again.size());
        }
    }

    @Test
    void argumentsAreCheckedBeforeQueueingAndFuturesCompose() {
        try (GPHashIndex index = index("f.pool", Coalescing.on(Duration.ZERO, 4096))) {
            CompletableFuture<Boolean> f = index.putAsync(1L, value(1, 1));
            f.join();
            // A wrong-sized key is refused before it is queued, with the caller's own exception.
            assertThrows(IllegalArgumentException.class, () -> index.putAsync(new byte[3], value(1, 1)));
            CompletionException e = assertThrows(CompletionException.class,
                    () -> index.putAsync(2L, value(2, 1)).thenApply(x -> {
                        throw new IllegalStateException("downstream");
                    }).join());
            assertEquals("downstream", e.getCause().getMessage());
        }
    }
}
