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
 * <p>This class frames values of the pool's one size; values of many sizes come with step 4.
 */
public final class ValueFormat {

    private static final ValueLayout.OfLong HEADER = ValueLayout.JAVA_LONG.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final int version;
    private final int valueSize;
    /** Format 3's class of every value (-1 for format 2). */
    private final int valueClass;
    /** Bytes from a block's start to its value's first byte. */
    private final int valueStart;

    private ValueFormat(int version, int valueSize, int valueClass, int valueStart) {
        this.version = version;
        this.valueSize = valueSize;
        this.valueClass = valueClass;
        this.valueStart = valueStart;
    }

    /** Format 2: values of {@code valueSize} bytes, each at its block's start, nothing around it. */
    public static ValueFormat v2(int valueSize) {
        return new ValueFormat(2, checkedSize(valueSize), -1, 0);
    }

    /** Format 3: values of {@code valueSize} bytes, each behind its header in a block of their one class. */
    public static ValueFormat v3(int valueSize) {
        return new ValueFormat(3, checkedSize(valueSize), ValueClasses.classOf(valueSize), ValueClasses.HEADER_BYTES);
    }

    /**
     * {@return the format of values of {@code valueSize} bytes in pools of format version {@code version}}
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

    /** {@return the pool offset of the first byte of the value in the block at {@code block}} */
    public long valueAt(long block) {
        return block + valueStart;
    }

    /** {@return the bytes from a block's start that its value and frame take: what a write persists and a read may touch} */
    public int framedBytes() {
        return valueStart + valueSize;
    }

    /**
     * Writes the value at {@code src}/{@code srcOffset} into the block at {@code block}, with its frame
     * (format 3's header: the pool's value size, no checksum; nothing in format 2).
     *
     * @return the bytes from the block's start to persist, before any word names the block ({@link #framedBytes})
     */
    public int write(MemorySegment pool, long block, MemorySegment src, long srcOffset) {
        MemorySegment.copy(src, srcOffset, pool, valueAt(block), valueSize);
        if (version == 3) {
            pool.set(HEADER, block, ValueBlockHeader.make(valueSize, 0));
        }
        return framedBytes();
    }

    /** Copies the value in the block at {@code block} to {@code out} at {@code outOffset} (check it with {@link #frameWhole} first). */
    public void read(MemorySegment pool, long block, MemorySegment out, long outOffset) {
        MemorySegment.copy(pool, valueAt(block), out, outOffset, valueSize);
    }

    /**
     * {@return whether the block at {@code block} holds a whole value of this pool}: in format 3, its
     * header is whole for the class the pool's words name and gives the pool's value size (a torn
     * value of one class is never read as another's, nor as a value of another length); in format 2,
     * always (a bare value has nothing to check).
     */
    public boolean frameWhole(MemorySegment pool, long block) {
        if (version != 3) {
            return true;
        }
        long header = pool.get(HEADER, block);
        return ValueBlockHeader.wholeIn(header, valueClass) && ValueBlockHeader.length(header) == valueSize;
    }

    @Override
    public String toString() {
        return "format " + version + " values of " + valueSize + " bytes";
    }
}
