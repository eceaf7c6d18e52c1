/**
 * Kernels on the pool itself: the GPHash paper's per-operation kernels, which probe the pool over
 * PCIe ({@link org.gphash.cuda.poolpath.PoolPath}, {@link org.gphash.cuda.poolpath.GroupBuffers};
 * table/batch_kernel.cuh, op_*.cuh), the path without an index mirror; and recovery and resize as kernels
 * ({@link org.gphash.cuda.table.GpuTableKernels}; pool/recovery_kernel.cuh, pool/rehash_kernel.cuh), which
 * both paths use. Public for the engine's other packages, not API.
 */
package org.gphash.cuda.poolpath;
