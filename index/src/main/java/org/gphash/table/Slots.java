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

    static boolean keyEquals(MemorySegment pool, long slotOffset, int keySize, MemorySegment key, long keyOffset) {
        long k = slotOffset + SlotMeta.BYTES;
        return MemorySegment.mismatch(pool, k, k + keySize, key, keyOffset, keyOffset + keySize) == -1;
    }
}
