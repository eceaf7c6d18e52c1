/**
 * The GPU engine: warp-cooperative CUDA kernels over the pool registered with the GPU, driven through JCuda.
 */
package org.gphash.cuda;
