/**
 * The GPU engine under a sharded index ({@code org.gphash.shard}): device-resident batches split by
 * shard on the GPU that holds them, their parts copied GPU to GPU to each shard's GPU and run there,
 * and the outcomes merged back ({@link org.gphash.cuda.shard.DeviceBatchesAcrossShards}). Host
 * batches need nothing here: each shard runs its part where it lies
 * ({@code GpuEngine.executeInPlace}).
 */
package org.gphash.cuda.shard;
