package org.gphash.table;

import java.lang.foreign.MemorySegment;

import org.gphash.format.SlotMeta;

/**
 * The slot protocol (docs/DESIGN.md, "Operations"), written once for every Java writer of the pool:
 * the CPU engine's operations ({@code CpuTable}), its batches' first phase ({@code PhasedBatch}) and
 * the exclusive passes of resize and recovery ({@link CpuPasses}). A slot's meta word moves through
 * <pre>
 *   EMPTY --claim--> INSERT --(key written, made durable)--> published item
 *     ^                |                                         |
 *     +----unclaim-----+          update: swap the value offset  |
 *     +-------------------------- delete / remove duplicate -----+
 * </pre>
 * by CAS, so that concurrent writers never both own a slot; exclusive passes (no other writer)
 * store the same states directly. When each step is made durable is the caller's choice (now, in a
 * batch's phases, or at sync): the order is not. A key is durable before the meta word that
 * publishes it, and a value before the meta word that points at it. The GPU kernels follow the same
 * states (slot_protocol.cuh); SharedConstantsTest holds the state values to the Java ones.
 */
public final class SlotProtocol {

    private SlotProtocol() {
    }

    /** Where a slot's key starts. */
    public static long keyAt(long slot) {
        return slot + SlotMeta.BYTES;
    }

    /** Claims an EMPTY slot for an insert (EMPTY to INSERT); false if another writer changed it first. */
    public static boolean claim(MemorySegment pool, long slot) {
        return Slots.casMeta(pool, slot, SlotMeta.EMPTY, SlotMeta.INSERT);
    }

    /** Gives back a slot this writer claimed and will not publish (INSERT to EMPTY); false if it was not claimed. */
    public static boolean unclaim(MemorySegment pool, long slot) {
        return Slots.casMeta(pool, slot, SlotMeta.INSERT, SlotMeta.EMPTY);
    }

    /** Writes the key into a slot this writer claimed (not yet durable: the caller persists it before {@link #publish}). */
    public static void writeKey(MemorySegment pool, long slot, MemorySegment key, long keyOffset, int keySize) {
        MemorySegment.copy(key, keyOffset, pool, keyAt(slot), keySize);
    }

    /** Publishes a claimed slot whose key is durable: one store of its item's word (the pool's {@code MetaFormat} made it). */
    public static void publish(MemorySegment pool, long slot, long meta) {
        Slots.setMeta(pool, slot, meta);
    }

    /** Points a published item at a new, durable value ({@code newMeta}: same fingerprint); false if the item changed first. */
    public static boolean swapValue(MemorySegment pool, long slot, long oldMeta, long newMeta) {
        return Slots.casMeta(pool, slot, oldMeta, newMeta);
    }

    /** Removes the item {@code oldMeta} names (to EMPTY): a delete, or a duplicate; false if it changed first. */
    public static boolean unlink(MemorySegment pool, long slot, long oldMeta) {
        return Slots.casMeta(pool, slot, oldMeta, SlotMeta.EMPTY);
    }

    /**
     * Copies an item into an EMPTY slot during an exclusive pass (resize): claimed, key written and
     * published by plain stores, since no other writer runs. The caller persists the slot whole.
     */
    static void copyExclusive(MemorySegment pool, long slot, MemorySegment keyFrom, long keyOffset, int keySize,
                              long meta) {
        Slots.setMeta(pool, slot, SlotMeta.INSERT);
        MemorySegment.copy(keyFrom, keyOffset, pool, keyAt(slot), keySize);
        Slots.setMeta(pool, slot, meta);
    }

    /** Empties a slot during an exclusive pass (resize, recovery's repair). */
    static void clearExclusive(MemorySegment pool, long slot) {
        Slots.setMeta(pool, slot, SlotMeta.EMPTY);
    }
}
