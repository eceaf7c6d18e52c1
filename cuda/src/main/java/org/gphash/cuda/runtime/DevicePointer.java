package org.gphash.cuda.runtime;

import jcuda.driver.CUdeviceptr;

/** A device pointer whose address can be read, to pass it inside the kernels' parameter structs. */
public final class DevicePointer extends CUdeviceptr {

    public long address() {
        return getNativePointer();
    }
}
