package org.gphash.cuda.routing;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import org.gphash.Batch;

/**
 * Keys of a batch told apart without boxing: a 64-bit hash per key and an open-addressed set of them.
 * Equal keys hash alike; distinct keys collide rarely, which only makes a caller cut a batch once
 * more than it had to, never wrongly.
 */
public final class BatchKeys {

    private BatchKeys() {
    }

    /**
     * The end of the run of {@code batch} that starts at {@code from} in which no key appears twice:
     * the first operation whose key an earlier operation of the run has, or the batch's end.
     *
     * @param seen a set of at least the batch's size, emptied here first
     */
    public static int distinctRunEnd(Batch batch, int from, LongSet seen) {
        seen.clear();
        MemorySegment keys = batch.keys();
        int k = batch.keySize();
        int n = batch.size();
        for (int i = from; i < n; i++) {
            long h = hash(keys, k, i);
            if (seen.contains(h)) {
                return i;
            }
            seen.add(h);
        }
        return n;
    }

    /** A 64-bit hash of key {@code i} of a key column (equal keys, equal hashes; distinct keys rarely collide). */
    public static long hash(MemorySegment keys, int size, int i) {
        long at = (long) i * size;
        long h = 0x9E3779B97F4A7C15L * (size + 1);
        int b = 0;
        for (; b + 8 <= size; b += 8) {
            h = mix(h ^ keys.get(ValueLayout.JAVA_LONG_UNALIGNED, at + b));
        }
        for (; b < size; b++) {
            h = mix(h ^ (keys.get(ValueLayout.JAVA_BYTE, at + b) & 0xFFL) ^ ((long) b << 56));
        }
        return h;
    }

    /** The finaliser of SplitMix64: every bit of the result depends on every bit of {@code z}. */
    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** An open-addressed set of longs, sized for at most {@code n} of them (no boxing per operation). */
    public static final class LongSet {
        private final long[] slots;
        private final boolean[] used;
        private final int mask;
        private final int[] filled;
        private int count;

        public LongSet(int n) {
            int capacity = Integer.highestOneBit(Math.max(2, n) * 2 - 1) << 1;
            slots = new long[capacity];
            used = new boolean[capacity];
            filled = new int[Math.max(1, n)];
            mask = capacity - 1;
        }

        public void add(long h) {
            int i = (int) mix(h) & mask;
            while (used[i]) {
                if (slots[i] == h) {
                    return;
                }
                i = (i + 1) & mask;
            }
            used[i] = true;
            slots[i] = h;
            filled[count++] = i;
        }

        public boolean contains(long h) {
            int i = (int) mix(h) & mask;
            while (used[i]) {
                if (slots[i] == h) {
                    return true;
                }
                i = (i + 1) & mask;
            }
            return false;
        }

        /** Empties the set in time proportional to what it holds. */
        public void clear() {
            for (int k = 0; k < count; k++) {
                used[filled[k]] = false;
            }
            count = 0;
        }
    }
}
