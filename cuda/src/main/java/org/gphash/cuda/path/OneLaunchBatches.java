package org.gphash.cuda.path;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.spi.SubmittedBatch;

/**
 * Small batches run in one launch each (the mirror path's {@code SmallBatches}): batches of gets on
 * slots claimed under the engine's lock and run outside it, alongside each other, and small writing
 * batches under the lock.
 */
public interface OneLaunchBatches {

    /** A path with no one-launch batches: the router sends it none, and there is nothing to drain. */
    OneLaunchBatches NONE = new OneLaunchBatches() {
        @Override
        public ReadSlot claimRead(Batch batch) {
            return null;
        }

        @Override
        public SubmittedBatch issueRead(ReadSlot slot, Batch batch, BatchResult result) {
            throw new UnsupportedOperationException("this path runs every batch under the engine's lock");
        }

        @Override
        public void drainReads() {
        }

        @Override
        public void abandonReads(RuntimeException why) {
        }

        @Override
        public void executeSmallWrites(Batch batch, BatchResult result) {
            throw new UnsupportedOperationException("this path runs no one-launch writing batches");
        }
    };

    /**
     * Under the engine's lock: a slot for a batch of gets, with the parameters it will run with; null
     * when none is free.
     */
    ReadSlot claimRead(Batch batch);

    /** Outside the engine's lock: issues the batch on the slot {@link #claimRead} gave, without waiting. */
    SubmittedBatch issueRead(ReadSlot slot, Batch batch, BatchResult result);

    /**
     * Under the engine's lock, before anything else: waits for every batch of gets claimed or issued
     * and puts its results in place (nothing reads the pool meanwhile).
     */
    void drainReads();

    /** Fails every batch of gets issued and not yet awaited with {@code why}: the engine is abandoned. */
    void abandonReads(RuntimeException why);

    /**
     * Runs a small writing batch in one launch ({@code Router.Route.SMALL_WRITES}), grouped by key on
     * the GPU unless the host finds its keys distinct.
     */
    void executeSmallWrites(Batch batch, BatchResult result);
}
