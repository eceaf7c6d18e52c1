package org.gphash.cli;

import java.util.Arrays;

/**
 * What one worker thread did in one phase: operations by kind, verification failures, and the
 * latency of each batch it executed. Each thread fills its own tally (no sharing, no atomics on
 * the hot path); {@link #merge} combines them when the phase is over.
 */
public final class PhaseTally {

    public long reads;
    public long updates;
    public long inserts;
    /** Used by the YCSB benchmark (the demo issues neither). */
    public long deletes;
    public long readModifyWrites;
    /** A read that found a value whose embedded key or filler was wrong. */
    public long mismatches;
    /** A read or update of a key that must exist but was not found. */
    public long missing;
    /** An insert of a fresh key that did not report INSERTED. */
    public long insertFailures;

    private long[] batchNanos = new long[64];
    private int batches;

    public void recordBatch(long nanos) {
        if (batches == batchNanos.length) {
            batchNanos = Arrays.copyOf(batchNanos, batches * 2);
        }
        batchNanos[batches++] = nanos;
    }

    public long operations() {
        return reads + updates + inserts + deletes + readModifyWrites;
    }

    /** Verification failures of any kind; must be 0. */
    public long failures() {
        return mismatches + missing + insertFailures;
    }

    public int batches() {
        return batches;
    }

    /** Mean batch latency in nanoseconds (0 when no batch ran). */
    public double meanBatchNanos() {
        if (batches == 0) {
            return 0;
        }
        double sum = 0;
        for (int i = 0; i < batches; i++) {
            sum += batchNanos[i];
        }
        return sum / batches;
    }

    /** The {@code q}-quantile (nearest rank) of batch latency in nanoseconds. */
    public long batchQuantileNanos(double q) {
        if (batches == 0) {
            return 0;
        }
        long[] sorted = Arrays.copyOf(batchNanos, batches);
        Arrays.sort(sorted);
        int rank = (int) Math.ceil(q * batches);
        return sorted[Math.max(0, Math.min(batches - 1, rank - 1))];
    }

    public static PhaseTally merge(Iterable<PhaseTally> tallies) {
        PhaseTally all = new PhaseTally();
        for (PhaseTally t : tallies) {
            all.reads += t.reads;
            all.updates += t.updates;
            all.inserts += t.inserts;
            all.deletes += t.deletes;
            all.readModifyWrites += t.readModifyWrites;
            all.mismatches += t.mismatches;
            all.missing += t.missing;
            all.insertFailures += t.insertFailures;
            for (int i = 0; i < t.batches; i++) {
                all.recordBatch(t.batchNanos[i]);
            }
        }
        return all;
    }
}
