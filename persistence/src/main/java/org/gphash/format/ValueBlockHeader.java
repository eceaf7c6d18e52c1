package org.gphash.format;

/**
 * Format 3's value block header (issue 53; docs/lab/2026-11-29-format-3-plan.md): the
 * {@link ValueClasses#HEADER_BYTES} bytes before a value in its block, one little-endian 64-bit word:
 * the value's length in bytes (bits 31..0) and its item checksum (bits 63..32; 0 where the pool keeps
 * none). The class of the block is not in it: it is in the slot's meta word ({@link SlotMetaV3}) that
 * points at the block.
 *
 * <p><b>A torn value of one class is never read as another.</b> A value's block is of the least
 * class that holds it ({@link ValueClasses#classOf}), so a header is whole for a block of class
 * {@code c} only where its length's class is {@code c} ({@link #wholeIn}): a reader whose meta word
 * named class {@code c} and found a header of another class's length (a block freed and taken by a
 * value of another size, or bytes never written) refuses it rather than read past or short of the
 * value. The CUDA side (core/value_block_header.cuh) does the same; {@code Format3AgreementTest} holds
 * both to known answers. Bare blocks ({@link ValueClasses#isBare}) have no header: a length and a class
 * never disagree there.
 */
public final class ValueBlockHeader {

    private static final long LENGTH_MASK = 0xFFFF_FFFFL;

    private ValueBlockHeader() {
    }

    /**
     * {@return the header of a value of {@code length} bytes with item checksum {@code checksum}}
     *
     * @throws IllegalArgumentException if no block holds a value that long
     */
    public static long make(int length, int checksum) {
        if (length < 0 || length > ValueClasses.MAX_VALUE_BYTES) {
            throw new IllegalArgumentException("a value of " + length + " bytes: values hold 0 to "
                    + ValueClasses.MAX_VALUE_BYTES + " bytes");
        }
        return ((long) checksum << 32) | length;
    }

    /** {@return the value's length in bytes, as written (check it with {@link #wholeIn} first)} */
    public static long length(long header) {
        return header & LENGTH_MASK;
    }

    /** {@return the item checksum (0 where the pool keeps none)} */
    public static int checksum(long header) {
        return (int) (header >>> 32);
    }

    /** Whether {@code header}, read from a block of framed class {@code valueClass}, is one that block's value could have. */
    public static boolean wholeIn(long header, int valueClass) {
        long length = length(header);
        return length <= ValueClasses.MAX_VALUE_BYTES && ValueClasses.classOf(length) == valueClass;
    }
}
