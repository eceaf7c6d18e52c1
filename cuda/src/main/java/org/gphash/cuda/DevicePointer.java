package org.gphash.cuda;

import jcuda.driver.CUdeviceptr;

/** A device pointer whose address can be read, to pass it inside the kernels' parameter structs. */
final class DevicePointer extends CUdeviceptr {

    long address() {
        return getNativePointer();
    }
}
