package org.gphash.cuda.runtime;

import jcuda.driver.CUdeviceptr;

/** A device pointer whose address can be read, to pass it inside the kernels' parameter structs. */
public final class DevicePointer extends CUdeviceptr {

    public long address() {
        return getNativePointer();
    }

    /**
     * A JCuda device pointer to a raw device address (the caller's buffers arrive as addresses): JCuda
     * passes a pointer's native address plus its byte offset, so an empty pointer offset by the address.
     */
    public static CUdeviceptr at(long address) {
        return new CUdeviceptr().withByteOffset(address);
    }
}
