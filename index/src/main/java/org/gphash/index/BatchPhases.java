package org.gphash.index;

import java.util.Arrays;

import org.gphash.persistence.PersistRanges;
import org.gphash.table.PersistPhases;

/**
 * One thread's state for running a batch in phases ({@link PhasedBatch}): the ranges of each persist
 * phase, the blocks the batch unlinked (reclaimed only once its meta words are durable), and per
 * operation the value block and slot its first phase prepared. Reused from batch to batch.
 */
final class BatchPhases implements PersistPhases {

    /** Phase 1: new values and the keys written into claimed slots. */
    final PersistRanges valuesAndKeys = new PersistRanges();
    /** Phase 2: the meta words that publish, update and clear items. */
    final PersistRanges metas = new PersistRanges();

    @Override
    public PersistRanges metas() {
        return metas;
    }

    private long[] retired = new long[64];
    private int retiredCount;

    /** Per operation of the current round: its staged value block, its claimed slot (-1: none). */
    long[] staged = new long[0];
    long[] claimed = new long[0];

    void ensureOps(int n) {
        if (staged.length < n) {
            staged = new long[Math.max(n, staged.length * 2)];
            claimed = new long[staged.length];
        }
    }

    @Override
    public void retire(long block) {
        if (retiredCount == retired.length) {
            retired = Arrays.copyOf(retired, retiredCount * 2);
        }
        retired[retiredCount++] = block;
    }

    int retiredCount() {
        return retiredCount;
    }

    long retired(int i) {
        return retired[i];
    }

    void clear() {
        valuesAndKeys.clear();
        metas.clear();
        retiredCount = 0;
    }
}
