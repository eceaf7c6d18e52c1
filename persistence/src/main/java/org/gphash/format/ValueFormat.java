package org.gphash.format;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * How a pool's format lays out a value in its block, chosen once per pool by its header's format
 * version, as {@link MetaFormat} chooses the meta words: format 2's bare value (one block size, the
 * value at the block's start), or format 3's frame, the 8-byte {@link ValueBlockHeader} (length and
 * item checksum) and then the value, or the value alone in a bare block of its own size (issue 53). The engines copy values in and out through the pool's
 * format, so that format 3 joins the same code rather than a copy of it
 * (docs/lab/2026-11-29-format-3-plan.md, "Step 3, decided before its code"). Pools are format 2 unless
 * made in format 3.
 *
 * <p>Format 3's values have any length up to the pool's value size, each block of the class its
 * length takes, framed or bare ({@link ValueClasses}); format 2's all have the value size.
 */
public final class ValueFormat {

    private static final ValueLayout.OfLong HEADER = ValueLayout.JAVA_LONG.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final int version;
    /** Format 2: every value's length; format 3: the longest a value may be. */
    private final int valueSize;
    /**
     * Format 3: the bare class a value of the value size goes to ({@link ValueClasses#isBare}), -1 where
     * values go framed (the size is no block size, or the pool keeps item checksums). Found once: every
     * write of a full-length value asks.
     */
    private final int bareFullClass;

    private ValueFormat(int version, int valueSize, boolean bare) {
        this.version = version;
        this.valueSize = valueSize;
        this.bareFullClass = version == 3 && bare ? ValueClasses.bareClassOf(valueSize) : -1;
    }

    /** Format 2: values of {@code valueSize} bytes, each at its block's start, nothing around it. */
    public static ValueFormat v2(int valueSize) {
        return new ValueFormat(2, checkedSize(valueSize), false);
    }

    /**
     * Format 3: values of 0 to {@code valueSize} bytes, each behind its header in a block of the class
     * its length takes, or, with {@code bare}, a value of {@code valueSize} bytes alone in a bare block
     * where that size is a block size (a pool whose values are all {@code valueSize} long uses one
     * class, laid out as format 2 lays its values out).
     */
    public static ValueFormat v3(int valueSize, boolean bare) {
        ValueClasses.classOf(checkedSize(valueSize));  // refuses a size no class holds
        return new ValueFormat(3, valueSize, bare);
    }

    /**
     * {@return the format of values of (at most, in format 3) {@code valueSize} bytes in pools of
     * format version {@code version}}: format 3's values of the value size go bare where it is a block
     * size, unless the pool keeps {@code itemChecksums} (a value's checksum is in its header)
     *
     * @throws IllegalArgumentException for a version this build cannot read
     */
    public static ValueFormat of(int version, int valueSize, boolean itemChecksums) {
        if (!PoolHeader.readable(version)) {
            throw new IllegalArgumentException("pool format " + version + " is not one this build reads (it reads "
                    + PoolHeader.FORMAT_VERSION + " and " + PoolHeader.FORMAT_3 + ")");
        }
        return version == PoolHeader.FORMAT_3 ? v3(valueSize, !itemChecksums) : v2(valueSize);
    }

    private static int checkedSize(int valueSize) {
        if (valueSize < 0) {
            throw new IllegalArgumentException("a value size of " + valueSize + " bytes");
        }
        return valueSize;
    }

    /** {@return the pool format version whose values these are} */
    public int version() {
        return version;
    }

    /** {@return whether values may be shorter than the pool's value size (format 3)} */
    public boolean variableLengths() {
        return version == 3;
    }

    /**
     * {@return the class of the block a value of {@code length} bytes takes} (format 2: -1, one block
     * size): in format 3 the bare class whose block has the value's size, for a value of the value size
     * where values of that size go bare, else the least framed class that holds it and its header. Why
     * the value size only: a fixed-size pool is the case bare blocks are for (whole lines on the GPU's
     * link), and in a pool of many lengths bare classes beside framed ones of the same sizes split
     * each size's values over more segments (issue 53's mixed workload held 1.28x its live bytes, against
     * 1.23x without them, 2 threads)
     *
     * @throws IllegalArgumentException for a length this pool's values cannot have
     */
    public int classOf(int length) {
        if (version != 3) {
            if (length != valueSize) {
                throw new IllegalArgumentException("a value of " + length + " bytes in a pool of " + valueSize + "-byte values");
            }
            return -1;
        }
        if (length < 0 || length > valueSize) {
            throw new IllegalArgumentException("a value of " + length + " bytes in a pool of values up to " + valueSize + " bytes");
        }
        return length == valueSize && bareFullClass >= 0 ? bareFullClass : ValueClasses.classOf(length);
    }

    /** {@return the bytes from a block of class {@code valueClass}'s start to its value's first byte} */
    private int valueStart(int valueClass) {
        return version == 3 ? ValueClasses.headerBytes(valueClass) : 0;
    }

    /** {@return the pool offset of the first byte of the value in the block of class {@code valueClass} at {@code block}} */
    public long valueAt(long block, int valueClass) {
        return block + valueStart(valueClass);
    }

    /**
     * {@return the bytes from a block's start that a read of a block of class {@code valueClass} may
     * touch}: format 2's value; format 3's block
     */
    public int spanOf(int valueClass) {
        return version == 3 ? ValueClasses.blockBytes(valueClass) : valueSize;
    }

    /**
     * Writes the {@code length} bytes of the value at {@code src}/{@code srcOffset} into the block at
     * {@code block}, of the class {@link #classOf} gives that length, with its frame (format 3's
     * framed classes: the header, the length and no checksum; nothing in a bare class or in format 2).
     *
     * @return the bytes from the block's start to persist, before any word names the block
     */
    public int write(MemorySegment pool, long block, MemorySegment src, long srcOffset, int length) {
        int c = classOf(length);
        int start = valueStart(c);
        MemorySegment.copy(src, srcOffset, pool, block + start, length);
        if (start > 0) {
            pool.set(HEADER, block, ValueBlockHeader.make(length, 0));
        }
        return start + length;
    }

    /**
     * {@return the length of the value in the block of class {@code valueClass} at {@code block}}
     * (check it with {@link #frameWhole} first): a framed block's header gives it, a bare block's
     * class, format 2's pool
     */
    public int length(MemorySegment pool, long block, int valueClass) {
        if (version != 3) {
            return valueSize;
        }
        return ValueClasses.isBare(valueClass) ? ValueClasses.blockBytes(valueClass)
                : (int) ValueBlockHeader.length(pool.get(HEADER, block));
    }

    /**
     * Copies the value in the block of class {@code valueClass} at {@code block} to {@code out} at
     * {@code outOffset} (check it with {@link #frameWhole} first).
     *
     * @return its length
     */
    public int read(MemorySegment pool, long block, int valueClass, MemorySegment out, long outOffset) {
        int length = length(pool, block, valueClass);
        MemorySegment.copy(pool, valueAt(block, valueClass), out, outOffset, length);
        return length;
    }

    /**
     * {@return whether the block at {@code block}, of class {@code valueClass} by the word that names
     * it, holds a whole value of this pool}: in format 3, a framed block's header is whole for that
     * class (a torn value of one class is never read as another's) and its length at most the pool's
     * value size, a bare block's size is at most the pool's value size; in format 2, always (a bare
     * value has nothing to check).
     */
    public boolean frameWhole(MemorySegment pool, long block, int valueClass) {
        if (version != 3) {
            return true;
        }
        if (ValueClasses.isBare(valueClass)) {
            return ValueClasses.blockBytes(valueClass) <= valueSize;
        }
        long header = pool.get(HEADER, block);
        return ValueBlockHeader.wholeIn(header, valueClass) && ValueBlockHeader.length(header) <= valueSize;
    }

    @Override
    public String toString() {
        return "format " + version + (version == 3 ? " values of up to " : " values of ") + valueSize + " bytes";
    }
}
