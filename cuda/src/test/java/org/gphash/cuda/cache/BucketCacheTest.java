package org.gphash.cuda.cache;

import static org.gphash.cuda.GpuTestSupport.key;
import static org.gphash.cuda.GpuTestSupport.value;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.bktcache.BktCacheConfig;
import org.gphash.bktcache.BktCacheStats;
import org.gphash.bktcache.loading.ThresholdSearch;
import org.gphash.cuda.GpuEngine;
import org.gphash.cuda.GpuEngines;
import org.gphash.cuda.GpuTestSupport;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * BktCache on the GPU: hot buckets served from GPU memory never return a deleted key or a stale
 * value, also while loads race with the writes; the GPU's selection is the host reference's; a
 * search-only hot set is served from the cache alone.
 */
class BucketCacheTest {

    private static final int KEYS = 20_000;
    private static final int HOT = 2_000;

    @BeforeEach
    void gpu() {
        GpuTestSupport.assumeGpu();
    }

    private static BktCacheConfig.Builder manualLoads() {
        return BktCacheConfig.builder().share(0.4).reloadEveryOperations(0).counterSampleShift(0);
    }

    private static void fill(GpuEngine gpu, Map<Long, byte[]> model) {
        Batch b = Batch.create(8, GpuTestSupport.VALUE_SIZE, KEYS);
        for (long k = 0; k < KEYS; k++) {
            byte[] v = value(k, 1);
            b.add(OpKind.INSERT, key(k, 8), v);
            model.put(k, v);
        }
        BatchResult r = new BatchResult(GpuTestSupport.VALUE_SIZE, KEYS);
        gpu.execute(b, r);
    }

    /** GETs of keys 0..HOT, many times: those buckets become the hottest. */
    /**
     * A GPU engine with manually loaded BktCache whose batches of gets all run through the pipeline,
     * which reads cached buckets (smallReadsMax 0; hostBatchesMax 0: none on the host): a batch of gets small enough for one launch reads
     * the pool, cache or not (docs/DESIGN-GPU.md, "Routes"), and these tests are about what the cache serves.
     */
    private static org.gphash.GPHashConfig throughThePipeline(java.nio.file.Path pool, long seed) {
        return org.gphash.GPHashIndex.builder(pool).backend(org.gphash.Backend.GPU).keySize(8)
                .valueSize(GpuTestSupport.VALUE_SIZE).levels(2).hashes(2).slotsPerBucket(8).initialCapacity(2 * KEYS)
                .seed(seed).bucketCache(manualLoads().build()).gpuTuning(org.gphash.GpuTuning.DEFAULTS.with("smallReadsMax=0,hostBatchesMax=0"))
                .config();
    }

    private static void readHotSet(GpuEngine gpu, int times) {
        Batch b = Batch.create(8, GpuTestSupport.VALUE_SIZE, HOT);
        for (long k = 0; k < HOT; k++) {
            b.add(OpKind.GET, key(k, 8), null);
        }
        BatchResult r = new BatchResult(GpuTestSupport.VALUE_SIZE, HOT);
        for (int i = 0; i < times; i++) {
            gpu.execute(b, r);
        }
    }

    @Test
    void cachedBucketsNeverServeDeletedKeysOrStaleValues() {
        Random random = new Random(17);
        try (GpuTestSupport t = GpuTestSupport.create();
             GpuEngine gpu = GpuEngines.create(throughThePipeline(t.pool("fresh"), 5))) {
            Map<Long, byte[]> model = new HashMap<>();
            fill(gpu, model);
            readHotSet(gpu, 20);  // well above the inserts' one count per candidate bucket
            assertTrue(gpu.reloadBucketCache(true));
            long version = 1;
            long hitsBefore = gpu.features().bucketCacheStats().hits();
            for (int round = 0; round < 40; round++) {
                // Writes to hot keys (cached buckets): updates, deletes, re-inserts, read-modify-writes.
                Batch w = Batch.create(8, GpuTestSupport.VALUE_SIZE, HOT);
                boolean[] used = new boolean[HOT];
                for (int i = 0; i < HOT / 2; i++) {
                    int k = random.nextInt(HOT);
                    if (used[k]) {
                        continue;
                    }
                    used[k] = true;
                    OpKind kind = switch (random.nextInt(5)) {
                        case 0 -> OpKind.DELETE;
                        case 1 -> OpKind.INSERT;
                        case 2 -> OpKind.READ_MODIFY_WRITE;
                        case 3 -> OpKind.PUT;
                        default -> OpKind.UPDATE;
                    };
                    byte[] v = kind.hasValue() ? value(k, ++version) : null;
                    w.add(kind, key(k, 8), v);
                    switch (kind) {
                        case DELETE -> model.remove((long) k);
                        case INSERT -> model.putIfAbsent((long) k, v);
                        case PUT -> model.put((long) k, v);
                        default -> model.computeIfPresent((long) k, (x, old) -> v);
                    }
                }
                if (round % 4 == 1) {
                    gpu.reloadBucketCache(false);  // races with the writes and the reads below
                }
                BatchResult wr = new BatchResult(GpuTestSupport.VALUE_SIZE, w.size());
                gpu.execute(w, wr);
                // Every hot key read back: present exactly when the model has it, with its value.
                Batch r = Batch.create(8, GpuTestSupport.VALUE_SIZE, HOT);
                for (long k = 0; k < HOT; k++) {
                    r.add(OpKind.GET, key(k, 8), null);
                }
                BatchResult rr = new BatchResult(GpuTestSupport.VALUE_SIZE, HOT);
                gpu.execute(r, rr);
                for (int k = 0; k < HOT; k++) {
                    byte[] expected = model.get((long) k);
                    String what = "round " + round + " key " + k;
                    if (expected == null) {
                        assertEquals(Outcome.NOT_FOUND, rr.outcome(k), what + " was deleted");
                    } else {
                        assertEquals(Outcome.FOUND, rr.outcome(k), what);
                        assertArrayEquals(expected, rr.value(k), what + ": stale value");
                    }
                }
            }
            BktCacheStats s = gpu.features().bucketCacheStats();
            System.out.println("fresh values: " + s);
            assertTrue(s.hits() - hitsBefore > 40L * HOT / 2, "the hot reads were served by the cache: " + s);
            assertTrue(gpu.diagnostics().verify().sound());
        }
    }

    @Test
    void gpuSelectionIsTheHostReference() {
        try (GpuTestSupport t = GpuTestSupport.create();
             GpuEngine gpu = GpuEngines.create(GpuTestSupport.config(t.pool("select"), 8, 2, 2, 8, 2 * KEYS, 9,
                     manualLoads().share(0.05).build()))) {
            fill(gpu, new HashMap<>());
            // Skewed reads: key k read (k % 7) + 1 times, so scores have many distinct values and ties.
            Random random = new Random(3);
            for (int pass = 1; pass <= 7; pass++) {
                Batch b = Batch.create(8, GpuTestSupport.VALUE_SIZE, KEYS);
                for (long k = 0; k < KEYS; k++) {
                    if (k % 7 >= pass - 1 && random.nextInt(3) > 0) {
                        b.add(OpKind.GET, key(k, 8), null);
                    }
                }
                gpu.execute(b, new BatchResult(GpuTestSupport.VALUE_SIZE, b.size()));
            }
            BucketCache cache = gpu.features().bucketCache();
            int[] scores = cache.scores();
            long k = cache.stats().capacityBuckets();
            ThresholdSearch.Threshold th = ThresholdSearch.find(k, ThresholdSearch.overArray(scores));
            assertTrue(gpu.reloadBucketCache(true));
            int[] g = cache.cachedBuckets();
            boolean[] cached = new boolean[scores.length];
            long n = 0;
            for (int x : g) {
                if (x != -1) {
                    cached[x] = true;
                    n++;
                }
            }
            assertEquals(th.above() + th.tiesToTake(), n, "buckets loaded: " + th);
            for (int x = 0; x < scores.length; x++) {
                long s = Integer.toUnsignedLong(scores[x]);
                if (s > th.value()) {
                    assertTrue(cached[x], "bucket " + x + " with score " + s + " above the threshold " + th.value());
                }
                if (cached[x]) {
                    assertTrue(s >= th.value(), "bucket " + x + " with score " + s + " below the threshold " + th);
                }
            }
            assertEquals(0, cache.stats().abandonedFetches());
            // LFU ages: every counter the load saw is halved (no batch ran since).
            int[] aged = cache.scores();
            for (int x = 0; x < scores.length; x++) {
                long s = Integer.toUnsignedLong(scores[x]);
                assertEquals(s > 1 ? s / 2 : s, Integer.toUnsignedLong(aged[x]), "bucket " + x);
            }
        }
    }

    @Test
    void searchesOfACachedHotSetNeedNoPoolAccess() {
        try (GpuTestSupport t = GpuTestSupport.create();
             GpuEngine gpu = GpuEngines.create(throughThePipeline(t.pool("hits"), 13))) {
            fill(gpu, new HashMap<>());
            readHotSet(gpu, 20);
            gpu.reloadBucketCache(true);
            BktCacheStats before = gpu.features().bucketCacheStats();
            readHotSet(gpu, 5);
            BktCacheStats after = gpu.features().bucketCacheStats();
            long hits = after.hits() - before.hits();
            long misses = after.misses() - before.misses();
            System.out.printf("hot set after a load: %d hits, %d misses; %s%n", hits, misses, after);
            assertEquals(5L * HOT, hits + misses);
            assertTrue(hits >= 0.99 * 5 * HOT, "a hot set smaller than the cache is served by it: " + hits + " hits");
            assertTrue(after.reloads() == 1 && after.cachedBuckets() > 0, after.toString());
        }
    }
}
