package org.gphash.cuda;

import static org.gphash.cuda.GpuTestSupport.key;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;

import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.GPHashIndex;
import org.gphash.GpuFeatures;
import org.gphash.GpuTuning;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.bktcache.BktCacheConfig;
import org.gphash.bktcache.BktCacheStats;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Format 3's values of up to 1 MiB on the GPU engine (issue 53): a block over 8 KiB takes a run of
 * whole segments, which the kernels take (heap_segments.cuh's runs step), free (every segment of the
 * run back to the free ones) and hand back to the host's heap; a pool of such values takes the index
 * mirror's routes, device batches, the GPU backend's own batches and single calls alike, each giving
 * the CPU engine's results on the same operations while sizes change under updates (runs freed and
 * taken again, the heap grown for runs). The heap checks itself after every batch (GpuTuning's
 * logBatches), and the pool the GPU leaves opens on the CPU engine and on the GPU again, clean and
 * after a crash (the recovery kernels mark a run by its first segment).
 */
class LargeValuesOnGpuTest {

    private static final int VS = 1 << 20;
    private static final int KEYS = 40;

    @BeforeEach
    void gpu() {
        GpuTestSupport.assumeGpu();
    }

    private static GPHashIndex.Builder builder(Path pool, Backend backend) {
        return GPHashIndex.builder(pool).backend(backend).keySize(8).valueSize(VS).poolFormat(3).initialCapacity(64)
                .seed(17);
    }

    /** Lengths from 0 to 1 MiB: a third that share segments, the rest in runs, the edges often. */
    private static int length(Random r) {
        int[] edges = {0, 1, 8184, 8185, 8192, 9000, 65528, 65536, 65537, 200_000, VS - 8, VS - 1, VS};
        int pick = r.nextInt(6);
        return pick == 0 ? edges[r.nextInt(edges.length)] : pick == 1 ? r.nextInt(8185) : r.nextInt(VS + 1);
    }

    private static byte[] value(Random r) {
        byte[] v = new byte[length(r)];
        r.nextBytes(v);
        return v;
    }

    /**
     * BktCache's copy of a bucket holds its eight values at the pool's value size, 8 MiB here: the share
     * alone (all buckets) would ask for GPU memory in proportion to the table, so the cache holds what
     * its bytes allow (BktCacheConfig.maxBytes), and what it holds still serves every value whole.
     */
    @Test
    void bktCacheOfLargeValuesHoldsWhatItsBytesAllow() throws Exception {
        long budget = 40L << 20;
        try (GpuTestSupport t = GpuTestSupport.create();
             GPHashIndex index = builder(t.pool("large-cache"), Backend.GPU)
                     .bucketCache(BktCacheConfig.builder().share(1).maxBytes(budget).reloadEveryOperations(16).build())
                     .gpuTuning(GpuTuning.DEFAULTS.with("hostBatchesMax=0")).create()) {
            Random r = new Random(5358);
            Map<Long, byte[]> model = new HashMap<>();
            for (long k = 0; k < KEYS; k++) {
                byte[] v = value(r);
                index.put(k, v);
                model.put(k, v);
            }
            for (int round = 0; round < 6; round++) {
                Batch gets = index.newBatch(KEYS);
                for (long k = 0; k < KEYS; k++) {
                    gets.add(OpKind.GET, key(k, 8), null);
                }
                BatchResult got = index.execute(gets);
                for (int k = 0; k < KEYS; k++) {
                    assertEquals(Outcome.FOUND, got.outcome(k), "round " + round + ", key " + k);
                    assertArrayEquals(model.get((long) k), got.value(k), "round " + round + ", key " + k);
                }
            }
            BktCacheStats s = index.gpu().orElseThrow().bucketCacheStats();
            long bucketBytes = 8L * ((8 + 8 + VS + 15) & ~15L);  // eight slots: meta word, key, value
            assertTrue(s.capacityBuckets() >= 1 && s.capacityBuckets() * bucketBytes <= budget, s.toString());
            assertTrue(s.cachedBuckets() <= s.capacityBuckets(), s.toString());
        }
    }

    @Test
    void valuesOfUpTo1MiBRunOnTheKernelsWithTheCpuEnginesResults() throws Exception {
        try (GpuTestSupport t = GpuTestSupport.create()) {
            Path gpuPool = t.pool("large-gpu");
            Random r = new Random(5357);
            Map<Long, byte[]> model = new HashMap<>();
            OpKind[] kinds = {OpKind.PUT, OpKind.PUT, OpKind.INSERT, OpKind.UPDATE, OpKind.GET, OpKind.GET, OpKind.DELETE};
            try (GPHashIndex cpu = builder(t.pool("large-cpu"), Backend.CPU).create();
                 GPHashIndex index = builder(gpuPool, Backend.GPU)
                         .gpuTuning(GpuTuning.DEFAULTS.with("logBatches=true").with("hostBatchesMax=0")).create();
                 DeviceBatch device = new DeviceBatch(8, VS, 48)) {
                assertTrue(index.valueLengths(), "values of 1 MiB take the index mirror: its slices hold 1,024 of them");
                GpuFeatures gpu = index.gpu().orElseThrow();
                for (int round = 0; round < 16; round++) {
                    int n = 1 + r.nextInt(48);
                    Batch batch = cpu.newBatch(n);
                    byte[] kindColumn = new byte[n];
                    byte[] keyColumn = new byte[n * 8];
                    long[] keyList = new long[n];
                    byte[] valueColumn = new byte[n * VS];
                    int[] lengths = new int[n];
                    for (int i = 0; i < n; i++) {
                        long k = r.nextInt(KEYS);
                        keyList[i] = k;
                        OpKind kind = kinds[r.nextInt(kinds.length)];
                        byte[] v = kind.hasValue() ? value(r) : null;
                        if (v != null) {
                            System.arraycopy(v, 0, valueColumn, i * VS, v.length);
                            lengths[i] = v.length;
                        }
                        batch.add(kind, key(k, 8), v);
                        kindColumn[i] = (byte) kind.ordinal();
                        System.arraycopy(key(k, 8), 0, keyColumn, i * 8, 8);
                    }
                    BatchResult expected = cpu.execute(batch);
                    String at = "round " + round;
                    if (round % 2 == 0) {  // a device batch
                        device.upload(n, kindColumn, keyColumn, valueColumn);
                        device.uploadLengths(lengths);
                        device.runOn(gpu);
                        byte[] codes = device.downloadCodes();
                        byte[] out = device.downloadValues().toArray(ValueLayout.JAVA_BYTE);
                        int[] outLengths = device.downloadOutLengths();
                        for (int i = 0; i < n; i++) {
                            String op = at + ", device operation " + i + " (" + batch.kind(i) + ")";
                            assertEquals(expected.outcome(i), Outcome.ofCode(codes[i]), op);
                            byte[] want = expected.value(i);
                            if (want != null && (expected.outcome(i) == Outcome.FOUND || expected.outcome(i) == Outcome.REPLACED)) {
                                assertEquals(want.length, outLengths[i], op + ": the length read");
                                assertArrayEquals(want, Arrays.copyOfRange(out, i * VS, i * VS + want.length), op);
                            }
                        }
                    } else {  // the backend's own batch (the packed route)
                        Batch mine = index.newBatch(n);
                        for (int i = 0; i < n; i++) {
                            mine.add(batch.kind(i), key(keyList[i], 8),
                                    batch.kind(i).hasValue() ? Arrays.copyOfRange(valueColumn, i * VS, i * VS + lengths[i]) : null);
                        }
                        BatchResult got = index.execute(mine);
                        for (int i = 0; i < n; i++) {
                            String op = at + ", batch operation " + i + " (" + batch.kind(i) + ")";
                            assertEquals(expected.outcome(i), got.outcome(i), op);
                            if (expected.outcome(i) == Outcome.FOUND) {
                                assertArrayEquals(expected.value(i), got.value(i), op);
                            }
                        }
                    }
                    if (round % 4 == 3) {  // single calls, on the host while the GPU lends it the pool
                        long k = r.nextInt(KEYS);
                        byte[] v = value(r);
                        cpu.put(k, v);
                        index.put(k, v);
                        assertArrayEquals(cpu.get(k), index.get(k), at + ": a single call's put of " + v.length + " bytes");
                    }
                }
                for (long k = 0; k < KEYS; k++) {
                    byte[] v = cpu.get(k);
                    assertArrayEquals(v, index.get(k), "key " + k + " on both engines");
                    if (v != null) {
                        model.put(k, v);
                    }
                }
                assertTrue(model.size() > KEYS / 4, "a pool of large values: " + model.size());
            }
            try (GPHashIndex reopened = GPHashIndex.builder(gpuPool).backend(Backend.CPU).open()) {
                assertEquals(model.size(), reopened.size());
                for (Map.Entry<Long, byte[]> e : model.entrySet()) {
                    assertArrayEquals(e.getValue(), reopened.get(e.getKey()), "key " + e.getKey() + " on the CPU engine");
                }
            }
            for (boolean crashed : new boolean[] {false, true}) {
                GPHashIndex index = GPHashIndex.builder(gpuPool).backend(Backend.GPU).bucketCache(BktCacheConfig.DISABLED)
                        .gpuTuning(GpuTuning.DEFAULTS.with("logBatches=true")).open();
                try {
                    String when = crashed ? " after a crash" : " after a clean close";
                    assertEquals(model.size(), index.size(), when);
                    Batch gets = index.newBatch(KEYS);
                    for (long k = 0; k < KEYS; k++) {
                        gets.add(OpKind.GET, key(k, 8), null);
                    }
                    BatchResult got = index.execute(gets);
                    for (int k = 0; k < KEYS; k++) {
                        byte[] want = model.get((long) k);
                        assertArrayEquals(want, want == null ? null : got.value(k), "key " + k + when);
                        assertEquals(want == null ? Outcome.NOT_FOUND : Outcome.FOUND, got.outcome(k), "key " + k + when);
                    }
                    // Writes after the open take only free runs: a run the rebuild missed would be handed
                    // out under a live value, which the reads after catch.
                    Batch puts = index.newBatch(8);
                    Map<Long, byte[]> written = new HashMap<>();
                    for (long k = KEYS; k < KEYS + 8; k++) {
                        byte[] v = value(r);
                        puts.add(OpKind.PUT, key(k, 8), v);
                        written.put(k, v);
                    }
                    index.execute(puts);
                    model.putAll(written);
                    for (Map.Entry<Long, byte[]> e : model.entrySet()) {
                        assertArrayEquals(e.getValue(), index.get(e.getKey()), "key " + e.getKey() + when + ", after writes");
                    }
                } finally {
                    if (crashed) {
                        index.close();
                    } else {
                        index.engine().abandon();  // no close record: the next open runs the recovery kernels
                    }
                }
            }
        }
    }
}
