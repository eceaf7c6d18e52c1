package org.gphash.cuda;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

import org.gphash.Batch;
import org.gphash.index.KeyHasher;

/**
 * Whether no key repeats in a small run of a host batch, so that a batch that writes may skip the
 * pipeline's grouping (key table, radix sort, two scans: about 160 us of GPU time a batch on the
 * H100, whatever its size, against about 210 us for the whole batch). A coalesced batch of a few
 * callers' operations usually has distinct keys. Keys are compared by a 64-bit hash: equal keys
 * always collide, so a repeat is never missed; a collision of different keys only costs the
 * grouping. Above {@link #MAX_OPS} operations the check is not made (the grouping's cost is then
 * shared by many operations, and larger coalesced batches measured slower ungrouped). Not thread-safe.
 */
final class DistinctKeys {

    /**
     * The most operations checked; {@code -Dgphash.distinctWrites=0} turns the check (and the shortcut)
     * off. 32: on the H100 under YCSB's client, batches of about 8 (16 threads) gained 1.16x to 1.18x,
     * while with a limit of 1024 batches of 50 to 90 (256 threads) lost 0.82x to 0.98x in two runs.
     */
    static final int MAX_OPS = Integer.getInteger("gphash.distinctWrites", 32);

    private long[] table = new long[64];

    /**
     * Whether operations {@code first..first+n} of {@code batch} have distinct keys (false when unsure
     * or when {@code n} is above {@link #MAX_OPS}).
     */
    boolean test(Batch batch, int first, int n) {
        if (n > MAX_OPS || n < 1) {
            return false;
        }
        int size = Integer.highestOneBit(Math.max(16, n * 4 - 1)) << 1;
        if (table.length < size) {
            table = new long[size];
        } else {
            Arrays.fill(table, 0, size, 0);
        }
        int mask = size - 1;
        MemorySegment keys = batch.keys();
        int ks = batch.keySize();
        for (int i = first; i < first + n; i++) {
            long h = hash(keys, (long) i * ks, ks);
            int at = (int) (h ^ (h >>> 32)) & mask;
            while (table[at] != 0) {
                if (table[at] == h) {
                    return false;
                }
                at = (at + 1) & mask;
            }
            table[at] = h;
        }
        return true;
    }

    /** The table's own key hash ({@link KeyHasher}, any fixed seed), never 0 (0 marks an empty entry). */
    static long hash(MemorySegment keys, long at, int keySize) {
        long h = KeyHasher.hash(keys, at, keySize, 0x9E3779B97F4A7C15L);
        return h == 0 ? 1 : h;
    }
}
