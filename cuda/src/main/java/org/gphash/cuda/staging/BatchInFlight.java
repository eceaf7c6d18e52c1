package org.gphash.cuda.staging;

import java.lang.foreign.MemorySegment;

import org.gphash.Batch;
import org.gphash.BatchResult;

/**
 * A host batch whose chunks the mirror path has queued on the GPU ({@code MirrorPath.start}) and not
 * all harvested: what its calling thread waits for outside the engine's lock, and what whichever
 * thread harvests one of its chunks under the lock fills in (results, reruns, a failure). Fields are
 * read and written under the engine's lock, but for {@link #lastChunk} and {@link #lastLane}, which
 * are set before the lock is released and only read after.
 */
public final class BatchInFlight {

    private static final int[] NONE = new int[0];

    public final Batch batch;
    public final BatchResult result;
    /**
     * A shard's part of {@link #batch}: its positions (4-byte ints) and how many; the part's results go
     * to those positions of {@link #result}. Null: the whole batch.
     */
    public final MemorySegment positions;
    public final int size;
    /** The queue position of the batch's last chunk (MirrorPath counts chunks queued and harvested). */
    public long lastChunk = -1;
    /** The lane its last chunk went to (it may carry a later chunk by the time its owner looks). */
    public HostLane lastLane;
    /** Operations of the batch that found every candidate bucket full: run again after a resize. */
    public int[] rerun = NONE;
    /** Its chunks queued and not yet harvested. */
    public int chunksInFlight;
    /** What went wrong harvesting one of its chunks, for its owner to throw. */
    public RuntimeException failure;

    public BatchInFlight(Batch batch, BatchResult result) {
        this(batch, result, null, batch.size());
    }

    public BatchInFlight(Batch batch, BatchResult result, MemorySegment positions, int size) {
        this.batch = batch;
        this.result = result;
        this.positions = positions;
        this.size = size;
    }

    public void failed(RuntimeException e) {
        if (failure == null) {
            failure = e;
        } else if (failure != e) {
            failure.addSuppressed(e);
        }
    }
}
