package org.gphash.cuda.path;

import java.lang.foreign.MemorySegment;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.IndexStats;
import org.gphash.cuda.staging.BatchInFlight;
import org.gphash.cuda.staging.PreparedBatch;
import org.gphash.spi.SubmittedBatch;

/**
 * How the GPU engine runs batches: {@link org.gphash.cuda.pipeline.MirrorPath} (the v2 pipeline over the HBM index mirror) or
 * {@link org.gphash.cuda.poolpath.PoolPath} (per-operation kernels probing the pool, the GPHash paper's design). Which of its
 * routes a batch takes is the {@link org.gphash.cuda.routing.Router}'s choice; the path runs what it is given. Called under
 * the engine's lock, but for small batches of gets, which run alongside each other outside it
 * ({@link #claimRead}), and the wait for a host batch's last chunk ({@link #awaitOutsideLock}): the
 * mirror path queues several threads' batches on the GPU at once.
 */
public interface BatchPath extends AutoCloseable {

    /**
     * Runs a batch held in Java memory, results into {@code result}, by the path's general route
     * ({@link org.gphash.cuda.routing.Router.Route#PIPELINE} or {@link org.gphash.cuda.routing.Router.Route#POOL_PATH}). {@code counted}: its kinds as
     * {@link #pinOutsideLock} prepared it in this call, or null (the path does what it needs itself).
     */
    void execute(Batch batch, BatchResult result, PreparedBatch prepared);

    /**
     * Starts {@link #execute}: queues the batch and returns it in flight, for its caller to wait for
     * outside the lock ({@link #awaitOutsideLock}) and {@link #finish} under it; or runs it to the end
     * and returns null (a path that queues nothing ahead).
     */
    default BatchInFlight start(Batch batch, BatchResult result, PreparedBatch prepared) {
        execute(batch, result, prepared);
        return null;
    }

    /** Outside the engine's lock: waits until the GPU is done with the batch {@link #start} queued. */
    default void awaitOutsideLock(BatchInFlight batch) {
    }

    /** Under the engine's lock: puts the rest of the batch's results in place and runs what it left. */
    default void finish(BatchInFlight batch) {
    }

    /**
     * Under the engine's lock: waits for every batch in flight and puts its results in place, before
     * anything that must find the GPU idle (every other route, growth, resize, stats, close).
     */
    default void drainBatches() {
    }

    /** Whether every chunk of the batch has been waited for and its results put in place. */
    default boolean harvested(BatchInFlight batch) {
        return true;
    }

    /** Whether batches started are in flight (the pool may be written by the GPU). */
    default boolean batchesInFlight() {
        return false;
    }

    /** Operations in flight (the header's in-flight bound must cover them and the next batch's). */
    default long opsInFlight() {
        return 0;
    }

    /**
     * Runs a small writing batch whose keys are distinct in one launch ({@link org.gphash.cuda.routing.Router.Route#SMALL_WRITES};
     * the mirror path only).
     */
    default void executeSmallWrites(Batch batch, BatchResult result) {
        throw new UnsupportedOperationException("this path runs no one-launch writing batches");
    }

    /**
     * Outside the engine's lock: pins a caller's batch and result for a shard's part of it (the
     * operations at {@code count} positions, {@code Engine.executeInPlace}), and returns what to
     * {@link #start} it with; null when this path does not run parts where they lie, or either could
     * not be pinned (the caller then copies the part out). The context is bound.
     */
    default PreparedBatch pinPartOutsideLock(Batch batch, BatchResult result, MemorySegment positions,
                                             int count) {
        return null;
    }

    /**
     * Outside the engine's lock, before {@link #execute}: pins the memory of the batch and its result
     * where this path will move them to and from the GPU directly. Registration is slow (tens of
     * microseconds a MiB) and touches nothing the lock guards, so threads do it side by side instead of one after
     * another inside the lock. The context is bound. Returns what it prepared (kinds counted, columns
     * pinned or copied to pinned memory), for {@link #execute} in the same call, or null.
     */
    default PreparedBatch pinOutsideLock(Batch batch, BatchResult result) {
        return null;
    }

    /**
     * Takes back what {@link #pinOutsideLock} returned, once the batch is done with it (not after a
     * failure that may have left the batch's copies in flight: the path closes it then).
     */
    default void release(PreparedBatch prepared) {
    }

    /**
     * Under the engine's lock: a slot for a batch {@link #readsConcurrently} took, with the
     * parameters it will run with; null when none is free (or the path runs none).
     */
    default ReadSlot claimRead(Batch batch) {
        return null;
    }

    /** Outside the engine's lock: issues the batch on the slot {@link #claimRead} gave, without waiting. */
    default SubmittedBatch issueRead(ReadSlot slot, Batch batch, BatchResult result) {
        throw new UnsupportedOperationException("this path runs every batch under the engine's lock");
    }

    /**
     * Under the engine's lock, before anything else: waits for every batch of gets claimed or issued
     * and puts its results in place (nothing reads the pool meanwhile).
     */
    default void drainReads() {
    }

    /** Fails every batch of gets issued and not yet awaited with {@code why}: the engine is abandoned. */
    default void abandonReads(RuntimeException why) {
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
