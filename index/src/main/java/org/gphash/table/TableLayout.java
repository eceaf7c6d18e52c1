package org.gphash.table;

import java.util.Arrays;

import org.gphash.format.PoolHeader;

/**
 * Where the levels of the table are: the top level has 2^topLog2 buckets, each level below half
 * as many. Offsets are stored top level first. Immutable; a resize publishes a new one.
 *
 * <p>Inter-level sharing (GPHash §3.1): a key's hash selects bucket {@code hash mod 2^topLog2} of
 * the top level, and at depth {@code d} below it the bucket {@code hash mod 2^(topLog2 - d)}: the
 * top-level bucket with its high {@code d} bits dropped, so each bucket at depth {@code d} is shared
 * by {@code 2^d} top-level buckets. A resize doubles the top level; the old top-level bucket of a
 * key is then exactly its depth-1 bucket, so items in every level that stays remain reachable
 * without moving.
 */
public record TableLayout(int topLog2, long[] offsetsTopFirst, int bucketSize) {

    public TableLayout {
        offsetsTopFirst = offsetsTopFirst.clone();
    }

    static TableLayout of(PoolHeader header) {
        long[] bottomFirst = header.levelOffsets();
        long[] topFirst = new long[bottomFirst.length];
        for (int i = 0; i < bottomFirst.length; i++) {
            topFirst[i] = bottomFirst[bottomFirst.length - 1 - i];
        }
        return new TableLayout(header.topLog2(), topFirst, header.geometry().bucketSize());
    }

    public int levelCount() {
        return offsetsTopFirst.length;
    }

    /** Offset of the level at depth {@code d} (0 = top). */
    public long levelOffset(int depth) {
        return offsetsTopFirst[depth];
    }

    public long bucketsAtDepth(int depth) {
        return 1L << (topLog2 - depth);
    }

    /** Bucket number at depth {@code d} (0 = top) for a key hash: its low {@code topLog2 - d} bits. */
    public long bucketAtDepth(long hash, int depth) {
        return hash & ((1L << (topLog2 - depth)) - 1);
    }

    /**
     * A key's candidate buckets at depth {@code depth}, in the order they are probed (the validity
     * order of docs/DESIGN.md): bucket numbers ascending, a bucket two hashes share once. The GPU
     * kernels take them in the same order (candidate_order.cuh; CudaAlgorithmAgreementTest checks
     * the two agree).
     *
     * @param hashes the key's hashes, the first {@code count} used
     * @param count  how many hashes the geometry has
     * @param depth  the level, 0 = top
     * @param out    where the bucket numbers go, at least {@code count} long
     * @return how many distinct buckets went to {@code out}
     */
    public int candidateBuckets(long[] hashes, int count, int depth, long[] out) {
        int n = 0;
        for (int j = 0; j < count; j++) {
            long b = bucketAtDepth(hashes[j], depth);
            boolean seen = false;
            for (int i = 0; i < n; i++) {
                if (out[i] == b) {
                    seen = true;
                    break;
                }
            }
            if (seen) {
                continue;
            }
            int pos = n;
            while (pos > 0 && out[pos - 1] > b) {
                out[pos] = out[pos - 1];
                pos--;
            }
            out[pos] = b;
            n++;
        }
        return n;
    }

    /** The same table without its bottom level: where a resize moves bottom-level items to. */
    public TableLayout withoutBottom() {
        return new TableLayout(topLog2, Arrays.copyOf(offsetsTopFirst, offsetsTopFirst.length - 1), bucketSize);
    }

    public long totalBuckets() {
        long total = 0;
        for (int d = 0; d < offsetsTopFirst.length; d++) {
            total += bucketsAtDepth(d);
        }
        return total;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TableLayout t && topLog2 == t.topLog2 && bucketSize == t.bucketSize
                && Arrays.equals(offsetsTopFirst, t.offsetsTopFirst);
    }

    @Override
    public int hashCode() {
        return topLog2 * 31 + Arrays.hashCode(offsetsTopFirst);
    }

    @Override
    public String toString() {
        return "TableLayout[topLog2=" + topLog2 + ", levels(top first)=" + Arrays.toString(offsetsTopFirst) + "]";
    }
}
