package org.gphash.spi;

/**
 * A batch handed to {@link Engine#submit}: {@link #await} returns once it has run and its results
 * are in its {@link org.gphash.BatchResult}. Until then neither the batch nor the result may be
 * touched. Awaiting twice is harmless; a failure of the batch is thrown by every await.
 */
@FunctionalInterface
public interface SubmittedBatch {

    /** A batch that ran before {@link Engine#submit} returned. */
    SubmittedBatch DONE = () -> { };

    /** Waits until the batch has run and its results are in place; rethrows what made it fail. */
    void await();
}
