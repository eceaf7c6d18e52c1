package org.gphash.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntToLongFunction;

import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.GPHashConfig;
import org.gphash.GPHashIndex;
import org.gphash.GpuTuning;
import org.gphash.IndexMirror;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.bktcache.BktCacheConfig;
import org.gphash.spi.Engine;
import org.gphash.table.VerifyReport;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Issue 57: writes the host runs on the GPU engine's pool (single calls, between the GPU's work)
 * seen by the GPU's next batch on every route: the index mirror on and off, BktCache holding the
 * buckets written, every kind of write including the conditional ones and deletes, with resizes and
 * heap growth in between; checked against a plain map, and the mirror against the pool slot by slot.
 */
class HostOperationsGpuTest {

    private static final int VS = GpuTestSupport.VALUE_SIZE;
    /** Single calls on the host; every batch of more than one operation on the GPU. */
    private static final GpuTuning SINGLES_ON_HOST = GpuTuning.DEFAULTS.with("hostBatchesMax=1");

    private static GPHashConfig config(Path pool, boolean mirror, boolean cache, long capacity) {
        return GPHashIndex.builder(pool).backend(Backend.GPU).keySize(8).valueSize(VS).initialCapacity(capacity).seed(5)
                .indexMirror(mirror ? IndexMirror.AUTO : IndexMirror.OFF).gpuTuning(SINGLES_ON_HOST)
                .bucketCache(cache ? BktCacheConfig.builder().share(0.5).reloadEveryOperations(0).counterSampleShift(0).build()
                        : BktCacheConfig.DISABLED)
                .config();
    }

    private static MemorySegment key(long k) {
        return MemorySegment.ofArray(GpuTestSupport.key(k, 8));
    }

    private static byte[] value(long k, long version) {
        return GpuTestSupport.value(k, version);
    }

    /** Keys 0..keys-1 read by one batch of gets, on the GPU (this class runs only single calls on the host). */
    private static BatchResult getAllOnGpu(GpuEngine engine, int keys) {
        Batch gets = Batch.create(8, VS, keys);
        for (long k = 0; k < keys; k++) {
            gets.get(GpuTestSupport.key(k, 8));
        }
        BatchResult r = new BatchResult(VS, keys);
        engine.execute(gets, r);
        return r;
    }

    /**
     * {@code count} single writes of every kind on {@code engine}, each checked against {@code model}
     * and applied to it; keys from {@code keyOf} (given the write's number); {@return the last version written}
     */
    static long singleWrites(Engine engine, Map<Long, byte[]> model, Random random, int count, long version,
                             IntToLongFunction keyOf, String where) {
        OpKind[] singles = {OpKind.PUT, OpKind.INSERT, OpKind.UPDATE, OpKind.DELETE, OpKind.COMPARE_AND_SET,
                OpKind.COMPARE_AND_DELETE};
        for (int i = 0; i < count; i++) {
            long k = keyOf.applyAsLong(i);
            OpKind kind = singles[random.nextInt(singles.length)];
            byte[] v = value(k, ++version);
            byte[] current = model.get(k);
            byte[] expected = current != null && random.nextBoolean() ? current : value(k, -1);
            Outcome o = switch (kind) {
                case PUT -> engine.put(key(k), MemorySegment.ofArray(v));
                case INSERT -> engine.insert(key(k), MemorySegment.ofArray(v));
                case UPDATE -> engine.update(key(k), MemorySegment.ofArray(v));
                case DELETE -> engine.delete(key(k));
                case COMPARE_AND_SET -> engine.compareAndSet(key(k), MemorySegment.ofArray(expected), MemorySegment.ofArray(v));
                case COMPARE_AND_DELETE -> engine.compareAndDelete(key(k), MemorySegment.ofArray(expected));
                default -> throw new AssertionError(kind);
            };
            boolean matches = current != null && Arrays.equals(current, expected);
            Outcome want = switch (kind) {
                case PUT -> current == null ? Outcome.INSERTED : Outcome.UPDATED;
                case INSERT -> current == null ? Outcome.INSERTED : Outcome.EXISTS;
                case UPDATE, DELETE -> current == null ? Outcome.NOT_FOUND : kind == OpKind.UPDATE ? Outcome.UPDATED
                        : Outcome.DELETED;
                case COMPARE_AND_SET -> current == null ? Outcome.NOT_FOUND : matches ? Outcome.UPDATED : Outcome.EXISTS;
                case COMPARE_AND_DELETE -> current == null ? Outcome.NOT_FOUND : matches ? Outcome.DELETED : Outcome.EXISTS;
                default -> throw new AssertionError(kind);
            };
            assertEquals(want, o, kind + " of key " + k + ", " + where);
            if (want == Outcome.INSERTED || want == Outcome.UPDATED) {
                model.put(k, v);
            } else if (want == Outcome.DELETED) {
                model.remove(k);
            }
        }
        return version;
    }

    /** Every key of {@code model}'s range read by one GPU batch and checked. */
    private static void checkAllOnGpu(GpuEngine engine, Map<Long, byte[]> model, int keys, String where) {
        BatchResult gr = getAllOnGpu(engine, keys);
        for (int k = 0; k < keys; k++) {
            byte[] want = model.get((long) k);
            assertEquals(want == null ? Outcome.NOT_FOUND : Outcome.FOUND, gr.outcome(k), "key " + k + ", " + where);
            if (want != null) {
                assertTrue(Arrays.equals(want, gr.value(k)), "key " + k + "'s value, " + where);
            }
        }
        VerifyReport report = engine.diagnostics().verify();
        assertTrue(report.sound(), report.toString());
        assertEquals(0, report.staleMirrorSlots(), report.toString());
        assertEquals(model.size(), engine.stats().size(), "items, " + where);
    }

    /**
     * The open that serves calls on the host while the GPU starts ({@link HostFirstEngine}): writes of
     * every kind before the hand-over, on a pool made for 256 items (the host resizes it, with the
     * GPU's kernels, and grows its heap), then the GPU engine's first batch reads every one of them on
     * each route; writes after the hand-over reach the next GPU batch too; the pool closes cleanly and
     * opens again the same way.
     */
    @ParameterizedTest(name = "mirror {0}, BktCache {1}")
    @CsvSource({"true, false", "true, true", "false, true"})
    void writesServedBeforeTheGpuIsUpReachItsFirstBatch(boolean mirror, boolean cache) throws Exception {
        GpuTestSupport.assumeGpu();
        try (GpuTestSupport t = GpuTestSupport.create()) {
            GPHashConfig config = config(t.pool("hf"), mirror, cache, 256);
            CountDownLatch go = new CountDownLatch(1);
            Map<Long, byte[]> model = new HashMap<>();
            Random random = new Random(mirror ? 3 : 4);
            int keys = 3000;
            Engine served = GpuEngines.createServing(config, () -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            try {
                HostFirstEngine first = assertInstanceOf(HostFirstEngine.class, served);
                // On a thread of its own, with no CUDA context current: the host's resizes run the GPU's
                // kernels on whatever thread writes (a crash test's workers found them without one).
                long[] version = new long[1];
                AtomicReference<Throwable> failed = new AtomicReference<>();
                Thread writer = Thread.ofPlatform().start(() -> {
                    try {
                        version[0] = singleWrites(served, model, random, 6000, 0, i -> random.nextInt(keys),
                                "before the hand-over");
                    } catch (Throwable e) {
                        failed.set(e);
                    }
                });
                writer.join();
                if (failed.get() != null) {
                    throw new AssertionError("a write before the hand-over failed", failed.get());
                }
                assertFalse(first.handedOver(), "the writes ran before the hand-over");
                go.countDown();
                GpuEngine gpu = GpuEngines.gpuEngine(served);
                assumeTrue(mirror == gpu.usesIndexMirror(), "the index mirror forced off (-Dgphash.indexMirror=OFF)");
                assertTrue(gpu.stats().resizes() > 0, "the host resized the table before the hand-over");
                if (cache) {
                    gpu.reloadBucketCache(true);
                }
                checkAllOnGpu(gpu, model, keys, "after the hand-over");
                singleWrites(served, model, random, 2000, version[0], i -> random.nextInt(keys), "after the hand-over");
                if (cache) {
                    gpu.reloadBucketCache(true);
                }
                checkAllOnGpu(gpu, model, keys, "after writes past the hand-over");
                assertTrue(gpu.diagnostics().openTimes().servedOnHost() > 0, gpu.diagnostics().openTimes().toString());
            } finally {
                served.close();
            }
            Engine again = GpuEngines.openServing(config);
            try {
                assertInstanceOf(HostFirstEngine.class, again, "a pool closed cleanly opens on the host first");
                MemorySegment out = MemorySegment.ofArray(new byte[VS]);
                for (long k = 0; k < keys; k++) {
                    byte[] want = model.get(k);
                    assertEquals(want == null ? Outcome.NOT_FOUND : Outcome.FOUND, again.get(key(k), out), "key " + k);
                    if (want != null) {
                        assertTrue(Arrays.equals(want, out.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE)), "key " + k);
                    }
                }
                checkAllOnGpu(GpuEngines.gpuEngine(again), model, keys, "opened again");
            } finally {
                again.close();
            }
        }
    }

    @ParameterizedTest(name = "mirror {0}, BktCache {1}")
    @CsvSource({"true, false", "true, true", "false, true"})
    void hostWritesReachTheGpusNextBatch(boolean mirror, boolean cache) {
        GpuTestSupport.assumeGpu();
        try (GpuTestSupport t = GpuTestSupport.create();
             GpuEngine engine = GpuEngines.create(config(t.pool("hw"), mirror, cache, 256))) {
            assumeTrue(mirror == engine.usesIndexMirror(), "the index mirror forced off (-Dgphash.indexMirror=OFF)");
            Map<Long, byte[]> model = new HashMap<>();
            Random random = new Random(mirror ? 1 : 2);
            int keys = 3000;  // a pool made for 256: the GPU's batches resize it and grow its heap between rounds
            long version = 0;
            for (int round = 0; round < 12; round++) {
                // 1. A writing batch on the GPU, of distinct keys (the pool path does not keep batch order on a key).
                Batch writes = Batch.create(8, VS, 600);
                java.util.Set<Long> inBatch = new java.util.HashSet<>();
                for (int i = 0; i < 600; i++) {
                    long k;
                    do {
                        k = random.nextInt(keys);
                    } while (!inBatch.add(k));
                    writes.add(i % 5 == 4 ? OpKind.DELETE : OpKind.PUT, GpuTestSupport.key(k, 8), value(k, ++version));
                }
                BatchResult wr = new BatchResult(VS, 600);
                engine.execute(writes, wr);
                for (int i = 0; i < 600; i++) {
                    long k = GpuTestSupport.keyOf(writes.key(i));
                    if (writes.kind(i) == OpKind.DELETE) {
                        model.remove(k);
                    } else {
                        model.put(k, writes.values().asSlice((long) i * VS, VS).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
                    }
                }
                if (cache) {
                    engine.reloadBucketCache(true);  // the buckets just written are hot: the cache holds them
                }
                // 2. Single writes on the host, of every kind, on keys the GPU just wrote and on new ones.
                long hostWritesBefore = engine.hostOps.writes.sum();
                version = singleWrites(engine, model, random, 400, version,
                        i -> i % 2 == 0 ? GpuTestSupport.keyOf(writes.key(random.nextInt(600))) : random.nextInt(keys),
                        "round " + round);
                assertTrue(engine.hostOps.writes.sum() > hostWritesBefore, "single writes ran on the host");
                // 3. Every key read back by a batch on the GPU (the mirror's probe, BktCache's values).
                BatchResult gr = getAllOnGpu(engine, keys);
                for (int k = 0; k < keys; k++) {
                    byte[] want = model.get((long) k);
                    assertEquals(want == null ? Outcome.NOT_FOUND : Outcome.FOUND, gr.outcome(k), "key " + k + ", round " + round);
                    if (want != null) {
                        assertTrue(Arrays.equals(want, gr.value(k)), "key " + k + "'s value, round " + round);
                    }
                }
                // 4. The mirror and the pool agree slot by slot, and the pool is whole.
                VerifyReport report = engine.diagnostics().verify();
                assertTrue(report.sound(), report.toString());
                assertEquals(0, report.staleMirrorSlots(), report.toString());
                assertEquals(model.size(), engine.stats().size(), "items, round " + round);
            }
            assertTrue(engine.stats().resizes() > 0, "the GPU's batches resized the table between host writes");
        }
    }

    /**
     * Host writes that find the heap short grow it on the host, by a sixteenth of the heap at least,
     * rather than hand each such write to the GPU (which took the pool back from every host thread each
     * time); the GPU's next batch reads every value, from the grown heap, and the pool is whole.
     */
    @ParameterizedTest(name = "mirror {0}")
    @CsvSource({"true", "false"})
    void hostWritesGrowTheHeapOnTheHost(boolean mirror) {
        GpuTestSupport.assumeGpu();
        try (GpuTestSupport t = GpuTestSupport.create();
             GpuEngine engine = GpuEngines.create(config(t.pool("hg"), mirror, false, 256))) {
            assumeTrue(mirror == engine.usesIndexMirror(), "the index mirror forced off (-Dgphash.indexMirror=OFF)");
            int keys = 12_000;
            for (long k = 0; k < keys; k++) {  // new keys, then each updated twice: inserts and updates short of blocks
                assertEquals(Outcome.INSERTED, engine.put(key(k), MemorySegment.ofArray(value(k, 1))), "key " + k);
            }
            for (long v = 2; v <= 3; v++) {
                for (long k = 0; k < keys; k++) {
                    assertEquals(Outcome.UPDATED, engine.update(key(k), MemorySegment.ofArray(value(k, v))), "key " + k);
                }
            }
            assertTrue(engine.diagnostics().hostHeapGrowths() > 0, "the host grew the heap");
            assertTrue(engine.hostOps.writes.sum() >= 3L * keys - 100, "the writes ran on the host: " + engine.hostOps.writes.sum());
            BatchResult r = getAllOnGpu(engine, keys);
            for (int k = 0; k < keys; k++) {
                assertEquals(Outcome.FOUND, r.outcome(k), "key " + k);
                assertTrue(Arrays.equals(value(k, 3), r.value(k)), "key " + k + "'s value");
            }
            VerifyReport report = engine.diagnostics().verify();
            assertTrue(report.sound(), report.toString());
            assertEquals(0, report.staleMirrorSlots(), report.toString());
            assertEquals(keys, engine.stats().size());
        }
    }

    /**
     * With the default tuning, a small writing batch runs on the host before any figure exists, and the
     * host records its own time per write for the router (only its time inside the gate).
     */
    @ParameterizedTest(name = "mirror {0}")
    @CsvSource({"true", "false"})
    void aSmallWritingBatchRunsOnTheHostWhichMeasuresItsTime(boolean mirror) {
        GpuTestSupport.assumeGpu();
        try (GpuTestSupport t = GpuTestSupport.create();
             GpuEngine engine = GpuEngines.create(GPHashIndex.builder(t.pool("sb")).backend(Backend.GPU).keySize(8).valueSize(VS)
                     .initialCapacity(4096).indexMirror(mirror ? IndexMirror.AUTO : IndexMirror.OFF).config())) {
            assumeTrue(mirror == engine.usesIndexMirror(), "the index mirror forced off (-Dgphash.indexMirror=OFF)");
            assertTrue(GpuTuning.DEFAULTS.hostBatchesMax() >= 16, "the default tuning runs small batches on the host");
            Batch few = Batch.create(8, VS, 16);
            for (int i = 0; i < 16; i++) {
                few.put(GpuTestSupport.key(i, 8), value(i, 1));
            }
            BatchResult r = new BatchResult(VS, 16);
            engine.execute(few, r);
            assertEquals(16, r.count(Outcome.INSERTED));
            assertEquals(1, engine.hostOps.batches.sum(), "the batch ran on the host");
            // The host's first operations warm it up untimed (RouteCosts.HOST_WARMUP_OPS and _NANOS: 16384
            // of them and 100 ms); until it has a figure, small batches keep running there.
            int batches = 1;
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (Double.isNaN(engine.diagnostics().routeCosts().hostEstimate(16, true)) && System.nanoTime() < deadline) {
                engine.execute(few, r);
                assertEquals(16, r.count(Outcome.UPDATED));
                batches++;
            }
            // Every batch but those that measured the GPU again (one per 100 ms at most) ran on the host.
            assertTrue(engine.hostOps.batches.sum() >= batches - 100, engine.hostOps.batches.sum() + " of " + batches);
            assertFalse(Double.isNaN(engine.diagnostics().routeCosts().hostEstimate(16, true)),
                    "the host recorded its time per write: " + engine.diagnostics().routeCosts());
            Batch gets = Batch.create(8, VS, 16);
            for (int i = 0; i < 16; i++) {
                gets.get(GpuTestSupport.key(i, 8));
            }
            BatchResult g = new BatchResult(VS, 16);
            engine.execute(gets, g);
            assertEquals(16, g.count(Outcome.FOUND));
        }
    }

    @ParameterizedTest(name = "mirror {0}")
    @CsvSource({"true", "false"})
    void singleCallsFromManyThreadsBesideLargeGpuBatchesLoseNothing(boolean mirror) throws Exception {
        GpuTestSupport.assumeGpu();
        try (GpuTestSupport t = GpuTestSupport.create();
             GpuEngine engine = GpuEngines.create(config(t.pool("mt"), mirror, true, 4096))) {
            assumeTrue(mirror == engine.usesIndexMirror(), "the index mirror forced off (-Dgphash.indexMirror=OFF)");
            int threads = 8;
            int perThread = 3000;
            long batchKeys = 1L << 40;  // the batches' keys, apart from the threads'
            List<Map<Long, byte[]>> models = new ArrayList<>();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            CountDownLatch start = new CountDownLatch(1);
            List<Thread> all = new ArrayList<>();
            for (int id = 0; id < threads; id++) {
                Map<Long, byte[]> model = new HashMap<>();
                models.add(model);
                long base = (long) id << 32;
                int seed = id;
                all.add(Thread.ofPlatform().start(() -> {
                    try {
                        start.await();
                        Random random = new Random(seed);
                        MemorySegment out = MemorySegment.ofArray(new byte[VS]);
                        for (int n = 0; n < perThread; n++) {
                            long k = base + random.nextInt(500);
                            byte[] v = value(k, n);
                            switch (random.nextInt(4)) {
                                case 0, 1 -> {
                                    engine.put(key(k), MemorySegment.ofArray(v));
                                    model.put(k, v);
                                }
                                case 2 -> {
                                    engine.delete(key(k));
                                    model.remove(k);
                                }
                                default -> {
                                    Outcome o = engine.get(key(k), out);
                                    byte[] want = model.get(k);
                                    assertEquals(want == null ? Outcome.NOT_FOUND : Outcome.FOUND, o, "key " + k);
                                    if (want != null) {
                                        assertTrue(Arrays.equals(want, out.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE)));
                                    }
                                }
                            }
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                }));
            }
            Map<Long, byte[]> batchModel = new HashMap<>();
            Thread batches = Thread.ofPlatform().start(() -> {
                try {
                    start.await();
                    Random random = new Random(99);
                    for (int round = 0; round < 20; round++) {
                        Batch b = Batch.create(8, VS, 20_000);
                        int first = random.nextInt(40_000);
                        for (int i = 0; i < 20_000; i++) {
                            long k = batchKeys + (first + i) % 40_000;  // distinct keys: the pool path keeps no order on a key
                            byte[] v = value(k, round);
                            b.put(GpuTestSupport.key(k, 8), v);
                            batchModel.put(k, v);
                        }
                        engine.execute(b, new BatchResult(VS, 20_000));
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            });
            start.countDown();
            for (Thread th : all) {
                th.join();
            }
            batches.join();
            if (failure.get() != null) {
                throw new AssertionError(failure.get());
            }
            Map<Long, byte[]> everything = new HashMap<>(batchModel);
            models.forEach(everything::putAll);
            MemorySegment out = MemorySegment.ofArray(new byte[VS]);
            Batch gets = Batch.create(8, VS, everything.size());
            List<Long> order = new ArrayList<>(everything.keySet());
            for (long k : order) {
                gets.get(GpuTestSupport.key(k, 8));
            }
            BatchResult r = new BatchResult(VS, order.size());
            engine.execute(gets, r);
            for (int i = 0; i < order.size(); i++) {
                assertEquals(Outcome.FOUND, r.outcome(i), "key " + order.get(i));
                assertTrue(Arrays.equals(everything.get(order.get(i)), r.value(i)), "key " + order.get(i));
            }
            assertEquals(everything.size(), engine.stats().size());
            VerifyReport report = engine.diagnostics().verify();
            assertTrue(report.sound(), report.toString());
            assertEquals(0, report.staleMirrorSlots(), report.toString());
            assertTrue(engine.hostOps.writes.sum() > 0);
            assertTrue(engine.get(key(batchKeys - 1), out) == Outcome.NOT_FOUND);
        }
    }
}
