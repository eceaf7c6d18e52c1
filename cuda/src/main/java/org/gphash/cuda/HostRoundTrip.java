package org.gphash.cuda;

import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;

import java.lang.foreign.MemorySegment;

/**
 * The copies a GPU application pays when its index runs on the CPU (the CPU-assisted baseline):
 * keys from GPU memory to the host before a batch, values from the host to GPU memory after it,
 * through pinned buffers, into and out of the Java arrays the CPU engine reads. For benchmarks.
 * Not thread-safe: one per thread.
 */
public final class HostRoundTrip implements AutoCloseable {

    private final CudaRuntime cuda = CudaRuntime.get();
    private final DeviceBuffer deviceKeys = new DeviceBuffer();
    private final DeviceBuffer deviceValues = new DeviceBuffer();
    private final PinnedBuffer hostKeys = new PinnedBuffer();
    private final PinnedBuffer hostValues = new PinnedBuffer();

    /** Puts a batch's keys where the application would hold them: GPU memory (not part of the cost). */
    public void placeOnDevice(MemorySegment keys) {
        cuda.bind();
        long n = keys.byteSize();
        deviceKeys.ensure(n);
        hostKeys.ensure(n);
        MemorySegment.copy(keys, 0, hostKeys.segment(), 0, n);
        cuMemcpyHtoD(deviceKeys.pointer(), hostKeys.pointer(), n);
    }

    /** The application's keys (placed by {@link #placeOnDevice}), in GPU memory, become {@code keys} (a batch's key column) on the host. */
    public void keysToHost(MemorySegment keys) {
        cuda.bind();
        long n = keys.byteSize();
        deviceKeys.ensure(n);
        hostKeys.ensure(n);
        cuMemcpyDtoH(hostKeys.pointer(), deviceKeys.pointer(), n);
        MemorySegment.copy(hostKeys.segment(), 0, keys, 0, n);
    }

    /**
     * Copies {@code like.byteSize()} bytes from GPU memory into host (Java) memory, as a batch column
     * would travel, without touching {@code like} itself.
     */
    public void fromDevice(MemorySegment like) {
        cuda.bind();
        long n = like.byteSize();
        deviceKeys.ensure(n);
        hostKeys.ensure(n);
        if (scratch.length < n) {
            scratch = new byte[(int) n];
        }
        cuMemcpyDtoH(hostKeys.pointer(), deviceKeys.pointer(), n);
        MemorySegment.copy(hostKeys.segment(), 0, MemorySegment.ofArray(scratch), 0, n);
    }

    private byte[] scratch = new byte[0];

    /** {@code values} (a result's value column) goes back to the application's GPU memory. */
    public void valuesToDevice(MemorySegment values) {
        cuda.bind();
        long n = values.byteSize();
        deviceValues.ensure(n);
        hostValues.ensure(n);
        MemorySegment.copy(values, 0, hostValues.segment(), 0, n);
        cuMemcpyHtoD(deviceValues.pointer(), hostValues.pointer(), n);
    }

    @Override
    public void close() {
        cuda.bind();
        deviceKeys.close();
        deviceValues.close();
        hostKeys.close();
        hostValues.close();
    }
}
