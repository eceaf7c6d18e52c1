package org.gphash;

/** Which engine executes the operations. Both use the same pool format and algorithm. */
public enum Backend {
    /** Java threads on the mapped pool; the reference engine, and the default. */
    CPU,
    /** CUDA kernels on the pool registered with the GPU (needs the cuda module and a GPU). */
    GPU
}
