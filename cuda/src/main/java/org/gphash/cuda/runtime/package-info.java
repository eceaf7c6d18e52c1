/**
 * The CUDA runtime every stage of the GPU engine builds on: the driver's context and the kernels
 * loaded from the jar's fatbin ({@link org.gphash.cuda.runtime.CudaRuntime}), launches
 * ({@link org.gphash.cuda.runtime.Launcher}), device and page-locked memory
 * ({@link org.gphash.cuda.runtime.DeviceBuffer}, {@link org.gphash.cuda.runtime.PinnedBuffer}, the
 * pointer types), the pool's mapping registered with CUDA
 * ({@link org.gphash.cuda.runtime.PoolRegistration}), the kernels' parameter structs
 * ({@link org.gphash.cuda.runtime.KernelParams}, checked against the CUDA headers by
 * SharedConstantsTest), and how driver failures become the API's exceptions
 * ({@link org.gphash.cuda.runtime.GpuFailure}, {@link org.gphash.cuda.runtime.GpuUnavailable}).
 * Public for the engine's other packages, not API.
 */
package org.gphash.cuda.runtime;
