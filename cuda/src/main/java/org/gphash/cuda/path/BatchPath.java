package org.gphash.cuda.path;


import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.IndexStats;
import org.gphash.cuda.staging.PreparedBatch;

/**
 * How the GPU engine runs batches: {@link org.gphash.cuda.pipeline.MirrorPath} (the v2 pipeline over
 * the HBM index mirror) or {@link org.gphash.cuda.poolpath.PoolPath} (per-operation kernels probing the
 * pool, the GPHash paper's design). Which of its routes a batch takes is the
 * {@link org.gphash.cuda.routing.Router}'s choice; the path runs what it is given, under the engine's
 * lock. What only the mirror path does is behind two views: host batches queued under the lock and
 * waited for outside it ({@link #queued}), and small batches in one launch, batches of gets among them
 * run outside the lock ({@link #oneLaunch}).
 */
public interface BatchPath extends AutoCloseable {

    /**
     * Runs a batch held in Java memory, results into {@code result}, by the path's general route
     * ({@link org.gphash.cuda.routing.Router.Route#PIPELINE} or {@link org.gphash.cuda.routing.Router.Route#POOL_PATH}). {@code prepared}: what
     * {@link QueuedBatches#pinOutsideLock} prepared for it in this call, or null (the path does what it
     * needs itself).
     */
    void execute(Batch batch, BatchResult result, PreparedBatch prepared);

    /**
     * {@return host batches queued under the engine's lock and waited for outside it (the mirror
     * path's), or {@link QueuedBatches#NONE} where every batch runs to the end under the lock}
     */
    QueuedBatches queued();

    /**
     * {@return small batches run in one launch (the mirror path's), or {@link OneLaunchBatches#NONE}
     * where there are none}
     */
    OneLaunchBatches oneLaunch();

    /**
     * Runs a batch whose columns are in GPU memory (device addresses; values and out may be 0 when
     * unused; lengths and outLengths are 0 where every value has the value size: a path that takes
     * no other lengths is never given any, {@link org.gphash.cuda.GpuEngineFeatures} refuses them first).
     */
    void executeOnDevice(long n, long kinds, long keys, long values, long lengths, long codes, long out, long outLengths);

    /** Brings the host's view of the pool up to date (heap bitmap) before the host reads or changes it. */
    void syncHost();

    /**
     * Gives the heap's free space back to where this path's batches take blocks from, after the host
     * changed it ({@link #syncHost} lent it): the mirror path's bitmap in GPU memory; nothing on a
     * path whose batches use the host's heap.
     */
    void heapToDevice();

    /** The HBM mirror's TableParams as the kernels receive them, or null on a path without one. */
    byte[] mirrorTableParams();

    /** The engine's figures, completed with what only this path knows. */
    IndexStats stats(IndexStats pool);

    /** GPU time of the last batch (events around its kernels), or 0 where not measured. */
    long lastBatchGpuNanos();

    @Override
    void close();
}
