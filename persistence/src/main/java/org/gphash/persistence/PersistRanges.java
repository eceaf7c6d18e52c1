package org.gphash.persistence;

import java.util.Arrays;

/**
 * The byte ranges of one persist phase (a batch's values and keys, or its slot meta words), made
 * durable together by {@link Persister#persistAll}: one msync of the range that covers them, or a
 * cache-line flush of each and one drain. Reused from batch to batch; not thread-safe.
 */
public final class PersistRanges {

    private long[] offsets = new long[64];
    private long[] lengths = new long[64];
    private int count;
    private long min = Long.MAX_VALUE;
    private long end;

    /** Adds {@code [offset, offset + length)}. */
    public void add(long offset, long length) {
        if (count == offsets.length) {
            offsets = Arrays.copyOf(offsets, count * 2);
            lengths = Arrays.copyOf(lengths, count * 2);
        }
        offsets[count] = offset;
        lengths[count] = length;
        count++;
        min = Math.min(min, offset);
        end = Math.max(end, offset + length);
    }

    public void clear() {
        count = 0;
        min = Long.MAX_VALUE;
        end = 0;
    }

    public int size() {
        return count;
    }

    public boolean isEmpty() {
        return count == 0;
    }

    public long offset(int i) {
        return offsets[i];
    }

    public long length(int i) {
        return lengths[i];
    }

    /** {@return the lowest offset of any range (undefined when empty)} */
    public long coveringOffset() {
        return min;
    }

    /** {@return the length of the one range that covers them all (0 when empty)} */
    public long coveringLength() {
        return count == 0 ? 0 : end - min;
    }
}
