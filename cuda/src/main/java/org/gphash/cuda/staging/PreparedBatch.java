package org.gphash.cuda.staging;

import org.gphash.cuda.routing.ChunkKinds;

/**
 * What the mirror path prepared for a host batch before the engine's lock, for its run under it in
 * the same call: the batch's kinds counted chunk by chunk ({@link ChunkKinds}) and where its columns
 * can be copied to the GPU from directly ({@link HostColumns}; null: through the lanes' staging).
 * Not thread-safe: one batch's at a time, taken from the path's free list before the lock and given
 * back when the batch is done ({@link org.gphash.cuda.BatchPath#release}).
 */
public final class PreparedBatch {

    public final ChunkKinds kinds = new ChunkKinds();
    public final CallerStaging staging = new CallerStaging();
    public HostColumns columns;
}
