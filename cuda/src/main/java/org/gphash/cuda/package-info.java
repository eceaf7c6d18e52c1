/**
 * The GPU engine: CUDA kernels over the pool registered with the GPU, driven through JCuda. This
 * package holds the engine itself ({@link org.gphash.cuda.GpuEngine}, its factory, device-resident
 * batches, the host reads beside batches); its parts are in packages by stage, each matching a folder
 * of CUDA headers under cuda/src/main/cuda/gphash:
 * <ul>
 *   <li>{@code routing}: the one router that chooses how each call runs, and what it decides by;</li>
 *   <li>{@code staging}: how a host batch's columns reach the GPU (pinned in place, or copied by its
 *       caller or a lane) and its chunks in flight;</li>
 *   <li>{@code pipeline}: the v2 batch pipeline over the HBM index mirror (pipeline/*.cuh): stages,
 *       sort and scans, the mirror, the heap's bitmap, small batches in one launch;</li>
 *   <li>{@code poolpath}: per-operation kernels that probe the pool itself (table/batch_kernel.cuh, op_*.cuh),
 *       and recovery and resize as kernels (pool/recovery_kernel.cuh, pool/rehash_kernel.cuh);</li>
 *   <li>{@code cache}: BktCache in GPU memory (cache_*.cuh);</li>
 *   <li>{@code runtime}: the CUDA context, kernels, memory, registration and parameter structs they
 *       all use.</li>
 * </ul>
 */
package org.gphash.cuda;
