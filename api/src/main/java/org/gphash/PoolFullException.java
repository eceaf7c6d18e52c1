package org.gphash;

import org.gphash.error.GPHashException;

/**
 * The pool would have to grow beyond the configured maximum size. The operation that needed the
 * space did not happen; everything stored before is intact.
 */
public final class PoolFullException extends GPHashException {
    private static final long serialVersionUID = 1L;

    private final transient BatchResult batchResult;

    /**
     * The pool is full.
     *
     * @param message which pool, how large it is, and its limit
     */
    public PoolFullException(String message) {
        super(message);
        this.batchResult = null;
    }

    /**
     * A batch stopped: {@code result} holds each operation's outcome, NOT_APPLIED where it did not run.
     *
     * @param message which pool, how large it is, and its limit
     * @param result  the batch's outcomes so far
     * @param cause   the failure underneath
     */
    public PoolFullException(String message, BatchResult result, Throwable cause) {
        super(message, cause);
        this.batchResult = result;
    }

    /**
     * For a batch that failed part way: the outcome of every operation that ran, and
     * {@link Outcome#NOT_APPLIED} for those that did not (they changed nothing). Null for a single
     * operation.
     *
     * @return the batch's outcomes, or null
     */
    public BatchResult batchResult() {
        return batchResult;
    }
}
