package org.gphash.journal;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.locks.ReentrantLock;

import org.gphash.Batch;
import org.gphash.OpKind;

/**
 * Locks by key hash that keep the journal's order of writes to a key the order they took effect in
 * the pool: a writer holds its keys' stripes from its write until its record has a sequence number.
 * Without them two threads writing one key could take effect in one order and be journaled in the
 * other, and a replay would end with the value that lost. A checkpoint holds every stripe for a moment
 * to read a sequence number that every write it saw comes before.
 */
final class KeyStripes {

    static final int STRIPES = 256;
    private static final ValueLayout.OfLong WORD = ValueLayout.JAVA_LONG_UNALIGNED;
    private final ReentrantLock[] locks = new ReentrantLock[STRIPES];
    private final int keySize;

    KeyStripes(int keySize) {
        this.keySize = keySize;
        for (int i = 0; i < STRIPES; i++) {
            locks[i] = new ReentrantLock();
        }
    }

    /** The stripe of the key at {@code at} in {@code keys}. */
    int stripeOf(MemorySegment keys, long at) {
        return (int) (keyHash(keys, at) & (STRIPES - 1));
    }

    /** A 64-bit hash of the key at {@code at} in {@code keys}: equal keys always hash alike. */
    long keyHash(MemorySegment keys, long at) {
        long h = 0x9E3779B97F4A7C15L;
        int i = 0;
        for (; i + 8 <= keySize; i += 8) {
            h = (h ^ keys.get(WORD, at + i)) * 0xBF58476D1CE4E5B9L;
        }
        for (; i < keySize; i++) {
            h = (h ^ keys.get(ValueLayout.JAVA_BYTE, at + i)) * 0x94D049BB133111EBL;
        }
        return h ^ (h >>> 31);
    }

    void lock(int stripe) {
        locks[stripe].lock();
    }

    void unlock(int stripe) {
        locks[stripe].unlock();
    }

    /**
     * Locks the stripes of every write in {@code batch}, in ascending order (so two batches never
     * deadlock); returns which, for {@link #unlock(long[])}.
     */
    long[] lock(Batch batch) {
        long[] mask = new long[STRIPES / 64];
        MemorySegment kinds = batch.kinds();
        MemorySegment keys = batch.keys();
        int n = batch.size();
        int get = OpKind.GET.ordinal();
        int marked = 0;
        for (int i = 0; i < n && marked < STRIPES; i++) {
            if (kinds.get(ValueLayout.JAVA_BYTE, i) != get) {
                int s = stripeOf(keys, (long) i * keySize);
                if ((mask[s >>> 6] & (1L << s)) == 0) {
                    mask[s >>> 6] |= 1L << s;
                    marked++;
                }
            }
        }
        for (int s = 0; s < STRIPES; s++) {
            if ((mask[s >>> 6] & (1L << s)) != 0) {
                locks[s].lock();
            }
        }
        return mask;
    }

    void unlock(long[] mask) {
        for (int s = STRIPES - 1; s >= 0; s--) {
            if ((mask[s >>> 6] & (1L << s)) != 0) {
                locks[s].unlock();
            }
        }
    }

    void lockAll() {
        for (ReentrantLock l : locks) {
            l.lock();
        }
    }

    void unlockAll() {
        for (int s = STRIPES - 1; s >= 0; s--) {
            locks[s].unlock();
        }
    }
}
