package org.gphash.cuda.staging;

import java.lang.foreign.MemorySegment;

import org.gphash.cuda.routing.ChunkKinds;

/**
 * What the mirror path prepared for a host batch before the engine's lock, for its run under it in
 * the same call: the batch's kinds counted chunk by chunk ({@link ChunkKinds}) and where its columns
 * can be copied to the GPU from directly ({@link HostColumns}; null: through the lanes' staging).
 * For a shard's part of a caller's batch ({@code Engine.executeInPlace}), also the part's positions.
 * Not thread-safe: one batch's at a time, taken from the path's free list before the lock and given
 * back when the batch is done ({@link org.gphash.cuda.path.QueuedBatches#release}).
 */
public final class PreparedBatch {

    public final ChunkKinds kinds = new ChunkKinds();
    public final CallerStaging staging = new CallerStaging();
    public HostColumns columns;
    /** A part's positions in its batch (4-byte ints) and how many, or null: the whole batch. */
    public MemorySegment positions;
    public int partSize;
}
