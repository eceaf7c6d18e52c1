package org.gphash.cuda;

import static org.gphash.cuda.GpuTestSupport.key;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
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
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.bktcache.BktCacheConfig;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Format 3's values of any length in device-resident batches (issue 53, step 3b): the GPU engine's
 * pipeline writes each value in a block of its own class (pipeline/heap_segments.cuh) and reads it
 * back at its length, with the CPU engine's results on the same operations; the pool it leaves opens on
 * the CPU engine with every value as written (the frames and the classes in the meta words are the
 * CPU engine's); what the GPU cannot run with lengths is refused before anything runs.
 */
class ValuesOfAnyLengthOnGpuTest {

    private static final int VS = 600;

    @BeforeEach
    void gpu() {
        GpuTestSupport.assumeGpu();
    }

    /** The GPU's with BktCache on (its default), so that reads of values of the value size hit it. */
    private static GPHashIndex.Builder builder(Path pool, Backend backend) {
        return GPHashIndex.builder(pool).backend(backend).keySize(8).valueSize(VS).poolFormat(3).initialCapacity(2000)
                .seed(11);
    }

    /** A length from 0 to the value size, the edges and the block sizes' neighbours often. */
    private static int length(Random r) {
        int[] edges = {0, 1, 7, 8, 24, 25, 120, 128, 136, 248, 256, 257, VS - 1, VS};
        return r.nextInt(3) == 0 ? edges[r.nextInt(edges.length)] : r.nextInt(VS + 1);
    }

    @Test
    void deviceBatchesOfManyLengthsGiveTheCpuEnginesResultsAndLeaveAPoolTheCpuEngineReads() throws Exception {
        try (GpuTestSupport t = GpuTestSupport.create()) {
            Path gpuPool = t.pool("gpu");
            Random r = new Random(53);
            Map<Long, byte[]> model = new HashMap<>();
            try (GPHashIndex cpu = builder(t.pool("cpu"), Backend.CPU).create();
                 GPHashIndex index = builder(gpuPool, Backend.GPU).create();
                 DeviceBatch device = new DeviceBatch(8, VS, 6000)) {
                assertTrue(cpu.valueLengths());
                GpuFeatures gpu = index.gpu().orElseThrow();
                OpKind[] kinds = {OpKind.PUT, OpKind.PUT, OpKind.INSERT, OpKind.UPDATE, OpKind.GET, OpKind.GET, OpKind.DELETE,
                        OpKind.READ_MODIFY_WRITE};
                for (int round = 0; round < 12; round++) {
                    if (round == 6) {
                        assertTrue(gpu.reloadBucketCache(true), "BktCache on: hot buckets copied, shorter values padded");
                    }
                    int n = 1 + r.nextInt(round < 6 ? 300 : 6000);  // small batches (one launch) and large
                    Batch batch = cpu.newBatch(n);
                    byte[] kindColumn = new byte[n];
                    byte[] keyColumn = new byte[n * 8];
                    byte[] valueColumn = new byte[n * VS];
                    int[] lengths = new int[n];
                    for (int i = 0; i < n; i++) {
                        long k = r.nextInt(round < 4 ? 500 : 8000);  // keys repeat inside a batch
                        OpKind kind = kinds[r.nextInt(kinds.length)];
                        byte[] value = null;
                        if (kind.hasValue()) {
                            value = new byte[length(r)];
                            r.nextBytes(value);
                            System.arraycopy(value, 0, valueColumn, i * VS, value.length);
                            lengths[i] = value.length;
                        }
                        batch.add(kind, key(k, 8), value);
                        kindColumn[i] = (byte) kind.ordinal();
                        System.arraycopy(key(k, 8), 0, keyColumn, i * 8, 8);
                    }
                    BatchResult expected = cpu.execute(batch);
                    device.upload(n, kindColumn, keyColumn, valueColumn);
                    device.uploadLengths(lengths);
                    device.runOn(gpu);
                    byte[] codes = device.downloadCodes();
                    byte[] out = device.downloadValues().toArray(ValueLayout.JAVA_BYTE);
                    int[] outLengths = device.downloadOutLengths();
                    for (int i = 0; i < n; i++) {
                        String at = "round " + round + ", operation " + i + " (" + batch.kind(i) + ")";
                        assertEquals(expected.outcome(i), Outcome.ofCode(codes[i]), at);
                        if (expected.outcome(i) == Outcome.FOUND || expected.outcome(i) == Outcome.REPLACED) {
                            byte[] want = expected.value(i);
                            if (want == null) {
                                continue;  // an outcome that returns no value
                            }
                            assertEquals(want.length, outLengths[i], at + ": the length read");
                            assertArrayEquals(want, Arrays.copyOfRange(out, i * VS, i * VS + want.length), at);
                        }
                    }
                }
                for (long k = 0; k < 8000; k++) {
                    byte[] v = cpu.get(k);
                    if (v != null) {
                        model.put(k, v);
                    }
                }
                assertTrue(model.size() > 1000, "a pool of many values: " + model.size());
            }
            // The GPU engine's close records its heap (classes and blocks, pulled from the GPU); the CPU
            // engine opens it clean and reads every value at its length.
            try (GPHashIndex reopened = GPHashIndex.builder(gpuPool).backend(Backend.CPU).open()) {
                assertEquals(model.size(), reopened.size());
                for (Map.Entry<Long, byte[]> e : model.entrySet()) {
                    assertArrayEquals(e.getValue(), reopened.get(e.getKey()), "key " + e.getKey());
                }
            }
            // The GPU opens it too, clean and then after a crash (its recovery kernels mark each block by
            // the class its word names), and reads every value back at its length.
            for (boolean crashed : new boolean[] {false, true}) {
                GPHashIndex index = GPHashIndex.builder(gpuPool).backend(Backend.GPU).bucketCache(BktCacheConfig.DISABLED)
                        .open();
                try (DeviceBatch device = new DeviceBatch(8, VS, 8000)) {
                    assertEquals(model.size(), index.size(), crashed ? "after a crash" : "after a clean close");
                    byte[] kindColumn = new byte[8000];
                    byte[] keyColumn = new byte[8000 * 8];
                    Arrays.fill(kindColumn, (byte) OpKind.GET.ordinal());
                    for (int k = 0; k < 8000; k++) {
                        System.arraycopy(key(k, 8), 0, keyColumn, k * 8, 8);
                    }
                    device.uploadKindsAndKeys(8000, kindColumn, keyColumn);
                    device.uploadLengths(new int[8000]);
                    device.runOn(index.gpu().orElseThrow());
                    byte[] codes = device.downloadCodes();
                    byte[] out = device.downloadValues().toArray(ValueLayout.JAVA_BYTE);
                    int[] outLengths = device.downloadOutLengths();
                    for (int k = 0; k < 8000; k++) {
                        byte[] want = model.get((long) k);
                        String at = "key " + k + (crashed ? " after a crash" : " after a clean close");
                        assertEquals(want == null ? Outcome.NOT_FOUND : Outcome.FOUND, Outcome.ofCode(codes[k]), at);
                        if (want != null) {
                            assertEquals(want.length, outLengths[k], at + ": the length read");
                            assertArrayEquals(want, Arrays.copyOfRange(out, k * VS, k * VS + want.length), at);
                        }
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

    @Test
    void lengthsAreRefusedWhereTheGpuCannotRunThemAndNothingRuns() throws Exception {
        try (GpuTestSupport t = GpuTestSupport.create();
             DeviceBatch device = new DeviceBatch(8, VS, 4)) {
            byte[] kindColumn = {(byte) OpKind.PUT.ordinal()};
            byte[] valueColumn = new byte[VS];
            for (int b = 0; b < VS; b++) {
                valueColumn[b] = (byte) (b + 1);
            }
            device.upload(1, kindColumn, key(7, 8), valueColumn);
            device.uploadLengths(new int[] {VS + 1});
            try (GPHashIndex index = builder(t.pool("long"), Backend.GPU).create()) {
                GpuFeatures gpu = index.gpu().orElseThrow();
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> device.runOn(gpu));
                assertTrue(e.getMessage().contains("longer than the value size"), e.getMessage());
                assertNull(index.get(7L), "nothing of the batch ran");
                device.uploadLengths(new int[] {5});
                device.runOn(gpu);
                assertTrue(index.get(7L) != null, "the batch of a value of 5 bytes ran");
                // A batch without lengths reads the short value followed by zeros up to the value size.
                try (DeviceBatch plain = new DeviceBatch(8, VS, 1)) {
                    plain.upload(1, new byte[] {(byte) OpKind.GET.ordinal()}, key(7, 8), valueColumn);
                    plain.runOn(gpu);
                    assertEquals(Outcome.FOUND, Outcome.ofCode(plain.downloadCodes()[0]));
                    byte[] read = plain.downloadValues().toArray(ValueLayout.JAVA_BYTE);
                    byte[] expect = new byte[VS];
                    System.arraycopy(valueColumn, 0, expect, 0, 5);
                    assertArrayEquals(expect, read, "five bytes, then zeros");
                }
            }
            try (GPHashIndex two = GPHashIndex.builder(t.pool("two")).backend(Backend.GPU).keySize(8).valueSize(VS)
                    .poolFormat(2).bucketCache(BktCacheConfig.DISABLED).initialCapacity(100).create()) {
                IllegalStateException e = assertThrows(IllegalStateException.class, () -> device.runOn(two.gpu().orElseThrow()));
                assertTrue(e.getMessage().contains("format 3"), e.getMessage());
            }
        }
    }
}
