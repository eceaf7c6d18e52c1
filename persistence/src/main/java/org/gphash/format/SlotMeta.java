package org.gphash.format;

import org.gphash.Geometry;

/**
 * The 8-byte meta word at the start of each slot, changed only by CAS (or by its owner while it is
 * in the INSERT state).
 *
 * <pre>
 *  63            48 47                                   0
 * +----------------+--------------------------------------+
 * |  fingerprint   |  value offset (bytes from pool start) |
 * +----------------+--------------------------------------+
 * </pre>
 *
 * <p>Fingerprints 0 and 1 are reserved as the slot states of GPHash §3.2.3: {@link #EMPTY} (the
 * whole word is 0) and {@link #INSERT} (fingerprint 1: claimed by an inserter that has not
 * published yet). A published item has a fingerprint of at least 2 and a non-zero value offset.
 * Keeping the value offset in the same word as the fingerprint means an update is one CAS that
 * also proves the slot still holds the item that was read (no ABA through delete and re-insert
 * while the old value block is protected by the epoch gate).
 */
public final class SlotMeta {

    public static final int BYTES = Geometry.SLOT_META_BYTES;
    public static final long EMPTY = 0L;
    public static final long INSERT = 1L << 48;
    public static final int FIRST_VALID_FINGERPRINT = 2;
    public static final long OFFSET_MASK = (1L << 48) - 1;

    private SlotMeta() {
    }

    public static long make(int fingerprint, long valueOffset) {
        return ((long) fingerprint << 48) | valueOffset;
    }

    public static int fingerprint(long meta) {
        return (int) (meta >>> 48);
    }

    public static long valueOffset(long meta) {
        return meta & OFFSET_MASK;
    }

    /** A published item: neither EMPTY nor INSERT. */
    public static boolean isItem(long meta) {
        return fingerprint(meta) >= FIRST_VALID_FINGERPRINT;
    }
}
