package org.gphash.format;

/**
 * Format 3's slot meta word (issue 53; docs/lab/2026-11-29-format-3-plan.md): the value's size class
 * joins the fingerprint and the value's offset, so that a reader knows the block's size from the word
 * it already read, and an update that moves a value to a block of another class is still one CAS of
 * one word (no ABA through a block of another size).
 *
 * <pre>
 *  63            48 47     41 40                                   0
 * +----------------+---------+--------------------------------------+
 * |  fingerprint   |  class  |  value offset / 16 (41 bits: 32 TiB) |
 * +----------------+---------+--------------------------------------+
 * </pre>
 *
 * <p>The class's lowest bit (bit 41) says whether the block is bare ({@link ValueClasses#isBare}); words
 * written before bare classes had six bits of class above a 42-bit offset whose top bit was 0 in any
 * pool under 32 TiB, so they read as the same framed class and offset.
 *
 * <p>The slot states are format 2's ({@link SlotMeta}): the word 0 is EMPTY, fingerprint 1 is
 * INSERT, a published item has a fingerprint of at least 2. Blocks start on 16 bytes, so the offset
 * is kept in 16-byte units. The CUDA side (core/slot_meta_v3.cuh) encodes and decodes the same way;
 * {@code Format3AgreementTest} holds both to known answers.
 */
public final class SlotMetaV3 {

    public static final long EMPTY = SlotMeta.EMPTY;
    public static final long INSERT = SlotMeta.INSERT;
    public static final int FIRST_VALID_FINGERPRINT = SlotMeta.FIRST_VALID_FINGERPRINT;
    /** Bits of the offset field; offsets are in units of {@link #OFFSET_UNIT} bytes. */
    public static final int OFFSET_BITS = 41;
    public static final int OFFSET_UNIT = 16;
    /** The largest pool offset a word can name (32 TiB less one unit). */
    public static final long MAX_OFFSET = ((1L << OFFSET_BITS) - 1) * OFFSET_UNIT;
    private static final int CLASS_SHIFT = OFFSET_BITS;
    private static final long CLASS_MASK = 0x7F;
    private static final long UNITS_MASK = (1L << OFFSET_BITS) - 1;

    private SlotMetaV3() {
    }

    /**
     * {@return the word of an item whose value lies in a block of {@code valueClass} at {@code offset}}
     *
     * @throws IllegalArgumentException if the fingerprint, class or offset does not fit
     */
    public static long make(int fingerprint, int valueClass, long offset) {
        if (fingerprint < FIRST_VALID_FINGERPRINT || fingerprint > 0xFFFF) {
            throw new IllegalArgumentException("fingerprint " + fingerprint + " is not an item's (2 to 65535)");
        }
        if (valueClass < 0 || valueClass >= ValueClasses.COUNT) {
            throw new IllegalArgumentException("value class " + valueClass + " is not one of the " + ValueClasses.COUNT);
        }
        if (offset <= 0 || offset > MAX_OFFSET || offset % OFFSET_UNIT != 0) {
            throw new IllegalArgumentException("value offset " + offset + " is not a block's (a positive multiple of "
                    + OFFSET_UNIT + " up to " + MAX_OFFSET + ")");
        }
        return ((long) fingerprint << 48) | ((long) valueClass << CLASS_SHIFT) | (offset / OFFSET_UNIT);
    }

    public static int fingerprint(long meta) {
        return (int) (meta >>> 48);
    }

    public static int valueClass(long meta) {
        return (int) ((meta >>> CLASS_SHIFT) & CLASS_MASK);
    }

    public static long valueOffset(long meta) {
        return (meta & UNITS_MASK) * OFFSET_UNIT;
    }

    /** A published item: neither EMPTY nor INSERT. */
    public static boolean isItem(long meta) {
        return fingerprint(meta) >= FIRST_VALID_FINGERPRINT;
    }
}
