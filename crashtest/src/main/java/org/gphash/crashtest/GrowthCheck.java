package org.gphash.crashtest;

import java.io.PrintStream;
import java.util.Arrays;
import java.util.List;

import org.gphash.IndexStats;
import org.gphash.recovery.PoolReport;

/**
 * Value space must not leak across rounds: per pool file (one, or one per shard), its committed
 * length, resizes and value blocks after the last round, and the check of the next round's against
 * them. A leak is counted as leaked bytes in the run's {@link Tally}.
 */
final class GrowthCheck {

    private final long[] lastFileBytes;
    private final long[] lastResizes;
    private final long[] lastValueBlocks;

    GrowthCheck(int pools) {
        this.lastFileBytes = new long[pools];
        this.lastResizes = new long[pools];
        this.lastValueBlocks = new long[pools];
    }

    /** A new pool (or sharded index): each pool file's size and blocks as made, no resize yet. */
    void newPool(List<IndexStats> shards) {
        for (int s = 0; s < shards.size(); s++) {
            lastFileBytes[s] = shards.get(s).fileBytes();
            lastValueBlocks[s] = shards.get(s).valueBlocks();
        }
        Arrays.fill(lastResizes, 0);
    }

    /**
     * Checks pool file {@code s} after round {@code r}, with at most {@code maxItems} items ever live,
     * and counts its resizes. Free space is rebuilt on every open, so a leak would
     * show as a heap growth the item count cannot explain: with at most {@code maxItems} items ever
     * live, a heap that already has far more blocks than that never needs to grow. "Far more" is
     * {@code slack} more: 1024 blocks plus two batches per worker thread, since a batch's value writes need that many free blocks
     * before it runs (the GPU engine grows the heap when fewer are free), and up to a batch's
     * replaced blocks await reclamation. (With 1024 alone, a GPU run with batches of 2048 flagged a
     * legitimate growth.) Such a growth is
     * counted as leaked bytes.
     */
    void check(PoolReport check, int s, long maxItems, long slack, Tally tally, PrintStream log, int r) {
        long resizes = check.header().resizes();
        // The committed length, not the file's: an interrupted growth (file extended, header not yet
        // committed) leaves trailing bytes that the pool ignores and its next growth reuses. Per
        // shard pool, against the items of the whole index (an upper bound of any shard's).
        long file = check.header().fileLength();
        if (file > lastFileBytes[s] && resizes == lastResizes[s] && maxItems + slack < lastValueBlocks[s]) {
            tally.leakedBytes += file - lastFileBytes[s];
            log.printf("round %d: pool %d's committed length grew from %d to %d bytes without a resize, with at most %d items in %d value blocks%n",
                    r + 1, s, lastFileBytes[s], file, maxItems, lastValueBlocks[s]);
        }
        tally.resizes += resizes - lastResizes[s];
        lastResizes[s] = resizes;
        lastFileBytes[s] = file;
        lastValueBlocks[s] = check.valueBlocks();
    }
}
