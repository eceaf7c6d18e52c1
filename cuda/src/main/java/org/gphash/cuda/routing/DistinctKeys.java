package org.gphash.cuda.routing;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

import org.gphash.Batch;
import org.gphash.table.KeyHasher;

/**
 * Whether no key repeats in a small run of a host batch, so that a batch that writes may skip the
 * pipeline's grouping (key table, radix sort, two scans: a fixed cost that is most of a small
 * batch's GPU time, docs/PERFORMANCE.md, "small host batches"), or run the ungrouped instance
 * of the one-launch kernel ({@link Router.Route#SMALL_WRITES}). A coalesced batch of a few callers'
 * operations usually has distinct keys. Keys are compared by a 64-bit hash: equal keys always
 * collide, so a repeat is never missed; a collision of different keys only costs the grouping. The
 * pipeline's chunks are checked where the router says ({@link Router#checksDistinct},
 * {@link org.gphash.GpuTuning#distinctWritesMax()}); a one-launch batch is always checked, whole (up to
 * {@link org.gphash.GpuTuning#smallWritesMax()} operations, as measured in docs/PERFORMANCE.md), and a
 * zipf batch stops at its first repeat.
 * Thread-safe: each thread has its own table.
 */
public final class DistinctKeys {

    private static final ThreadLocal<long[][]> TABLE = ThreadLocal.withInitial(() -> new long[][] {new long[64]});

    private DistinctKeys() {
    }

    /** Whether operations {@code first..first+n} of {@code batch} have distinct keys (false when unsure or {@code n < 1}). */
    public static boolean test(Batch batch, int first, int n) {
        if (n < 1) {
            return false;
        }
        int size = Integer.highestOneBit(Math.max(16, n * 4 - 1)) << 1;
        long[][] holder = TABLE.get();
        long[] table = holder[0];
        if (table.length < size) {
            table = new long[size];
            holder[0] = table;
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
