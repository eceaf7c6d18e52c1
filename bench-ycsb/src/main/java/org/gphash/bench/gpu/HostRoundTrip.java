package org.gphash.bench.gpu;

import static jcuda.driver.JCudaDriver.cuCtxSetCurrent;
import static jcuda.driver.JCudaDriver.cuDeviceGet;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRelease;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRetain;
import static jcuda.driver.JCudaDriver.cuInit;
import static jcuda.driver.JCudaDriver.cuMemAlloc;
import static jcuda.driver.JCudaDriver.cuMemAllocHost;
import static jcuda.driver.JCudaDriver.cuMemFree;
import static jcuda.driver.JCudaDriver.cuMemFreeHost;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;

import java.lang.foreign.MemorySegment;

import jcuda.Pointer;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdeviceptr;

/**
 * The copies a GPU application pays when its index runs on the CPU (the CPU-assisted baseline):
 * keys from GPU memory to the host before a batch, values from the host to GPU memory after it,
 * through pinned buffers, into and out of the Java arrays the CPU engine reads. A benchmark's
 * instrument, on the GPU's primary context (the one the GPU engine uses), through JCuda directly.
 * Not thread-safe: one per thread.
 */
final class HostRoundTrip implements AutoCloseable {

    private final CUdevice device = new CUdevice();
    private final CUcontext context = new CUcontext();
    private final Column keys = new Column();
    private final Column values = new Column();
    private byte[] scratch = new byte[0];

    HostRoundTrip() {
        cuInit(0);
        cuDeviceGet(device, 0);
        cuDevicePrimaryCtxRetain(context, device);
    }

    /** Page-locked host memory and device memory of one column, grown on demand. */
    private static final class Column {
        private Pointer host;
        private MemorySegment hostSegment;
        private CUdeviceptr onDevice;
        private long capacity;

        void ensure(long bytes) {
            if (bytes > capacity) {
                free();
                long size = Math.max(bytes, 4096);
                Pointer h = new Pointer();
                cuMemAllocHost(h, size);
                CUdeviceptr d = new CUdeviceptr();
                cuMemAlloc(d, size);
                host = h;
                hostSegment = MemorySegment.ofBuffer(h.getByteBuffer(0, size));
                onDevice = d;
                capacity = size;
            }
        }

        void free() {
            if (host != null) {
                cuMemFreeHost(host);
                cuMemFree(onDevice);
                host = null;
                hostSegment = null;
                onDevice = null;
                capacity = 0;
            }
        }
    }

    private void bind() {
        cuCtxSetCurrent(context);
    }

    /** Puts a batch's keys where the application would hold them: GPU memory (not part of the cost). */
    void placeOnDevice(MemorySegment batchKeys) {
        toDevice(batchKeys, keys);
    }

    /** The application's keys (placed by {@link #placeOnDevice}), in GPU memory, become {@code batchKeys} on the host. */
    void keysToHost(MemorySegment batchKeys) {
        bind();
        long n = batchKeys.byteSize();
        keys.ensure(n);
        cuMemcpyDtoH(keys.host, keys.onDevice, n);
        MemorySegment.copy(keys.hostSegment, 0, batchKeys, 0, n);
    }

    /**
     * Copies {@code like.byteSize()} bytes from GPU memory into host (Java) memory, as a batch column
     * would travel, without touching {@code like} itself.
     */
    void fromDevice(MemorySegment like) {
        bind();
        long n = like.byteSize();
        keys.ensure(n);
        if (scratch.length < n) {
            scratch = new byte[(int) n];
        }
        cuMemcpyDtoH(keys.host, keys.onDevice, n);
        MemorySegment.copy(keys.hostSegment, 0, MemorySegment.ofArray(scratch), 0, n);
    }

    /** {@code resultValues} (a result's value column) goes back to the application's GPU memory. */
    void valuesToDevice(MemorySegment resultValues) {
        toDevice(resultValues, values);
    }

    /** Java memory to the column's GPU memory, through its pinned buffer. */
    private void toDevice(MemorySegment from, Column column) {
        bind();
        long n = from.byteSize();
        column.ensure(n);
        MemorySegment.copy(from, 0, column.hostSegment, 0, n);
        cuMemcpyHtoD(column.onDevice, column.host, n);
    }

    @Override
    public void close() {
        bind();
        keys.free();
        values.free();
        cuDevicePrimaryCtxRelease(device);
    }
}
