package org.gphash.crashtest;

import java.io.PrintStream;
import java.util.Arrays;
import java.util.List;

import org.gphash.IndexStats;
import org.gphash.format.ValueClasses;
import org.gphash.recovery.PoolReport;
import org.gphash.table.SizeClassHeap;

/**
 * Value space must not leak across rounds: per pool file (one, or one per shard), its committed
 * length, resizes and heap bytes after the last round, and the check of the next round's against
 * them. A leak is counted as leaked bytes in the run's {@link Tally}.
 *
 * <p>Compared in bytes: format 3's pool check numbers its heap in 16-byte units, not in blocks (its
 * blocks have many sizes), and each thread that writes keeps a segment of each class it writes with
 * room in it ({@link SizeClassHeap}), room no other class takes. Counted in blocks, a format 3 heap
 * of 18.9 MB read as 1,183,744 "blocks" against 73,000 items, and every heap growth without a resize
 * was flagged as a leak (8 threads on 16 cores, docs/lab/2026-11-30-packed-values.md).
 */
final class GrowthCheck {

    private final long[] lastFileBytes;
    private final long[] lastResizes;
    /** The heap's bytes after the last round's check; -1 before a pool's first check. */
    private final long[] lastHeapBytes;
    private final int poolFormat;
    /** What the workload's threads may keep in segments of their own (format 3), whatever the items. */
    private final long threadReserveBytes;
    /** The most heap bytes one item takes: the block of a value of the workload's largest length. */
    private final long format3ItemBytes;

    GrowthCheck(int pools, int poolFormat, int threads) {
        this.lastFileBytes = new long[pools];
        this.lastResizes = new long[pools];
        this.lastHeapBytes = new long[pools];
        this.poolFormat = poolFormat;
        int valueSize = Workload.valueSize(poolFormat);
        int smallest = ValueClasses.classOf(Workload.MIN_LENGTH);
        int largest = ValueClasses.classOf(valueSize);
        int classes = (largest - smallest) / 2 + 2;   // the framed classes the lengths fall in, and a bare one
        this.threadReserveBytes = poolFormat == 3 ? (long) threads * classes * SizeClassHeap.SEGMENT_BYTES : 0;
        this.format3ItemBytes = ValueClasses.blockBytes(largest);
    }

    /** A new pool (or sharded index): each pool file's size as made, no resize yet, its heap read at the first check. */
    void newPool(List<IndexStats> shards) {
        for (int s = 0; s < shards.size(); s++) {
            lastFileBytes[s] = shards.get(s).fileBytes();
        }
        Arrays.fill(lastHeapBytes, -1);
        Arrays.fill(lastResizes, 0);
    }

    /**
     * Checks pool file {@code s} after round {@code r}, with at most {@code maxItems} items ever live,
     * and counts its resizes. Free space is rebuilt on every open, so a leak would
     * show as a heap growth the item count cannot explain: with at most {@code maxItems} items ever
     * live, a heap that already holds far more than they take never needs to grow. "Far more" is
     * {@code slack} more items: 1024 blocks plus two batches per worker thread, since a batch's value
     * writes need that many free blocks before it runs (the GPU engine grows the heap when fewer are
     * free), and up to a batch's replaced blocks await reclamation. (With 1024 alone, a GPU run with
     * batches of 2048 flagged a legitimate growth.) In format 3, each item at the block of the longest
     * value, and the threads' own segments besides. Such a growth is counted as leaked bytes.
     */
    void check(PoolReport check, int s, long maxItems, long slack, Tally tally, PrintStream log, int r) {
        long resizes = check.header().resizes();
        // The committed length, not the file's: an interrupted growth (file extended, header not yet
        // committed) leaves trailing bytes that the pool ignores and its next growth reuses. Per
        // shard pool, against the items of the whole index (an upper bound of any shard's).
        long file = check.header().fileLength();
        long itemBytes = poolFormat == 3 ? format3ItemBytes : check.valueStride();
        long explained = (maxItems + slack) * itemBytes + threadReserveBytes;
        if (file > lastFileBytes[s] && resizes == lastResizes[s] && lastHeapBytes[s] >= 0 && explained < lastHeapBytes[s]) {
            tally.leakedBytes += file - lastFileBytes[s];
            log.printf("round %d: pool %d's committed length grew from %d to %d bytes without a resize, with at most %d "
                    + "items in a heap of %d bytes (%d would hold them)%n", r + 1, s, lastFileBytes[s], file, maxItems,
                    lastHeapBytes[s], explained);
        }
        tally.resizes += resizes - lastResizes[s];
        lastResizes[s] = resizes;
        lastFileBytes[s] = file;
        // Format 3's check numbers its heap by the 16-byte unit a block starts at; format 2's in blocks of its stride.
        lastHeapBytes[s] = check.valueBlocks() * (poolFormat == 3 ? 16 : check.valueStride());
    }
}
