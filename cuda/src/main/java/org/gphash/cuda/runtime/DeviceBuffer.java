package org.gphash.cuda.runtime;

import static jcuda.driver.JCudaDriver.cuMemAlloc;
import static jcuda.driver.JCudaDriver.cuMemFree;

import jcuda.driver.CUdeviceptr;

/** Device memory that grows on demand and is freed on close. Not thread-safe. */
public final class DeviceBuffer implements AutoCloseable {

    private DevicePointer pointer;
    private long capacity;

    /** At least {@code bytes} bytes; contents are not kept across growth. */
    public DeviceBuffer ensure(long bytes) {
        if (bytes > capacity) {
            close();
            long size = Math.max(bytes, 256);
            DevicePointer p = new DevicePointer();
            cuMemAlloc(p, size);
            pointer = p;
            capacity = size;
        }
        return this;
    }

    public CUdeviceptr pointer() {
        return pointer;
    }

    public CUdeviceptr at(long offset) {
        return pointer.withByteOffset(offset);
    }

    public long capacity() {
        return capacity;
    }

    public long address() {
        return pointer == null ? 0 : pointer.address();
    }

    @Override
    public void close() {
        if (pointer != null) {
            cuMemFree(pointer);
            pointer = null;
            capacity = 0;
        }
    }
}
