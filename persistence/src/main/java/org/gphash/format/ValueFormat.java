package org.gphash.format;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * How a pool's format lays out a value in its block, chosen once per pool by its header's format
 * version, as {@link MetaFormat} chooses the meta words: format 2's bare value (one block size, the
 * value at the block's start), or format 3's frame, the 8-byte {@link ValueBlockHeader} (length and
 * item checksum) and then the value (issue 53). The engines copy values in and out through the pool's
 * format, so that format 3 joins the same code rather than a copy of it
 * (docs/lab/2026-11-29-format-3-plan.md, "Step 3, decided before its code"). Pools are format 2 unless
 * made in format 3, which only the CPU engine runs yet.
 *
 * <p>Format 3's values have any length up to the pool's value size, each block of the class its
 * length takes; format 2's all have the value size.
 */
public final class ValueFormat {

    private static final ValueLayout.OfLong HEADER = ValueLayout.JAVA_LONG.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final int version;
    /** Format 2: every value's length; format 3: the longest a value may be. */
    private final int valueSize;
    /** Bytes from a block's start to its value's first byte. */
    private final int valueStart;

    private ValueFormat(int version, int valueSize, int valueStart) {
        this.version = version;
        this.valueSize = valueSize;
        this.valueStart = valueStart;
    }

    /** Format 2: values of {@code valueSize} bytes, each at its block's start, nothing around it. */
    public static ValueFormat v2(int valueSize) {
        return new ValueFormat(2, checkedSize(valueSize), 0);
    }

    /**
     * Format 3: values of 0 to {@code valueSize} bytes, each behind its header in a block of the class
     * its length takes (a pool whose values are all {@code valueSize} long uses one class).
     */
    public static ValueFormat v3(int valueSize) {
        ValueClasses.classOf(checkedSize(valueSize));  // refuses a size no class holds
        return new ValueFormat(3, valueSize, ValueClasses.HEADER_BYTES);
    }

    /**
     * {@return the format of values of (at most, in format 3) {@code valueSize} bytes in pools of
     * format version {@code version}}
     *
     * @throws IllegalArgumentException for a version this build cannot read
     */
    public static ValueFormat of(int version, int valueSize) {
        if (!PoolHeader.readable(version)) {
            throw new IllegalArgumentException("pool format " + version + " is not one this build reads (it reads "
                    + PoolHeader.FORMAT_VERSION + " and " + PoolHeader.FORMAT_3 + ")");
        }
        return version == PoolHeader.FORMAT_3 ? v3(valueSize) : v2(valueSize);
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
     * {@return the class of the block a value of {@code length} bytes takes} (format 2: -1, one block size)
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
        return ValueClasses.classOf(length);
    }

    /** {@return the pool offset of the first byte of the value in the block at {@code block}} */
    public long valueAt(long block) {
        return block + valueStart;
    }

    /** {@return the bytes from a block's start that a value of {@code length} bytes and its frame take: what a write persists} */
    public int framedBytes(int length) {
        return valueStart + length;
    }

    /**
     * {@return the bytes from a block's start that a read of a block of class {@code valueClass} may
     * touch}: format 2's value; format 3's frame of the class's longest value
     */
    public int spanOf(int valueClass) {
        return version == 3 ? ValueClasses.blockBytes(valueClass) : valueSize;
    }

    /**
     * Writes the {@code length} bytes of the value at {@code src}/{@code srcOffset} into the block at
     * {@code block}, with its frame (format 3's header: the length, no checksum; nothing in format 2).
     *
     * @return the bytes from the block's start to persist, before any word names the block ({@link #framedBytes})
     */
    public int write(MemorySegment pool, long block, MemorySegment src, long srcOffset, int length) {
        MemorySegment.copy(src, srcOffset, pool, valueAt(block), length);
        if (version == 3) {
            pool.set(HEADER, block, ValueBlockHeader.make(length, 0));
        }
        return framedBytes(length);
    }

    /** {@return the length of the value in the block at {@code block}} (check it with {@link #frameWhole} first) */
    public int length(MemorySegment pool, long block) {
        return version == 3 ? (int) ValueBlockHeader.length(pool.get(HEADER, block)) : valueSize;
    }

    /**
     * Copies the value in the block at {@code block} to {@code out} at {@code outOffset} (check it
     * with {@link #frameWhole} first).
     *
     * @return its length
     */
    public int read(MemorySegment pool, long block, MemorySegment out, long outOffset) {
        int length = length(pool, block);
        MemorySegment.copy(pool, valueAt(block), out, outOffset, length);
        return length;
    }

    /**
     * {@return the class of the value in the block at {@code block} by its header} (format 3: -1 where
     * the header is not whole for the class its length takes, or its length is over the pool's;
     * format 2: -1, one block size). The close record's restore reads it.
     */
    public int classInHeader(MemorySegment pool, long block) {
        if (version != 3) {
            return -1;
        }
        long header = pool.get(HEADER, block);
        long length = ValueBlockHeader.length(header);
        if (length > valueSize) {
            return -1;
        }
        int c = ValueClasses.classOf(length);
        return ValueBlockHeader.wholeIn(header, c) ? c : -1;
    }

    /**
     * {@return whether the block at {@code block}, of class {@code valueClass} by the word that names
     * it, holds a whole value of this pool}: in format 3, its header is whole for that class (a torn
     * value of one class is never read as another's) and its length at most the pool's value size; in
     * format 2, always (a bare value has nothing to check).
     */
    public boolean frameWhole(MemorySegment pool, long block, int valueClass) {
        if (version != 3) {
            return true;
        }
        long header = pool.get(HEADER, block);
        return ValueBlockHeader.wholeIn(header, valueClass) && ValueBlockHeader.length(header) <= valueSize;
    }

    @Override
    public String toString() {
        return "format " + version + (version == 3 ? " values of up to " : " values of ") + valueSize + " bytes";
    }
}
