package org.gphash.table;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

import org.gphash.format.ValueBlockHeader;
import org.gphash.format.ValueClasses;

/**
 * Format 3's values in the pool (issue 53, step 2; docs/lab/2026-11-29-format-3-plan.md): each value in
 * a block of its class ({@link ValueClasses#classOf} of its length) taken from a {@link SizeClassHeap},
 * behind its header ({@link ValueBlockHeader}: length and item checksum, one little-endian word), the
 * value's bytes right after it. What the slot's meta word will name is the block's offset and class
 * ({@code SlotMetaV3}).
 *
 * <p><b>Persist order.</b> {@link #write} only stores; the caller persists the block (header and value,
 * {@link #blockBytes} from its offset) before it publishes a meta word that names it, as format 2's
 * writes persist a value before its slot.
 *
 * <p><b>Reads check the header.</b> A reader holds a meta word that named a block of class {@code c};
 * it reads the value only where the block's header is one a value of class {@code c} could have
 * ({@link ValueBlockHeader#wholeIn}), else it gets -1 and nothing: a block freed and taken by a value of
 * another size, or never written whole (a crash between the take and the persist), is never read as a
 * value of the class the reader expected. A value torn under a whole header (its header persisted, its
 * bytes not all) is the item checksum's to catch, where the pool keeps them. Not used by the engines
 * yet.
 */
public final class ValueBlocks {

    private static final ValueLayout.OfLong HEADER = ValueLayout.JAVA_LONG.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final MemorySegment pool;
    private final SizeClassHeap heap;

    /** Values in {@code pool} (mapped from its first byte: heap offsets are pool offsets), in blocks of {@code heap}. */
    public ValueBlocks(MemorySegment pool, SizeClassHeap heap) {
        if (heap.totalBytes() > 0 && pool.byteSize() < heap.totalBytes()) {
            throw new IllegalArgumentException("a pool of " + pool.byteSize() + " bytes cannot hold a heap of "
                    + heap.totalBytes());
        }
        this.pool = pool;
        this.heap = heap;
    }

    /**
     * Stores a value of {@code length} bytes from {@code src} at {@code srcOffset}, with item checksum
     * {@code checksum} (0 where the pool keeps none), in a new block.
     *
     * @return the block's pool offset, or -1 when the heap has no room for its class (nothing stored)
     * @throws IllegalArgumentException if no block holds a value that long
     */
    public long write(MemorySegment src, long srcOffset, int length, int checksum) {
        long header = ValueBlockHeader.make(length, checksum);
        long offset = heap.allocate(ValueClasses.classOf(length));
        if (offset < 0) {
            return -1;
        }
        MemorySegment.copy(src, srcOffset, pool, offset + ValueClasses.HEADER_BYTES, length);
        pool.set(HEADER, offset, header);
        return offset;
    }

    /** {@return the bytes to persist of the block {@link #write} returned for a value of {@code length} bytes: header and value} */
    public static long blockBytes(int length) {
        return ValueClasses.HEADER_BYTES + (long) length;
    }

    /** {@return the length of the value in the block of {@code valueClass} at {@code offset}, or -1 when its header is not whole for that class} */
    public int length(long offset, int valueClass) {
        long header = pool.get(HEADER, offset);
        return ValueBlockHeader.wholeIn(header, valueClass) ? (int) ValueBlockHeader.length(header) : -1;
    }

    /** {@return the item checksum in the header of the block at {@code offset} (check the block with {@link #length} first)} */
    public int checksum(long offset) {
        return ValueBlockHeader.checksum(pool.get(HEADER, offset));
    }

    /**
     * Copies the value in the block of {@code valueClass} at {@code offset} to {@code out} at
     * {@code outOffset}.
     *
     * @return its length, or -1 (nothing copied) when the block's header is not whole for that class
     */
    public int read(long offset, int valueClass, MemorySegment out, long outOffset) {
        int length = length(offset, valueClass);
        if (length >= 0) {
            MemorySegment.copy(pool, offset + ValueClasses.HEADER_BYTES, out, outOffset, length);
        }
        return length;
    }

    /** Gives the block of {@code valueClass} at {@code offset} back to the heap (once no reader can hold a word that names it). */
    public void free(long offset, int valueClass) {
        heap.free(offset, valueClass);
    }
}
