package org.gphash.cuda.path;

import java.lang.foreign.MemorySegment;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.cuda.staging.BatchInFlight;
import org.gphash.cuda.staging.PreparedBatch;

/**
 * Host batches queued under the engine's lock and waited for outside it, several threads' batches in
 * flight at once (the mirror path's {@code HostBatches}): prepared before the lock
 * ({@link #pinOutsideLock}), started under it ({@link #start}), awaited outside it
 * ({@link #awaitOutsideLock}) and finished under it again ({@link #finish}).
 */
public interface QueuedBatches {

    /** A path that queues nothing: every batch runs to the end under the lock, nothing is ever in flight. */
    QueuedBatches NONE = new QueuedBatches() {
        @Override
        public PreparedBatch pinOutsideLock(Batch batch, BatchResult result) {
            return null;
        }

        @Override
        public PreparedBatch pinPartOutsideLock(Batch batch, BatchResult result, MemorySegment positions, int count) {
            return null;
        }

        @Override
        public void release(PreparedBatch prepared) {
        }

        @Override
        public BatchInFlight start(Batch batch, BatchResult result, PreparedBatch prepared) {
            throw new UnsupportedOperationException("this path queues no batches: the router sends it none");
        }

        @Override
        public void awaitOutsideLock(BatchInFlight batch) {
        }

        @Override
        public void finish(BatchInFlight batch) {
        }

        @Override
        public void drainBatches() {
        }

        @Override
        public boolean harvested(BatchInFlight batch) {
            return true;
        }

        @Override
        public boolean batchesInFlight() {
            return false;
        }

        @Override
        public long opsInFlight() {
            return 0;
        }
    };

    /**
     * Outside the engine's lock: pins the memory of the batch and its result where the chunks will
     * move them to and from the GPU directly. Registration is slow (tens of microseconds a MiB) and
     * touches nothing the lock guards, so threads do it side by side instead of one after another
     * inside the lock. The context is bound. Returns what it prepared (kinds counted, columns pinned
     * or copied to pinned memory), for {@link #start} in the same call, or null.
     */
    PreparedBatch pinOutsideLock(Batch batch, BatchResult result);

    /**
     * Outside the engine's lock: pins a caller's batch and result for a shard's part of it (the
     * operations at {@code count} positions, {@code Engine.executeInPlace}), and returns what to
     * {@link #start} it with; null when either could not be pinned (the caller then copies the part
     * out). The context is bound.
     */
    PreparedBatch pinPartOutsideLock(Batch batch, BatchResult result, MemorySegment positions, int count);

    /**
     * Takes back what {@link #pinOutsideLock} returned, once the batch is done with it (not after a
     * failure that may have left the batch's copies in flight: the path closes it then).
     */
    void release(PreparedBatch prepared);

    /**
     * Under the engine's lock: queues the batch and returns it in flight, for its caller to wait for
     * outside the lock ({@link #awaitOutsideLock}) and {@link #finish} under it.
     */
    BatchInFlight start(Batch batch, BatchResult result, PreparedBatch prepared);

    /** Outside the engine's lock: waits until the GPU is done with the batch {@link #start} queued. */
    void awaitOutsideLock(BatchInFlight batch);

    /** Under the engine's lock: puts the rest of the batch's results in place and runs what it left. */
    void finish(BatchInFlight batch);

    /**
     * Under the engine's lock: waits for every batch in flight and puts its results in place, before
     * anything that must find the GPU idle (every other route, growth, resize, stats, close).
     */
    void drainBatches();

    /** {@return whether every chunk of the batch has been waited for and its results put in place} */
    boolean harvested(BatchInFlight batch);

    /** {@return whether batches started are in flight (the pool may be written by the GPU)} */
    boolean batchesInFlight();

    /** {@return operations in flight (the header's in-flight bound must cover them and the next batch's)} */
    long opsInFlight();
}
