package org.gphash.cuda.staging;

import static jcuda.driver.JCudaDriver.cuMemcpyDtoHAsync;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoDAsync;

import java.lang.foreign.MemorySegment;

import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUstream;
import org.gphash.cuda.runtime.DeviceBuffer;
import org.gphash.cuda.runtime.HostPointer;
import org.gphash.cuda.runtime.PinnedBuffer;

/**
 * How every column of a host batch and of its result crosses to the GPU and back: a device buffer
 * with its pinned host twin, grown together, copied one way or the other on a stream. The engine's
 * lanes ({@link HostLane}, the pool path's {@code StreamLane}) keep one per column, the one-launch paths
 * ({@code SmallReads}, {@code SmallWrites}) one per direction, packed. A column whose batch memory
 * is itself pinned (registered with CUDA) skips the host twin: {@link #copyInFrom} and
 * {@link #copyOutTo} move it straight between that memory and the device buffer. Not thread-safe.
 */
public final class StagedBuffer implements AutoCloseable {

    private final PinnedBuffer host = new PinnedBuffer();
    private final DeviceBuffer device = new DeviceBuffer();

    /** Grows both sides to at least {@code bytes} (contents are not kept across growth). */
    public StagedBuffer ensure(long bytes) {
        device.ensure(bytes);
        host.ensure(bytes);
        return this;
    }

    /** Grows the device side alone, for a column that only ever moves to or from pinned batch memory. */
    public StagedBuffer ensureDevice(long bytes) {
        device.ensure(bytes);
        return this;
    }

    /** The host twin, where the host writes what goes in and reads what came out. */
    public MemorySegment host() {
        return host.segment();
    }

    /** The host twin as a pointer, for kernels that read or write it through the mapping. */
    public Pointer hostPointer() {
        return host.pointer();
    }

    public CUdeviceptr device() {
        return device.pointer();
    }

    public long deviceAddress() {
        return device.address();
    }

    /** Queues the copy of the host twin's first {@code bytes} to the device. */
    public void copyIn(long bytes, CUstream stream) {
        cuMemcpyHtoDAsync(device.pointer(), host.pointer(), bytes, stream);
    }

    /** Queues the copy of {@code bytes} of pinned host memory at {@code address} to the device. */
    public void copyInFrom(long address, long bytes, CUstream stream) {
        cuMemcpyHtoDAsync(device.pointer(), new HostPointer(address), bytes, stream);
    }

    /** Queues the copy of the device's first {@code bytes} back to the host twin. */
    public void copyOut(long bytes, CUstream stream) {
        cuMemcpyDtoHAsync(host.pointer(), device.pointer(), bytes, stream);
    }

    /** Queues the copy of the device's first {@code bytes} to pinned host memory at {@code address}. */
    public void copyOutTo(long address, long bytes, CUstream stream) {
        cuMemcpyDtoHAsync(new HostPointer(address), device.pointer(), bytes, stream);
    }

    @Override
    public void close() {
        try {
            host.close();
        } finally {
            device.close();
        }
    }
}
