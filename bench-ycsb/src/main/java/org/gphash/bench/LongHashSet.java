package org.gphash.bench;

import java.util.Arrays;

/**
 * A set of longs in one open-addressing array (linear probing, grows at 1/2 full): the DLRM trace
 * generator remembers which of tens of millions of embedding rows it has created, where a
 * {@code HashSet<Long>} would take several times the memory.
 */
final class LongHashSet {

    /** Marks an empty slot; {@link #add} maps the key equal to it onto a separate flag. */
    private static final long EMPTY = Long.MIN_VALUE;

    private long[] slots = new long[1024];
    private int size;
    private boolean hasEmptyKey;

    {
        Arrays.fill(slots, EMPTY);
    }

    /** Adds {@code key}; true if it was not there. */
    boolean add(long key) {
        if (key == EMPTY) {
            boolean added = !hasEmptyKey;
            hasEmptyKey = true;
            size += added ? 1 : 0;
            return added;
        }
        if ((size + 1) * 2 > slots.length) {
            grow();
        }
        int mask = slots.length - 1;
        for (int i = spread(key) & mask; ; i = (i + 1) & mask) {
            long s = slots[i];
            if (s == key) {
                return false;
            }
            if (s == EMPTY) {
                slots[i] = key;
                size++;
                return true;
            }
        }
    }

    int size() {
        return size;
    }

    private void grow() {
        long[] old = slots;
        slots = new long[old.length * 2];
        Arrays.fill(slots, EMPTY);
        int mask = slots.length - 1;
        for (long k : old) {
            if (k != EMPTY) {
                int i = spread(k) & mask;
                while (slots[i] != EMPTY) {
                    i = (i + 1) & mask;
                }
                slots[i] = k;
            }
        }
    }

    private static int spread(long k) {
        long z = k * 0x9E3779B97F4A7C15L;
        return (int) (z ^ (z >>> 32));
    }
}
