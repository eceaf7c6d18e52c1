package org.gphash.cuda;

import static jcuda.driver.JCudaDriver.cuMemAlloc;
import static jcuda.driver.JCudaDriver.cuMemFree;

import jcuda.driver.CUdeviceptr;

/** Device memory that grows on demand and is freed on close. Not thread-safe. */
final class DeviceBuffer implements AutoCloseable {

    private DevicePointer pointer;
    private long capacity;

    /** At least {@code bytes} bytes; contents are not kept across growth. */
    DeviceBuffer ensure(long bytes) {
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

    CUdeviceptr pointer() {
        return pointer;
    }

    CUdeviceptr at(long offset) {
        return pointer.withByteOffset(offset);
    }

    long capacity() {
        return capacity;
    }

    long address() {
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
