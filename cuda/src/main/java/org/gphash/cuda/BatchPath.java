package org.gphash.cuda;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.IndexStats;

/**
 * How the GPU engine runs batches: {@link MirrorPath} (the v2 pipeline over the HBM index mirror) or
 * {@link PoolPath} (per-operation kernels probing the pool, the GPHash paper's design). Called under
 * the engine's lock, one batch at a time (small batches of gets may be queued, see {@link #queue}).
 */
interface BatchPath extends AutoCloseable {

    /** Runs a batch held in Java memory, results into {@code result}. */
    void execute(Batch batch, BatchResult result);

    /**
     * Whether {@link #queue} takes {@code batch}: queued without waiting, its results harvested later
     * (the mirror path's small batches of gets). Batches queued run in order, before anything else.
     */
    default boolean queues(Batch batch) {
        return false;
    }

    /** Queues a batch {@link #queues} took; returns the ticket {@link #harvest} takes. */
    default long queue(Batch batch, BatchResult result) {
        throw new UnsupportedOperationException("this path runs every batch at once");
    }

    /**
     * Waits for the queued batches up to {@code ticket} (Long.MAX_VALUE: all) and puts their results
     * in place (again: nothing). The engine harvests all before anything else runs.
     */
    default void harvest(long ticket) {
    }

    /** Whether a batch is queued and not yet harvested. */
    default boolean hasQueued() {
        return false;
    }

    /** Fails every queued batch with {@code why}: the engine is abandoned, their results never come. */
    default void dropQueued(RuntimeException why) {
    }

    /** Runs a batch whose columns are in GPU memory (device addresses; values and out may be 0 when unused). */
    void executeOnDevice(long n, long kinds, long keys, long values, long codes, long out);

    /** Brings the host's view of the pool up to date (heap bitmap) before the host reads or changes it. */
    void syncHost();

    /** The engine's figures, completed with what only this path knows. */
    IndexStats stats(IndexStats pool);

    /** GPU time of the last batch (events around its kernels), or 0 where not measured. */
    long lastBatchGpuNanos();

    @Override
    void close();
}
