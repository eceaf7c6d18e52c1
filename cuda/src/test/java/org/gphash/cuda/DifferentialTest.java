package org.gphash.cuda;

import static org.gphash.cuda.GpuTestSupport.key;
import static org.gphash.cuda.GpuTestSupport.value;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;

import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.bktcache.BktCacheConfig;
import org.gphash.bktcache.BktCacheStats;
import org.gphash.bktcache.CachePolicy;
import org.gphash.index.CpuEngine;
import org.gphash.spi.Engine;
import org.gphash.table.VerifyReport;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * One random operation stream through the CPU engine (the reference) and the GPU engine: the same
 * outcome and value for every operation, the same contents at the end, a sound pool. Keys within one
 * batch are distinct (several operations on one key in a batch may run in any order on the GPU;
 * {@link SameKeyBatchTest} covers those). Small initial capacities force resizes, and a geometry of
 * 1 level x 2 hashes x 4 slots forces the rehash to add extra levels.
 *
 * <p>BktCache runs in most cases, loading every 2000 operations on its own stream, and also on demand
 * right before some batches, so that loads race with the batch's operations; the cache must have
 * served operations (hits) for the case to count.
 */
class DifferentialTest {

    @BeforeEach
    void gpu() {
        GpuTestSupport.assumeGpu();
    }

    @ParameterizedTest(name = "keys {0} B, {1}x{2}x{3}, seed {4}, cache {5}")
    @CsvSource({
            "8, 2, 2, 8, 1, off",
            "8, 2, 2, 8, 2, LFU 0.2",
            "32, 2, 2, 8, 3, LFU 0.4",
            "13, 2, 2, 8, 4, LRU 0.2",
            "8, 1, 2, 4, 5, RANDOM 0.2",
            "8, 4, 2, 4, 6, LFU 0.2",
            "16, 2, 4, 4, 7, LFU-guard 0.4",
            "8, 2, 2, 8, 8, LFU 1.0",
    })
    void sameResultsAsTheCpuEngine(int keySize, int levels, int hashes, int slots, long seed, String cacheSpec) {
        BktCacheConfig cache = cacheConfig(cacheSpec);
        try (GpuTestSupport t = GpuTestSupport.create();
             Engine cpu = CpuEngine.create(GpuTestSupport.config(t.pool("cpu"), Backend.CPU, keySize, levels, hashes, slots, 512, seed));
             GpuEngine gpu = GpuEngines.create(GpuTestSupport.config(t.pool("gpu"), keySize, levels, hashes, slots, 512, seed, cache))) {
            Random random = new Random(seed);
            int keySpace = 20_000;
            BatchResult rc = new BatchResult(GpuTestSupport.VALUE_SIZE, 1);
            BatchResult rg = new BatchResult(GpuTestSupport.VALUE_SIZE, 1);
            GpuTestSupport.RandomBatches batches = new GpuTestSupport.RandomBatches(random, keySpace, keySize);
            for (int round = 0; round < 40; round++) {
                int n = 1 + random.nextInt(round % 5 == 4 ? 20_000 : 3_000);
                Batch batch = Batch.create(keySize, GpuTestSupport.VALUE_SIZE, n);
                // Early rounds insert mostly, so the table grows through several resizes.
                batches.fill(batch, n, round < 10 ? 0.7 : 0.2);
                if (round % 7 == 3) {
                    gpu.reloadBucketCache(false);  // the load runs while this batch does
                }
                cpu.execute(batch, rc);
                gpu.execute(batch, rg);
                GpuTestSupport.assertSameResults(batch, rc, rg, "round " + round);
                assertEquals(cpu.stats().size(), gpu.stats().size(), "round " + round + ": item count");
            }
            // Same contents: every key of the key space, read through both.
            Batch all = Batch.create(keySize, GpuTestSupport.VALUE_SIZE, keySpace);
            for (long k = 0; k < keySpace; k++) {
                all.add(OpKind.GET, key(k, keySize), null);
            }
            cpu.execute(all, rc);
            gpu.execute(all, rg);
            for (int i = 0; i < keySpace; i++) {
                assertEquals(rc.outcome(i), rg.outcome(i), "key " + i);
                if (rc.outcome(i) == Outcome.FOUND) {
                    assertArrayEquals(rc.value(i), rg.value(i), "key " + i);
                }
            }
            assertTrue(gpu.stats().resizes() > 0, "the stream made the GPU engine resize: " + gpu.stats());
            VerifyReport report = gpu.diagnostics().verify();
            assertTrue(report.sound(), "GPU-written pool verified by the CPU: " + report);
            assertEquals(cpu.stats().size(), report.items());
            BktCacheStats s = gpu.features().bucketCacheStats();
            System.out.printf("differential %d B %dx%dx%d cache %s: %s%n", keySize, levels, hashes, slots, cacheSpec, s);
            if (cache.enabled()) {
                assertTrue(s.reloads() > 0 && s.hits() > 0, "the cache loaded and served operations: " + s);
            }
        }
    }

    /** "off", or "POLICY[-guard] SHARE": loads every 2000 operations, concurrently. */
    static BktCacheConfig cacheConfig(String spec) {
        if (spec.equals("off")) {
            return BktCacheConfig.DISABLED;
        }
        String[] parts = spec.split(" ");
        String policy = parts[0].replace("-guard", "");
        return BktCacheConfig.builder().policy(CachePolicy.valueOf(policy)).share(Double.parseDouble(parts[1]))
                .scanGuard(parts[0].endsWith("-guard")).reloadEveryOperations(2000).counterSampleShift(0).build();
    }
}
