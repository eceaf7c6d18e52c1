package org.gphash.cuda;

import static jcuda.driver.JCudaDriver.cuMemAlloc;
import static jcuda.driver.JCudaDriver.cuMemFree;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;
import static org.gphash.cuda.GpuTestSupport.key;
import static org.gphash.cuda.GpuTestSupport.value;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.ValueLayout;
import java.util.HashSet;
import java.util.Random;
import java.util.Set;

import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.cuda.runtime.CudaRuntime;
import org.gphash.index.CpuEngine;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Batches whose keys, values and results live in GPU memory (the DLRM use) give the CPU engine's
 * results, through resizes (forced by a small pool) included.
 */
class DeviceResidentTest {

    @BeforeEach
    void gpu() {
        GpuTestSupport.assumeGpu();
    }

    /**
     * The public way in: {@code index.gpu()} runs a device-resident batch given device addresses
     * (no cast, no JCuda type), with the CPU engine's results, and refuses a missing column by name.
     */
    @Test
    void theGpuViewRunsDeviceBatchesByAddress() {
        int vs = GpuTestSupport.VALUE_SIZE;
        try (GpuTestSupport t = GpuTestSupport.create();
             CpuEngine cpu = CpuEngine.create(GpuTestSupport.config(t.pool("cpu"), Backend.CPU, 8, 2, 2, 8, 1000, 5));
             org.gphash.GPHashIndex index = org.gphash.GPHashIndex.builder(t.pool("gpu")).backend(Backend.GPU).keySize(8)
                     .valueSize(vs).initialCapacity(1000).seed(5).create();
             DeviceBatch device = new DeviceBatch(8, vs, 3000)) {
            org.gphash.GpuFeatures gpu = index.gpu().orElseThrow();
            assertTrue(!gpu.deviceName().isBlank());
            Random random = new Random(5);
            BatchResult rc = new BatchResult(vs, 1);
            long version = 0;
            for (int round = 0; round < 4; round++) {
                // Distinct keys: without the index mirror (GPHASH_TEST_OPTS=-Dgphash.indexMirror=OFF) a
                // batch's operations on one key run in an order the engine does not promise.
                Batch batch = Batch.create(8, vs, 3000);
                Set<Long> used = new HashSet<>();
                while (batch.size() < 3000) {
                    long k = random.nextInt(20_000);
                    if (used.add(k)) {
                        OpKind kind = random.nextBoolean() ? OpKind.PUT : OpKind.GET;
                        batch.add(kind, key(k, 8), kind.hasValue() ? value(k, ++version) : null);
                    }
                }
                cpu.execute(batch, rc);
                device.upload(batch);
                gpu.executeOnDevice(batch.size(), CudaRuntime.address(device.kinds()), CudaRuntime.address(device.keys()),
                        CudaRuntime.address(device.values()), CudaRuntime.address(device.codes()), CudaRuntime.address(device.out()));
                byte[] codes = device.downloadCodes();
                byte[] values = device.downloadValues().toArray(ValueLayout.JAVA_BYTE);
                for (int i = 0; i < batch.size(); i++) {
                    assertEquals(rc.outcome(i), Outcome.ofCode(codes[i]), "round " + round + " op " + i);
                    if (rc.outcome(i) == Outcome.FOUND) {
                        assertArrayEquals(rc.value(i), java.util.Arrays.copyOfRange(values, i * vs, (i + 1) * vs));
                    }
                }
            }
            assertEquals(cpu.stats().size(), index.size());
            IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                    () -> gpu.executeOnDevice(10, 0, CudaRuntime.address(device.keys()), 0, CudaRuntime.address(device.codes()), 0));
            assertTrue(e.getMessage().contains("kinds"), e.getMessage());
        }
    }

    @Test
    void deviceResidentBatchesMatchTheCpuEngine() {
        int vs = GpuTestSupport.VALUE_SIZE;
        try (GpuTestSupport t = GpuTestSupport.create();
             CpuEngine cpu = CpuEngine.create(GpuTestSupport.config(t.pool("cpu"), Backend.CPU, 8, 2, 2, 8, 256, 71));
             GpuEngine gpu = GpuEngines.create(GpuTestSupport.config(t.pool("gpu"), Backend.GPU, 8, 2, 2, 8, 256, 71))) {
            Random random = new Random(71);
            OpKind[] kinds = GpuTestSupport.PLAIN_KINDS;
            long version = 0;
            int max = 20_000;
            CudaRuntime.get().bind();
            CUdeviceptr dKinds = alloc(max);
            CUdeviceptr dKeys = alloc(max * 8L);
            CUdeviceptr dValues = alloc((long) max * vs);
            CUdeviceptr dCodes = alloc(max);
            CUdeviceptr dOut = alloc((long) max * vs);
            try {
                BatchResult rc = new BatchResult(vs, 1);
                for (int round = 0; round < 12; round++) {
                    int n = 1 + random.nextInt(max);
                    Batch batch = Batch.create(8, vs, n);
                    Set<Long> used = new HashSet<>();
                    while (batch.size() < n) {
                        long k = random.nextInt(40_000);
                        if (used.add(k)) {
                            OpKind kind = round < 3 ? OpKind.INSERT : kinds[random.nextInt(kinds.length)];
                            batch.add(kind, key(k, 8), kind.hasValue() ? value(k, ++version) : null);
                        }
                    }
                    cuMemcpyHtoD(dKinds, Pointer.to(batch.kinds().toArray(ValueLayout.JAVA_BYTE)), n);
                    cuMemcpyHtoD(dKeys, Pointer.to(batch.keys().toArray(ValueLayout.JAVA_BYTE)), n * 8L);
                    cuMemcpyHtoD(dValues, Pointer.to(batch.values().toArray(ValueLayout.JAVA_BYTE)), (long) n * vs);
                    gpu.features().executeOnDevice(n, dKinds, dKeys, dValues, dCodes, dOut);
                    cpu.execute(batch, rc);
                    assertSameResults(n, dCodes, dOut, rc, "round " + round);
                    assertEquals(cpu.stats().size(), gpu.stats().size());
                }
                assertTrue(gpu.stats().resizes() > 0);
                assertTrue(gpu.diagnostics().verify().sound());
            } finally {
                CudaRuntime.get().bind();
                for (CUdeviceptr p : new CUdeviceptr[] {dKinds, dKeys, dValues, dCodes, dOut}) {
                    cuMemFree(p);
                }
            }
        }
    }

    /**
     * A device batch of gets up to {@code smallReadsMax} runs in one launch (the small reads kernel,
     * reading and writing the caller's columns), a larger one through the pipeline; both give the CPU
     * engine's outcomes and values, with keys absent and repeated.
     */
    @Test
    void deviceBatchesOfGetsRunInOneLaunchUpToTheSmallReadsLimit() {
        int vs = GpuTestSupport.VALUE_SIZE;
        int limit = org.gphash.GpuTuning.DEFAULTS.smallReadsMax();
        try (GpuTestSupport t = GpuTestSupport.create();
             CpuEngine cpu = CpuEngine.create(GpuTestSupport.config(t.pool("cpu"), Backend.CPU, 8, 2, 2, 8, 8000, 29));
             GpuEngine gpu = GpuEngines.create(GpuTestSupport.config(t.pool("gpu"), Backend.GPU, 8, 2, 2, 8, 8000, 29))) {
            // The one-launch reads are the mirror path's; the pool path (-Dgphash.indexMirror=OFF) has none.
            org.junit.jupiter.api.Assumptions.assumeTrue(gpu.usesIndexMirror(), "the pool path runs no one-launch reads");
            Random random = new Random(29);
            BatchResult rc = new BatchResult(vs, 1);
            BatchResult rg = new BatchResult(vs, 1);
            Batch load = Batch.create(8, vs, 3000);
            for (long k = 0; k < 3000; k++) {
                load.add(OpKind.INSERT, key(k, 8), value(k, 1));
            }
            cpu.execute(load, rc);
            gpu.execute(load, rg);
            CudaRuntime.get().bind();
            int max = limit + 1;
            CUdeviceptr dKinds = alloc(max);
            CUdeviceptr dKeys = alloc(max * 8L);
            CUdeviceptr dCodes = alloc(max);
            CUdeviceptr dOut = alloc((long) max * vs);
            try {
                for (int n : new int[] {1, 37, limit, limit + 1}) {
                    Batch batch = Batch.create(8, vs, n);
                    for (int i = 0; i < n; i++) {
                        batch.add(OpKind.GET, key(random.nextInt(6000), 8), null);  // half absent; keys repeat
                    }
                    cuMemcpyHtoD(dKinds, Pointer.to(batch.kinds().toArray(ValueLayout.JAVA_BYTE)), n);
                    cuMemcpyHtoD(dKeys, Pointer.to(batch.keys().toArray(ValueLayout.JAVA_BYTE)), n * 8L);
                    jcuda.driver.JCudaDriver.cuMemsetD8(dCodes, (byte) 0, n);
                    long before = gpu.diagnostics().smallReadBatches();
                    gpu.features().executeOnDevice(n, CudaRuntime.address(dKinds), CudaRuntime.address(dKeys), 0, CudaRuntime.address(dCodes),
                            CudaRuntime.address(dOut));
                    assertEquals(n <= limit ? before + 1 : before, gpu.diagnostics().smallReadBatches(),
                            "a batch of " + n + " gets in one launch only up to " + limit);
                    cpu.execute(batch, rc);
                    assertSameResults(n, dCodes, dOut, rc, "batch of " + n);
                }
            } finally {
                CudaRuntime.get().bind();
                for (CUdeviceptr p : new CUdeviceptr[] {dKinds, dKeys, dCodes, dOut}) {
                    cuMemFree(p);
                }
            }
        }
    }

    /** The device batch's outcome codes and values read are the CPU engine's ({@code rc}). */
    private static void assertSameResults(int n, CUdeviceptr dCodes, CUdeviceptr dOut, BatchResult rc, String what) {
        int vs = GpuTestSupport.VALUE_SIZE;
        byte[] codes = new byte[n];
        byte[] out = new byte[n * vs];
        cuMemcpyDtoH(Pointer.to(codes), dCodes, n);
        cuMemcpyDtoH(Pointer.to(out), dOut, (long) n * vs);
        for (int i = 0; i < n; i++) {
            assertEquals(rc.outcome(i), Outcome.ofCode(codes[i]), what + " op " + i);
            if (rc.outcome(i) == Outcome.FOUND || rc.outcome(i) == Outcome.REPLACED) {
                assertArrayEquals(rc.value(i), java.util.Arrays.copyOfRange(out, i * vs, (i + 1) * vs), what + " op " + i);
            }
        }
    }

    private static CUdeviceptr alloc(long bytes) {
        CUdeviceptr p = new CUdeviceptr();
        cuMemAlloc(p, bytes);
        return p;
    }
}
