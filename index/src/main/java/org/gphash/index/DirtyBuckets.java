package org.gphash.index;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The set of buckets host writes changed since their owner last copied them (global bucket numbers,
 * as {@link CpuOperations#markTouched} names them): one bit per bucket, and a summary bit per word of
 * them, so that collecting them costs the buckets marked rather than the table's size.
 *
 * <p>Why a set and not a log of writes: a log fills, however large, and its owner must then take the
 * pool back from the host in the middle of host work (on the GPU engine, every 2^18 writes all
 * writers stopped for a refresh of a million entries, most of them repeats under a skewed workload).
 * A set is bounded by the table and names a hot bucket once, however often it was written; the order
 * of writes does not matter, since the owner copies a bucket's current state.
 *
 * <p>Threads: {@link #mark} is lock-free and may run from many threads at once. {@link #drainTo} and
 * {@link #ensureBuckets} run while no thread marks (the owner holds the pool: on the GPU engine, under
 * its lock with the host gate closed), and see every mark made before that (the gate's atomics order
 * them).
 */
public final class DirtyBuckets {

    /** Atomic access to the bit words: getAndBitwiseOr, which AtomicLongArray does not offer. */
    private static final VarHandle WORD = MethodHandles.arrayElementVarHandle(long[].class);

    private long[] words;
    private long[] summary;
    private long buckets;
    /** Where {@link #drainTo} resumes: the summary word it stopped in. */
    private int cursor;

    /** A set for a table of {@code buckets} buckets. */
    public DirtyBuckets(long buckets) {
        allocate(buckets);
    }

    private void allocate(long buckets) {
        if (buckets < 0 || buckets > (1L << 37)) {
            throw new IllegalArgumentException("bucket count " + buckets + " is out of range");
        }
        int w = (int) ((buckets + 63) >>> 6);
        this.words = new long[Math.max(1, w)];
        this.summary = new long[Math.max(1, (w + 63) >>> 6)];
        this.buckets = buckets;
        this.cursor = 0;
    }

    /** Buckets the set can hold: every bucket of the table it was sized for. */
    public long capacity() {
        return buckets;
    }

    /**
     * Makes room for a table grown to {@code buckets} buckets. Only while nothing is marked (after a
     * drain) and no thread marks.
     */
    public void ensureBuckets(long buckets) {
        if (buckets > this.buckets) {
            if (!isEmpty()) {
                throw new IllegalStateException("the set of changed buckets grows only when empty");
            }
            allocate(buckets);
        }
    }

    /** Marks bucket {@code bucket} changed; a bucket already marked costs a read. */
    public void mark(long bucket) {
        if (bucket < 0 || bucket >= buckets) {
            throw new IndexOutOfBoundsException("bucket " + bucket + " of " + buckets);
        }
        int w = (int) (bucket >>> 6);
        long bit = 1L << bucket;
        if (((long) WORD.getOpaque(words, w) & bit) != 0) {
            return;
        }
        WORD.getAndBitwiseOr(words, w, bit);
        int s = w >>> 6;
        long sbit = 1L << w;
        if (((long) WORD.getOpaque(summary, s) & sbit) == 0) {
            WORD.getAndBitwiseOr(summary, s, sbit);
        }
    }

    /** Whether no bucket is marked (while no thread marks). */
    public boolean isEmpty() {
        for (long sw : summary) {
            if (sw != 0) {
                return false;
            }
        }
        return true;
    }

    /**
     * Moves up to {@code out.length} marked buckets into {@code out}, in increasing order from where the
     * last drain stopped, and unmarks them; returns how many (0 once the set is empty). While no thread
     * marks.
     */
    public int drainTo(long[] out) {
        int n = 0;
        int sWords = summary.length;
        for (int visited = 0; visited <= sWords && n < out.length; visited++) {
            int s = cursor;
            long sw = summary[s];
            while (sw != 0 && n < out.length) {
                int w = (s << 6) + Long.numberOfTrailingZeros(sw);
                long word = words[w];
                while (word != 0 && n < out.length) {
                    long low = word & -word;
                    out[n++] = ((long) w << 6) + Long.numberOfTrailingZeros(word);
                    word &= ~low;
                }
                words[w] = word;
                if (word == 0) {
                    sw &= sw - 1;
                }
            }
            summary[s] = sw;
            if (sw == 0) {
                cursor = s + 1 == sWords ? 0 : s + 1;
            }
        }
        return n;
    }
}
