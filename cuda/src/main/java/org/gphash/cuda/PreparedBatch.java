package org.gphash.cuda;

/**
 * What the mirror path prepared for a host batch before the engine's lock, for its run under it in
 * the same call: the batch's kinds counted chunk by chunk ({@link ChunkKinds}) and where its columns
 * can be copied to the GPU from directly ({@link HostColumns}; null: through the lanes' staging).
 * Not thread-safe: each thread has its own, filled and read within one call.
 */
final class PreparedBatch {

    final ChunkKinds kinds = new ChunkKinds();
    final ThreadStaging staging = new ThreadStaging();
    HostColumns columns;
}
