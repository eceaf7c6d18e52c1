package org.gphash.bench.gpu;

import static jcuda.driver.JCudaDriver.cuCtxSetCurrent;
import static jcuda.driver.JCudaDriver.cuDeviceGet;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRelease;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRetain;
import static jcuda.driver.JCudaDriver.cuEventCreate;
import static jcuda.driver.JCudaDriver.cuEventDestroy;
import static jcuda.driver.JCudaDriver.cuEventElapsedTime;
import static jcuda.driver.JCudaDriver.cuEventRecord;
import static jcuda.driver.JCudaDriver.cuEventSynchronize;
import static jcuda.driver.JCudaDriver.cuInit;
import static jcuda.driver.JCudaDriver.cuMemAlloc;
import static jcuda.driver.JCudaDriver.cuMemAllocHost;
import static jcuda.driver.JCudaDriver.cuMemFree;
import static jcuda.driver.JCudaDriver.cuMemFreeHost;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoHAsync;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoDAsync;
import static jcuda.driver.JCudaDriver.cuStreamCreate;
import static jcuda.driver.JCudaDriver.cuStreamDestroy;

import java.util.Locale;

import jcuda.Pointer;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;

/**
 * What the PCIe link carries one way, and each way while the other is busy: copies between pinned
 * host memory and GPU memory on two streams, host to device alone, device to host alone, then both
 * at once, each timed by its own events. Why: a host batch moves data both ways at once (a batch of
 * gets reads values from the pool while the chunk before copies its values out; an update copies
 * values in while its kernels write the pool), and the GPU's kernels ran longer on host batches
 * than on device-resident ones (docs/lab/2026-11-27-host-batch-timeline.md). Usage:
 * {@code LinkDuplexProbe [MiB per copy, default 1024] [rounds, default 5]}.
 */
public final class LinkDuplexProbe {

    private LinkDuplexProbe() {
    }

    public static void main(String[] args) {
        long bytes = (args.length > 0 ? Long.parseLong(args[0]) : 1024) << 20;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        cuInit(0);
        CUdevice device = new CUdevice();
        cuDeviceGet(device, 0);
        CUcontext context = new CUcontext();
        cuDevicePrimaryCtxRetain(context, device);
        cuCtxSetCurrent(context);
        Pointer hostIn = new Pointer();
        Pointer hostOut = new Pointer();
        cuMemAllocHost(hostIn, bytes);
        cuMemAllocHost(hostOut, bytes);
        CUdeviceptr deviceIn = new CUdeviceptr();
        CUdeviceptr deviceOut = new CUdeviceptr();
        cuMemAlloc(deviceIn, bytes);
        cuMemAlloc(deviceOut, bytes);
        CUstream up = new CUstream();
        CUstream down = new CUstream();
        cuStreamCreate(up, CUstream_flags.CU_STREAM_NON_BLOCKING);
        cuStreamCreate(down, CUstream_flags.CU_STREAM_NON_BLOCKING);
        Copy in = new Copy(up, () -> cuMemcpyHtoDAsync(deviceIn, hostIn, bytes, up));
        Copy out = new Copy(down, () -> cuMemcpyDtoHAsync(hostOut, deviceOut, bytes, down));
        System.out.printf(Locale.ROOT, "link duplex probe: copies of %d MiB between pinned host memory and GPU memory, %d rounds%n",
                bytes >> 20, rounds);
        for (int r = 0; r <= rounds; r++) {  // round 0 warms up
            double inAlone = in.gbPerSecond(bytes, in.run());
            double outAlone = out.gbPerSecond(bytes, out.run());
            in.start();
            out.start();
            double inBoth = in.gbPerSecond(bytes, in.finish());
            double outBoth = out.gbPerSecond(bytes, out.finish());
            if (r > 0) {
                System.out.printf(Locale.ROOT,
                        "round %d: host->device alone %.1f GB/s, device->host alone %.1f GB/s; both at once %.1f + %.1f = %.1f GB/s%n",
                        r, inAlone, outAlone, inBoth, outBoth, inBoth + outBoth);
            }
        }
        in.close();
        out.close();
        cuStreamDestroy(up);
        cuStreamDestroy(down);
        cuMemFree(deviceIn);
        cuMemFree(deviceOut);
        cuMemFreeHost(hostIn);
        cuMemFreeHost(hostOut);
        cuDevicePrimaryCtxRelease(device);
    }

    /** One direction's copy on its stream, between two timing events. */
    private static final class Copy implements AutoCloseable {
        private final CUstream stream;
        private final Runnable queue;
        private final CUevent begin = new CUevent();
        private final CUevent end = new CUevent();

        Copy(CUstream stream, Runnable queue) {
            this.stream = stream;
            this.queue = queue;
            cuEventCreate(begin, CUevent_flags.CU_EVENT_DEFAULT);
            cuEventCreate(end, CUevent_flags.CU_EVENT_DEFAULT);
        }

        void start() {
            cuEventRecord(begin, stream);
            queue.run();
            cuEventRecord(end, stream);
        }

        /** Milliseconds the copy queued by {@link #start} took. */
        float finish() {
            cuEventSynchronize(end);
            float[] ms = new float[1];
            cuEventElapsedTime(ms, begin, end);
            return ms[0];
        }

        float run() {
            start();
            return finish();
        }

        double gbPerSecond(long bytes, float ms) {
            return bytes / (ms * 1e6);
        }

        @Override
        public void close() {
            cuEventDestroy(begin);
            cuEventDestroy(end);
        }
    }
}
