package org.gphash.cuda.pipeline;

import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;
import java.util.Comparator;
import java.util.Random;
import java.util.stream.IntStream;

import jcuda.Pointer;
import org.gphash.cuda.GpuTestSupport;
import org.gphash.cuda.runtime.CudaRuntime;
import org.gphash.cuda.runtime.DeviceBuffer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The device-wide primitives the v2 pipeline is built on, against Java on the same random data: the
 * stable radix sort (stability is what keeps a key's operations in batch order) with the count given
 * on the host or in device memory, by passes and, up to 4096 pairs, in one block; and the scans, by
 * tiles and, up to 16384 items, in one block (each size limit and the one past it).
 */
class PipelinePrimitivesTest {

    @BeforeEach
    void gpu() {
        GpuTestSupport.assumeGpu();
        CudaRuntime.get().bind();
    }

    @ParameterizedTest(name = "n {0}, {1} key bits, count on device {2}")
    @CsvSource({"1, 8, false", "2047, 9, false", "2048, 13, true", "4096, 12, true", "4096, 13, false",
            "4097, 12, false", "100003, 17, true", "1048576, 21, true", "300000, 3, false"})
    void radixSortIsStableAndSorted(int n, int bits, boolean countOnDevice) {
        Random random = new Random(n * 31L + bits);
        int[] keys = new int[n];
        for (int i = 0; i < n; i++) {
            keys[i] = random.nextInt(1 << bits);  // small key ranges: many equal keys, so stability shows
        }
        int[] vals = IntStream.range(0, n).toArray();
        PipelineKernels k = new PipelineKernels(CudaRuntime.get());
        try (DeviceScan scan = new DeviceScan(k); RadixSort sort = new RadixSort(k, scan);
             DeviceBuffer a = new DeviceBuffer().ensure(n * 4L); DeviceBuffer b = new DeviceBuffer().ensure(n * 4L);
             DeviceBuffer c = new DeviceBuffer().ensure(n * 4L); DeviceBuffer d = new DeviceBuffer().ensure(n * 4L);
             DeviceBuffer count = new DeviceBuffer().ensure(8)) {
            cuMemcpyHtoD(a.pointer(), Pointer.to(keys), n * 4L);
            cuMemcpyHtoD(b.pointer(), Pointer.to(vals), n * 4L);
            cuMemcpyHtoD(count.pointer(), Pointer.to(new long[] {n}), 8);
            // On the device the count says n while the launches are sized for more (a capacity class).
            long maxN = countOnDevice ? PipelineBuffers.capacityFor(n) : n;
            if (countOnDevice) {
                a.ensure(maxN * 4);  // larger buffers: contents are not kept, so upload again
                b.ensure(maxN * 4);
                c.ensure(maxN * 4);
                d.ensure(maxN * 4);
                cuMemcpyHtoD(a.pointer(), Pointer.to(keys), n * 4L);
                cuMemcpyHtoD(b.pointer(), Pointer.to(vals), n * 4L);
            }
            sort.reserve(maxN);
            boolean inAlt = sort.sort(null, a.address(), b.address(), c.address(), d.address(), maxN,
                    countOnDevice ? count.address() : 0, bits);
            cuStreamSynchronize(null);
            int[] gotKeys = new int[n];
            int[] gotVals = new int[n];
            cuMemcpyDtoH(Pointer.to(gotKeys), (inAlt ? c : a).pointer(), n * 4L);
            cuMemcpyDtoH(Pointer.to(gotVals), (inAlt ? d : b).pointer(), n * 4L);
            Integer[] order = IntStream.range(0, n).boxed().toArray(Integer[]::new);
            Arrays.sort(order, Comparator.comparingInt(i -> keys[i]));  // stable
            int[] wantKeys = Arrays.stream(order).mapToInt(i -> keys[i]).toArray();
            int[] wantVals = Arrays.stream(order).mapToInt(Integer::intValue).toArray();
            assertArrayEquals(wantKeys, gotKeys, "keys");
            assertArrayEquals(wantVals, gotVals, "values: equal keys keep their input order");
        }
    }

    @ParameterizedTest(name = "n {0}")
    @CsvSource({"1", "2048", "2049", "16384", "16385", "65536", "1000001"})
    void scansMatchJava(int n) {
        Random random = new Random(n);
        int[] in = new int[n];
        for (int i = 0; i < n; i++) {
            in[i] = random.nextInt(100) < 30 ? i : -1;
        }
        int[] counts = new int[n];
        for (int i = 0; i < n; i++) {
            counts[i] = random.nextInt(64);
        }
        PipelineKernels k = new PipelineKernels(CudaRuntime.get());
        try (DeviceScan scan = new DeviceScan(k); DeviceBuffer a = new DeviceBuffer().ensure(n * 4L);
             DeviceBuffer b = new DeviceBuffer().ensure(n * 4L)) {
            cuMemcpyHtoD(a.pointer(), Pointer.to(in), n * 4L);
            scan.reserve(n);
            scan.inclusiveMax(null, a.address(), a.address(), n);  // in place, as the pipeline runs it
            cuMemcpyHtoD(b.pointer(), Pointer.to(counts), n * 4L);
            scan.exclusiveSum(null, b.address(), b.address(), n);
            cuStreamSynchronize(null);
            int[] max = new int[n];
            int[] sum = new int[n];
            cuMemcpyDtoH(Pointer.to(max), a.pointer(), n * 4L);
            cuMemcpyDtoH(Pointer.to(sum), b.pointer(), n * 4L);
            int m = -1;
            int s = 0;
            for (int i = 0; i < n; i++) {
                m = Math.max(m, in[i]);
                assertEquals(m, max[i], "inclusive max at " + i);
                assertEquals(s, sum[i], "exclusive sum at " + i);
                s += counts[i];
            }
        }
    }
}
