package org.gphash.cuda.pipeline;

import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;
import static org.gphash.cuda.GpuTestSupport.key;
import static org.gphash.cuda.GpuTestSupport.value;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;

import jcuda.Pointer;
import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.GPHashConfig;
import org.gphash.GpuTuning;
import org.gphash.IndexMirror;
import org.gphash.IndexStats;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.bktcache.BktCacheConfig;
import org.gphash.cuda.DeviceBatch;
import org.gphash.cuda.GpuEngine;
import org.gphash.cuda.GpuEngines;
import org.gphash.cuda.GpuTestSupport;
import org.gphash.cuda.routing.DistinctKeys;
import org.gphash.cuda.routing.MirrorChoice;
import org.gphash.cuda.runtime.CudaRuntime;
import org.gphash.cuda.runtime.DevicePointer;
import org.gphash.cuda.runtime.KernelParams;
import org.gphash.index.CpuEngine;
import org.gphash.spi.Engine;
import org.gphash.table.VerifyReport;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The v2 pipeline over the HBM index mirror: which path runs and why; batches dense with operations
 * on the same keys give exactly the CPU engine's results (the pipeline keeps batch order within a
 * key), through resizes and heap growth, as host and as device-resident batches; the pool it leaves
 * is sound for the CPU engine; the heap stays compact.
 */
class MirrorPathTest {

    @BeforeEach
    void gpu() {
        GpuTestSupport.assumeGpu();
    }

    private static GPHashConfig gpuConfig(java.nio.file.Path p, int keySize, long capacity, long seed, IndexMirror mirror,
                                          BktCacheConfig cache) {
        return GpuTestSupport.config(p, keySize, 2, 2, 8, capacity, seed, cache).withIndexMirror(mirror);
    }

    @Test
    void theMirrorRunsByDefaultAndOffWhenAsked() {
        try (GpuTestSupport t = GpuTestSupport.create()) {
            try (GpuEngine on = GpuEngines.create(gpuConfig(t.pool("on"), 8, 1000, 1, IndexMirror.REQUIRED,
                    BktCacheConfig.DISABLED))) {
                assertTrue(on.usesIndexMirror());
                assertTrue(on.stats().indexPlacement().startsWith("HBM mirror"), on.stats().toString());
            }
            try (GpuEngine off = GpuEngines.create(gpuConfig(t.pool("off"), 8, 1000, 1, IndexMirror.OFF,
                    BktCacheConfig.DISABLED))) {
                assertFalse(off.usesIndexMirror());
                assertTrue(off.stats().indexPlacement().contains("IndexMirror.OFF"), off.stats().toString());
            }
        }
    }

    @ParameterizedTest(name = "keys {0} B, device-resident {1}, cache {2}")
    @CsvSource({"8, false, false", "8, true, false", "13, false, true", "32, true, true", "8, false, true"})
    void sameKeyBatchesMatchTheCpuEngineExactly(int keySize, boolean deviceResident, boolean cache) {
        BktCacheConfig c = cache ? BktCacheConfig.builder().share(0.3).reloadEveryOperations(3000).counterSampleShift(0).build()
                : BktCacheConfig.DISABLED;
        try (GpuTestSupport t = GpuTestSupport.create();
             Engine cpu = CpuEngine.create(GpuTestSupport.config(t.pool("cpu"), Backend.CPU, keySize, 2, 2, 8, 256, 7));
             GpuEngine gpu = GpuEngines.create(gpuConfig(t.pool("gpu"), keySize, 256, 7, IndexMirror.REQUIRED, c));
             DeviceBatch device = new DeviceBatch(keySize, GpuTestSupport.VALUE_SIZE, 1)) {
            Random random = new Random(keySize * 101L + (deviceResident ? 1 : 0));
            OpKind[] kinds = GpuTestSupport.PLAIN_KINDS;
            long version = 0;
            BatchResult rc = new BatchResult(GpuTestSupport.VALUE_SIZE, 1);
            BatchResult rg = new BatchResult(GpuTestSupport.VALUE_SIZE, 1);
            for (int round = 0; round < 30; round++) {
                // Few keys per batch, so most keys see several operations of every kind; early rounds grow the table.
                int keySpace = round < 8 ? 4000 + round * 3000 : 300 + random.nextInt(3000);
                int n = 1 + random.nextInt(round % 6 == 5 ? 40_000 : 6_000);
                Batch batch = Batch.create(keySize, GpuTestSupport.VALUE_SIZE, n);
                for (int i = 0; i < n; i++) {
                    long k = round < 8 ? random.nextInt(keySpace) + round * 10_000L : random.nextInt(keySpace);
                    OpKind kind = round < 8 && random.nextInt(3) > 0 ? OpKind.PUT : kinds[random.nextInt(kinds.length)];
                    batch.add(kind, key(k, keySize), kind.hasValue() ? value(k, ++version) : null);
                }
                if (round % 5 == 2) {
                    gpu.reloadBucketCache(false);  // a load running while the batch does
                }
                cpu.execute(batch, rc);
                if (deviceResident) {
                    device.upload(batch);
                    gpu.features().executeOnDevice(device);
                    byte[] codes = device.downloadCodes();
                    byte[] values = device.downloadValues().toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
                    for (int i = 0; i < n; i++) {
                        String what = "round " + round + " op " + i + " " + batch.kind(i);
                        assertEquals(rc.outcome(i), Outcome.ofCode(codes[i]), what);
                        if (rc.outcome(i) == Outcome.FOUND || rc.outcome(i) == Outcome.REPLACED) {
                            assertArrayEquals(rc.value(i), java.util.Arrays.copyOfRange(values,
                                    i * GpuTestSupport.VALUE_SIZE, (i + 1) * GpuTestSupport.VALUE_SIZE), what + ": value");
                        }
                    }
                } else {
                    gpu.execute(batch, rg);
                    GpuTestSupport.assertSameResults(batch, rc, rg, "round " + round);
                }
                assertEquals(cpu.stats().size(), gpu.stats().size(), "round " + round + ": item count");
            }
            IndexStats s = gpu.stats();
            assertTrue(s.resizes() > 0, "the stream resized the table: " + s);
            assertTrue(s.heapGrowths() > 0, "the stream grew the heap: " + s);
            VerifyReport v = gpu.diagnostics().verify();
            assertTrue(v.sound(), "the pool the pipeline wrote, verified by the CPU: " + v);
            assertEquals(cpu.stats().size(), v.items());
            if (cache) {
                assertTrue(gpu.features().bucketCacheStats().hits() > 0, "values were served from BktCache: " + gpu.features().bucketCacheStats());
            }
            System.out.printf("mirror same-key %d B device %s cache %s: %s%n", keySize, deviceResident, cache, s);
        }
    }

    /** A GPU engine on the mirror (2 levels, 2 hashes), with a small, often reloaded BktCache or none. */
    private static GpuEngine mirrored(GpuTestSupport t, int keySize, int slots, long capacity, long seed, boolean cache) {
        return GpuEngines.create(mirroredConfig(t, keySize, slots, capacity, seed, cache));
    }

    private static org.gphash.GPHashConfig mirroredConfig(GpuTestSupport t, int keySize, int slots, long capacity, long seed,
                                                          boolean cache) {
        BktCacheConfig c = cache ? BktCacheConfig.builder().share(0.3).reloadEveryOperations(2000).counterSampleShift(0).build()
                : BktCacheConfig.DISABLED;
        return GpuTestSupport.config(t.pool("gpu"), keySize, 2, 2, slots, capacity, seed, c).withIndexMirror(IndexMirror.REQUIRED);
    }

    /**
     * Small batches of gets run in one launch (SmallReads): present, absent, deleted and repeated keys
     * give the CPU engine's results, through resizes, with and without BktCache, by sub-groups (8
     * slots) and by whole warps (2 slots); a batch one larger than the limit takes the pipeline.
     */
    @ParameterizedTest(name = "keys {0} B, {1} slots, cache {2}")
    @CsvSource({"8, 8, false", "13, 8, true", "32, 8, false", "8, 2, true", "16, 2, false"})
    void smallBatchesOfGetsRunInOneLaunchAndMatchTheCpuEngine(int keySize, int slots, boolean cache) {
        try (GpuTestSupport t = GpuTestSupport.create();
             Engine cpu = CpuEngine.create(GpuTestSupport.config(t.pool("cpu"), Backend.CPU, keySize, 2, 2, slots, 256, 5));
             // Every batch on the GPU: this test is of the one-launch route, which the host would take otherwise.
             GpuEngine gpu = GpuEngines.create(mirroredConfig(t, keySize, slots, 256, 5, cache)
                     .withGpuTuning(GpuTuning.fromSystemProperty().with("hostBatchesMax=0")))) {
            Random random = new Random(keySize * 31L + slots);
            BatchResult rc = new BatchResult(GpuTestSupport.VALUE_SIZE, 1);
            BatchResult rg = new BatchResult(GpuTestSupport.VALUE_SIZE, 1);
            long version = 0;
            int smallBatches = 0;
            for (int round = 0; round < 40; round++) {
                // Writes (they grow the table in the early rounds and delete some keys), then gets.
                Batch writes = Batch.create(keySize, GpuTestSupport.VALUE_SIZE, 2000);
                for (int i = 0; i < 2000; i++) {
                    long k = random.nextInt(1500 + round * 400);
                    boolean delete = random.nextInt(5) == 0;
                    writes.add(delete ? OpKind.DELETE : OpKind.PUT, key(k, keySize), delete ? null : value(k, ++version));
                }
                cpu.execute(writes, rc);
                gpu.execute(writes, rg);
                GpuTestSupport.assertSameResults(writes, rc, rg, "round " + round + " writes");
                int n = round % 10 == 9 ? GpuTuning.DEFAULTS.smallReadsMax() + 1 : 1 + random.nextInt(round % 3 == 0 ? 16 : GpuTuning.DEFAULTS.smallReadsMax());
                Batch gets = Batch.create(keySize, GpuTestSupport.VALUE_SIZE, n);
                for (int i = 0; i < n; i++) {
                    long k = i > 0 && random.nextInt(4) == 0 ? random.nextInt(i) : random.nextInt(2000 + round * 500);
                    gets.add(OpKind.GET, key(k, keySize), null);  // some keys repeat, some were never written
                }
                long before = gpu.diagnostics().smallReadBatches();
                cpu.execute(gets, rc);
                gpu.execute(gets, rg);
                GpuTestSupport.assertSameResults(gets, rc, rg, "round " + round + " gets");
                boolean small = n <= GpuTuning.DEFAULTS.smallReadsMax();
                assertEquals(small ? before + 1 : before, gpu.diagnostics().smallReadBatches(), "round " + round + ": " + n + " gets");
                smallBatches += small ? 1 : 0;
            }
            assertTrue(gpu.stats().resizes() > 0, "the writes resized the table: " + gpu.stats());
            assertEquals(smallBatches, gpu.diagnostics().smallReadBatches());
            assertTrue(gpu.diagnostics().verify().sound());
        }
    }

    /**
     * Small batches that write run in one launch and give the CPU engine's results for every kind,
     * through resizes and heap growth: of distinct keys without grouping (DistinctKeys), with a
     * repeated key grouped inside the launch.
     */
    @ParameterizedTest(name = "keys {0} B, {1} slots, cache {2}")
    @CsvSource({"8, 8, false", "13, 8, true", "8, 2, false"})
    void smallWritingBatchesRunInOneLaunchAndMatchTheCpuEngine(int keySize, int slots, boolean cache) {
        try (GpuTestSupport t = GpuTestSupport.create();
             Engine cpu = CpuEngine.create(GpuTestSupport.config(t.pool("cpu"), Backend.CPU, keySize, 2, 2, slots, 64, 9));
             // The default tuning whatever the suite's (-Dgphash.gpuTuning=smallWritesMax=0 runs the
             // rest of it with small writes staged), every batch on the GPU: this test is of the one-launch route.
             GpuEngine gpu = GpuEngines.create(mirroredConfig(t, keySize, slots, 64, 9, cache)
                     .withGpuTuning(GpuTuning.DEFAULTS.with("hostBatchesMax=0")))) {
            Random random = new Random(keySize * 7L + slots);
            OpKind[] kinds = GpuTestSupport.PLAIN_KINDS;
            BatchResult rc = new BatchResult(GpuTestSupport.VALUE_SIZE, 1);
            BatchResult rg = new BatchResult(GpuTestSupport.VALUE_SIZE, 1);
            long version = 0;
            int distinctBatches = 0;
            int writingBatches = 0;
            int repeatingBatches = 0;
            for (int round = 0; round < 600; round++) {
                int n = 1 + random.nextInt(round % 10 == 0 ? GpuTuning.DEFAULTS.distinctWritesMax() : 24);
                int space = 200 + round * 20;
                boolean repeat = round % 7 == 3 && n > 1;
                java.util.Set<Long> used = new java.util.HashSet<>();
                Batch batch = Batch.create(keySize, GpuTestSupport.VALUE_SIZE, n);
                long firstKey = -1;
                for (int i = 0; i < n; i++) {
                    long k;
                    do {
                        k = random.nextInt(space);
                    } while (!repeat && !used.add(k) && used.size() < space);
                    if (i == 0) {
                        firstKey = k;
                    } else if (repeat && i == n - 1) {
                        k = firstKey;  // at least one key repeats
                    }
                    OpKind kind = round < 100 && random.nextBoolean() ? OpKind.PUT : kinds[random.nextInt(kinds.length)];
                    batch.add(kind, key(k, keySize), kind.hasValue() ? value(k, ++version) : null);
                }
                long before = gpu.diagnostics().distinctWriteRuns();
                long launchesBefore = gpu.diagnostics().smallWriteBatches();
                cpu.execute(batch, rc);
                gpu.execute(batch, rg);
                GpuTestSupport.assertSameResults(batch, rc, rg, "round " + round);
                boolean distinct = DistinctKeys.test(batch, 0, n);
                boolean writes = false;
                for (int i = 0; i < n; i++) {
                    writes |= batch.kind(i) != OpKind.GET;
                }
                if (distinct && writes) {
                    assertTrue(gpu.diagnostics().distinctWriteRuns() > before, "round " + round + " ran ungrouped");
                    distinctBatches++;
                } else {
                    assertEquals(before, gpu.diagnostics().distinctWriteRuns(), "round " + round + " grouped");
                }
                if (writes) {
                    assertTrue(gpu.diagnostics().smallWriteBatches() > launchesBefore, "round " + round + " ran in one launch");
                    writingBatches++;
                    repeatingBatches += distinct ? 0 : 1;
                }
                assertEquals(cpu.stats().size(), gpu.stats().size(), "round " + round + ": item count");
            }
            assertTrue(distinctBatches > 300, "batches of distinct keys ran ungrouped: " + distinctBatches);
            assertTrue(repeatingBatches > 40, "batches with a repeated key: " + repeatingBatches);
            // Every writing batch in one launch (a rerun after a resize too), its heap take next fit
            // from a cursor, through resizes and heap growths (each resets the cursor).
            assertTrue(gpu.diagnostics().smallWriteBatches() >= writingBatches, "batches in one launch: " + gpu.diagnostics().smallWriteBatches());
            assertTrue(gpu.stats().resizes() > 0 && gpu.stats().heapGrowths() > 0, gpu.stats().toString());
            assertTrue(gpu.diagnostics().verify().sound());
        }
    }

    @Test
    void aPoolWrittenThroughTheMirrorOpensOnTheCpuEngineWithEveryItem() {
        try (GpuTestSupport t = GpuTestSupport.create()) {
            java.nio.file.Path p = t.pool("handover");
            int n = 50_000;
            try (GpuEngine gpu = GpuEngines.create(gpuConfig(p, 8, 1000, 3, IndexMirror.REQUIRED, BktCacheConfig.DISABLED))) {
                Batch b = Batch.create(8, GpuTestSupport.VALUE_SIZE, n);
                for (long k = 0; k < n; k++) {
                    b.put(key(k, 8), value(k, 1));
                }
                gpu.execute(b, new BatchResult(GpuTestSupport.VALUE_SIZE, n));
                Batch d = Batch.create(8, GpuTestSupport.VALUE_SIZE, n / 2);
                for (long k = 0; k < n; k += 2) {
                    d.delete(key(k, 8));
                }
                gpu.execute(d, new BatchResult(GpuTestSupport.VALUE_SIZE, n / 2));
            }
            try (CpuEngine cpu = CpuEngine.open(GpuTestSupport.config(p, Backend.CPU, 8, 2, 2, 8, 1000, 3))) {
                assertEquals(0, cpu.lastRecovery().insertSlotsCleared(), cpu.lastRecovery().toString());
                assertEquals(n / 2, cpu.stats().size());
                for (long k = 0; k < n; k++) {
                    java.lang.foreign.MemorySegment out = java.lang.foreign.MemorySegment.ofArray(new byte[GpuTestSupport.VALUE_SIZE]);
                    Outcome o = cpu.get(java.lang.foreign.MemorySegment.ofArray(key(k, 8)), out);
                    assertEquals(k % 2 == 0 ? Outcome.NOT_FOUND : Outcome.FOUND, o, "key " + k);
                    if (o == Outcome.FOUND) {
                        assertArrayEquals(value(k, 1), out.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE), "key " + k);
                    }
                }
            }
        }
    }

    /**
     * verify() compares the HBM mirror with the pool slot by slot, tags included: after inserts,
     * updates and deletes through the pipeline and through one-launch small batches, and a resize, it
     * finds no slot stale; it counts a tag and a meta word changed in the mirror behind the engine.
     */
    @Test
    void verifyFindsTheMirrorAndItsTagsExactAndCountsWhatDiffers() {
        try (GpuTestSupport t = GpuTestSupport.create();
             GpuEngine gpu = GpuEngines.create(gpuConfig(t.pool("tags"), 8, 1000, 4, IndexMirror.REQUIRED,
                     BktCacheConfig.DISABLED))) {
            int n = 6000;
            Batch b = Batch.create(8, GpuTestSupport.VALUE_SIZE, n);
            for (long k = 0; k < n; k++) {
                b.put(key(k, 8), value(k, 1));
            }
            gpu.execute(b, new BatchResult(GpuTestSupport.VALUE_SIZE, n));
            Batch d = Batch.create(8, GpuTestSupport.VALUE_SIZE, n);
            for (long k = 0; k < n; k++) {
                if (k % 3 == 0) {
                    d.delete(key(k, 8));
                } else {
                    d.put(key(k, 8), value(k, 2));
                }
            }
            gpu.execute(d, new BatchResult(GpuTestSupport.VALUE_SIZE, n));
            Batch small = Batch.create(8, GpuTestSupport.VALUE_SIZE, 64);
            for (long k = 0; k < 64; k++) {
                if (k % 2 == 0) {
                    small.put(key(n + k, 8), value(n + k, 1));
                } else {
                    small.delete(key(k, 8));
                }
            }
            gpu.execute(small, new BatchResult(GpuTestSupport.VALUE_SIZE, 64));
            assertTrue(gpu.stats().resizes() > 0, "the table resized, so the mirror and its tags were rebuilt: " + gpu.stats());
            VerifyReport clean = gpu.diagnostics().verify();
            assertTrue(clean.sound(), clean.toString());
            assertEquals(0, clean.staleMirrorSlots());

            java.nio.ByteBuffer params = java.nio.ByteBuffer.wrap(((MirrorPath) GpuTestSupport.pathOf(gpu)).mirrorTableParams())
                    .order(java.nio.ByteOrder.LITTLE_ENDIAN);
            long level0 = params.getLong(8);
            long tags = params.getLong(KernelParams.TABLE.byteOffset("tags"));
            CudaRuntime.get().bind();
            short[] tag = new short[1];
            cuMemcpyDtoH(Pointer.to(tag), DevicePointer.at(tags), 2);
            tag[0] ^= (short) 0x8000;  // slot 0 of bucket 0: its tag no longer its word's fingerprint
            cuMemcpyHtoD(DevicePointer.at(tags), Pointer.to(tag), 2);
            assertEquals(1, gpu.diagnostics().verify().staleMirrorSlots());
            long[] word = new long[1];
            long slot1 = level0 + 16;  // slot 1 of bucket 0 (8-byte keys: 16-byte slots)
            cuMemcpyDtoH(Pointer.to(word), DevicePointer.at(slot1), 8);
            word[0] ^= 1L << 20;  // its value offset, not its fingerprint: the tag still agrees
            cuMemcpyHtoD(DevicePointer.at(slot1), Pointer.to(word), 8);
            VerifyReport stale = gpu.diagnostics().verify();
            assertEquals(2, stale.staleMirrorSlots(), stale.toString());
            assertFalse(stale.sound());
        }
    }

    @Test
    void updatesReuseFreedBlocksLowestFirstSoTheHeapStaysCompact() {
        try (GpuTestSupport t = GpuTestSupport.create();
             GpuEngine gpu = GpuEngines.create(gpuConfig(t.pool("compact"), 8, 200_000, 5, IndexMirror.REQUIRED,
                     BktCacheConfig.DISABLED))) {
            int n = 100_000;
            Batch b = Batch.create(8, GpuTestSupport.VALUE_SIZE, n);
            BatchResult r = new BatchResult(GpuTestSupport.VALUE_SIZE, n);
            for (int round = 0; round < 12; round++) {
                b.clear();
                for (long k = 0; k < n; k++) {
                    b.put(key(k, 8), value(k, round));
                }
                gpu.execute(b, r);
            }
            IndexStats s = gpu.stats();
            // One block per item plus one batch's fresh blocks at most: updates reuse what the last batch freed.
            assertTrue(s.valueBlocks() - s.valueBlocksFree() == n, s.toString());
            assertTrue(s.valueBlocks() <= 2.6 * n, "the heap follows the data, not twelve rounds of updates: " + s);
            assertTrue(gpu.diagnostics().verify().sound());
        }
    }

    @Test
    void requiredFailsClearlyWhenTheGpuHasNoRoom() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> MirrorChoice.decide(IndexMirror.REQUIRED, 10L << 30, 1L << 30, 512L << 20));
        assertTrue(e.getMessage().contains("10240 MiB"), e.getMessage());
    }
}
