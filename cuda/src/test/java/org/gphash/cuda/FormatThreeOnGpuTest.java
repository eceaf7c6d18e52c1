package org.gphash.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;

import org.gphash.Backend;
import org.gphash.GPHashIndex;
import org.gphash.IndexMirror;
import org.junit.jupiter.api.Test;

/**
 * Pool format 3 on the GPU engine (issue 53, step 3a): pools whose values all have the value size run
 * on the kernels (the rest of the GPU tests run in format 3 with {@code -Dgphash.test.poolFormat=3},
 * {@link GpuTestSupport#POOL_FORMAT}); a pool holding values shorter than its value size opens, after
 * a crash too. Values whose blocks take runs of segments: {@link LargeValuesOnGpuTest}.
 */
class FormatThreeOnGpuTest {

    /**
     * A pool the CPU engine filled with values of many lengths, left without a close record, opens on the
     * GPU: the recovery kernels mark each item's block by the class its word names, and the heap comes
     * back as a clean close gives it (SegmentHeap.restore). Every value reads back at its length on the
     * index mirror, and at its bytes then zeros to the value size on the pool path (whose values have
     * the value size), through the host's single calls, the kernels' batches and BktCache alike; writes
     * after it take only free blocks (a block the rebuild missed would be handed out under a live
     * value), and the CPU engine reads the pool the GPU closes at every value's own length.
     */
    @Test
    void theRecoveryKernelsRebuildAHeapOfManyClassesAfterACrash() throws IOException {
        GpuTestSupport.assumeGpu();
        try (GpuTestSupport t = GpuTestSupport.create()) {
            Path p = t.pool("f3-crashed");
            int vs = 600;
            int keys = 6_000;
            java.util.Random r = new java.util.Random(5303);
            java.util.Map<Long, byte[]> model = new java.util.HashMap<>();
            GPHashIndex ix = GPHashIndex.builder(p).backend(Backend.CPU).valueSize(vs).poolFormat(3)
                    .initialCapacity(1_000).create();
            for (long k = 0; k < keys; k++) {
                byte[] v = new byte[r.nextInt(vs + 1)];
                r.nextBytes(v);
                ix.put(k, v);
                model.put(k, v);
            }
            for (long k = 0; k < keys; k += 5) {
                ix.delete(k);
                model.remove(k);
            }
            ix.engine().abandon();  // no close record: the open scans with the recovery kernels
            // On the index mirror the GPU backend's values have their own lengths; on the pool path (the
            // mirror off) they have the value size, a shorter one followed by zeros. Either way through
            // single calls on the host, batches on the GPU and a reloaded BktCache.
            for (IndexMirror mirror : new IndexMirror[] {IndexMirror.AUTO, IndexMirror.OFF}) {
                boolean lengths = mirror == IndexMirror.AUTO;
                try (GPHashIndex gpu = GPHashIndex.builder(p).backend(Backend.GPU).indexMirror(mirror)
                        .bucketCache(org.gphash.bktcache.BktCacheConfig.defaults()).open()) {
                    assertEquals(lengths, gpu.valueLengths(), mirror.toString());
                    assertEquals(model.size(), gpu.size());
                    for (java.util.Map.Entry<Long, byte[]> e : model.entrySet()) {
                        byte[] want = lengths ? e.getValue() : padded(e.getValue(), vs);
                        assertArrayEquals(want, gpu.get(e.getKey()), "key " + e.getKey() + " on the host, " + mirror);
                    }
                    assertTrue(gpu.reloadBucketCache(true));
                    org.gphash.Batch gets = gpu.newBatch(keys);
                    for (long k = 0; k < keys; k++) {
                        gets.add(org.gphash.OpKind.GET, GpuTestSupport.key(k, 8), null);
                    }
                    org.gphash.BatchResult got = gpu.execute(gets);
                    for (int k = 0; k < keys; k++) {
                        byte[] want = model.get((long) k);
                        assertArrayEquals(want == null ? null : lengths ? want : padded(want, vs), got.value(k),
                                "key " + k + " on the GPU, " + mirror);
                    }
                    org.gphash.Batch puts = gpu.newBatch(keys);
                    long from = lengths ? keys : 2L * keys;
                    for (long k = from; k < from + keys; k++) {
                        byte[] v = filled(k, vs);
                        puts.add(org.gphash.OpKind.PUT, GpuTestSupport.key(k, 8), v);
                        model.put(k, v);
                    }
                    gpu.execute(puts);
                }
            }
            try (GPHashIndex cpu = GPHashIndex.builder(p).backend(Backend.CPU).open()) {
                assertEquals(model.size(), cpu.size());
                for (java.util.Map.Entry<Long, byte[]> e : model.entrySet()) {
                    assertArrayEquals(e.getValue(), cpu.get(e.getKey()), "key " + e.getKey() + " after the GPU's close");
                }
            }
        }
    }

    private static byte[] padded(byte[] v, int n) {
        return Arrays.copyOf(v, n);
    }

    @Test
    void aFormatThreePoolOfOneValueSizeRunsOnTheGpuAndItsValuesAreFramed() {
        GpuTestSupport.assumeGpu();
        try (GpuTestSupport t = GpuTestSupport.create()) {
            Path p = t.pool("f3-gpu");
            try (GPHashIndex ix = GPHashIndex.builder(p).backend(Backend.GPU).valueSize(100).poolFormat(3)
                    .initialCapacity(256).create()) {
                assertTrue(ix.valueLengths(), "format 3 on the index mirror: values of any length");
                for (long k = 0; k < 5_000; k++) {
                    ix.put(k, filled(k, 100));
                }
                for (long k = 0; k < 5_000; k += 3) {
                    ix.put(k, filled(k + 1, 100));  // updates free blocks on the GPU
                }
                for (long k = 1; k < 5_000; k += 3) {
                    ix.delete(k);
                }
            }
            try (GPHashIndex ix = GPHashIndex.builder(p).backend(Backend.CPU).open()) {
                assertTrue(ix.valueLengths());
                for (long k = 0; k < 5_000; k++) {
                    byte[] v = ix.get(k);
                    if (k % 3 == 1) {
                        assertEquals(null, v, "key " + k);
                    } else {
                        assertArrayEquals(filled(k % 3 == 0 ? k + 1 : k, 100), v, "key " + k + ": framed, its length 100");
                    }
                }
            }
        }
    }

    private static byte[] filled(long k, int n) {
        byte[] v = new byte[n];
        Arrays.fill(v, (byte) (k * 31 + 7));
        v[0] = (byte) k;
        v[n - 1] = (byte) (k >>> 8);
        return v;
    }
}
