package org.gphash.cluster;

import java.util.List;

import org.gphash.BatchResult;

/**
 * Part of a batch did not run: the nodes of some shards were down or failed while running their
 * parts. The parts of the other shards ran, and their outcomes are in the caller's
 * {@link BatchResult} ({@link #result()}); every operation of the shards named here is
 * {@code NOT_APPLIED}, except that a node which failed while running its part may have applied
 * some of it (as a batch on one pool interrupted by a crash: whole operations, never torn ones).
 */
public final class ShardsUnavailableException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final transient List<Integer> shards;
    private final transient BatchResult result;

    /**
     * @param shards  the shards whose parts did not run, ascending
     * @param why     per shard, what happened (node name and cause)
     * @param result  the result holding the outcomes of the parts that ran
     * @param cause   the first failure
     */
    ShardsUnavailableException(List<Integer> shards, String why, BatchResult result, Throwable cause) {
        super("shards " + shards + " unavailable: " + why, cause);
        this.shards = List.copyOf(shards);
        this.result = result;
    }

    /** {@return the shards whose parts did not run} */
    public List<Integer> shards() {
        return shards;
    }

    /** {@return the batch's result: outcomes of the parts that ran, NOT_APPLIED for the shards named} */
    public BatchResult result() {
        return result;
    }
}
