package org.gphash.table;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

import org.gphash.format.SlotMeta;

/**
 * Atomic access to slot meta words in the mapped pool. Meta words are 8-byte aligned (slots are
 * multiples of 8 bytes and levels start 8-aligned), which VarHandle CAS on a segment requires.
 */
public final class Slots {

    private static final VarHandle META = ValueLayout.JAVA_LONG.varHandle();

    private Slots() {
    }

    public static long getMeta(MemorySegment pool, long slotOffset) {
        return (long) META.getVolatile(pool, slotOffset);
    }

    public static void setMeta(MemorySegment pool, long slotOffset, long meta) {
        META.setVolatile(pool, slotOffset, meta);
    }

    static boolean casMeta(MemorySegment pool, long slotOffset, long expected, long next) {
        return META.compareAndSet(pool, slotOffset, expected, next);
    }

    /**
     * Whether the key in slot {@code slotOffset} is {@code key}'s {@code keySize} bytes at
     * {@code keyOffset}. Keys of 8 and 16 bytes compare as one or two words (the slot's key starts 8
     * bytes into a slot; either key may lie anywhere, the caller's in a Java array too), others
     * with {@link MemorySegment#mismatch}. Why not {@code mismatch} for all: whether the JIT inlines
     * it here depends on what else the JVM compiled; in the GPU backend's JVM it stayed a call, 8% of
     * the samples of bench ycsb's A at batches of 64 from 16 threads, where the CPU backend's JVM
     * inlined it into the probe (docs/lab/2026-12-02-host-route-timers-and-turns.md).
     */
    static boolean keyEquals(MemorySegment pool, long slotOffset, int keySize, MemorySegment key, long keyOffset) {
        long k = slotOffset + SlotMeta.BYTES;
        if (keySize == Long.BYTES) {
            return pool.get(WORD, k) == key.get(WORD, keyOffset);
        }
        if (keySize == 2 * Long.BYTES) {
            return pool.get(WORD, k) == key.get(WORD, keyOffset)
                    && pool.get(WORD, k + Long.BYTES) == key.get(WORD, keyOffset + Long.BYTES);
        }
        return MemorySegment.mismatch(pool, k, k + keySize, key, keyOffset, keyOffset + keySize) == -1;
    }

    /** A key's word, wherever it lies ({@link #keyEquals}). */
    private static final ValueLayout.OfLong WORD = ValueLayout.JAVA_LONG_UNALIGNED;
}
