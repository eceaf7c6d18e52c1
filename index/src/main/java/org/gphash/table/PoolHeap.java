package org.gphash.table;

import java.nio.file.Path;

import org.gphash.format.HeapChunk;
import org.gphash.format.PoolHeader;

/**
 * The value heap as the pool itself uses it, beyond the blocks operations take and give back
 * ({@link BlockHeap}): recovery's rebuild of the free space from the slots, growth by regions of the
 * pool, and its size in bytes. Both formats' heaps have these parts (format 2's {@link ValueHeap}, format
 * 3's {@link SegmentHeap}), so that recovery, growth and resizing run on either without a second
 * route (issue 53, docs/lab/2026-11-29-format-3-plan.md, step 3). What only format 2's bitmap offers
 * (the close record's copy, the GPU's copy, imports' takes by whole words) stays {@link ValueHeap}'s.
 *
 * <p>The rebuild: {@link #startRebuild}, then {@link #markUsed} for every block a published slot
 * names (from many threads at once), then {@link #finishRebuild}; no operation runs meanwhile.
 */
public interface PoolHeap extends BlockHeap {

    /**
     * {@return the heap header {@code h} describes, every block free until recovery or the close
     * record marks them}: format 3's of the pool's one class over the chunks' whole segments, else
     * format 2's bitmap over the chunks; {@code path} names the pool in errors (may be null)
     */
    static PoolHeap of(PoolHeader h, Path path) {
        if (h.formatVersion() == PoolHeader.FORMAT_3) {
            SegmentHeap heap = new SegmentHeap(h.geometry().valueSize(), !h.geometry().itemChecksums());
            for (HeapChunk c : h.heapChunks()) {
                heap.addRegion(c.offset(), c.length());
            }
            return heap;
        }
        return new ValueHeap(h.geometry().valueStride(), h.heapChunks(), path);
    }

    /** Recovery: every block free, before the blocks the slots name are marked. */
    void startRebuild();

    /**
     * Recovery: marks the block of {@code valueClass} at {@code offset} in use; false where it already
     * was (two slots name it). {@code offset} must be a block of that class ({@link #isBlock}): the
     * caller checks, and clears a slot that names no block.
     */
    boolean markUsed(long offset, int valueClass);

    /** Recovery: the free count from the marks, once every mark is made. */
    void finishRebuild();

    /**
     * Adds {@code bytes} of the pool from {@code offset}, all free: a heap chunk a growth made, or the
     * bottom level a resize emptied. A heap may use less than the whole region (format 3: the whole
     * segments from its start). Only while no operation runs.
     */
    void addRegion(long offset, long bytes);

    /** {@return the bytes of the pool the heap's regions hold} */
    long totalBytes();

    /**
     * {@return the bytes of a region to add that hold at least {@code bytes} bytes and {@code blocks}
     * blocks, as this heap uses regions} (format 2: whole blocks; format 3: whole segments)
     */
    long regionBytes(long bytes, long blocks);

    /** {@return the words of the close record's bitmap over this heap's blocks} */
    int bitmapWords();

    /**
     * {@return the bits of the close record's bitmap that number blocks} (format 2: its blocks; format 3:
     * its 16-byte units, a block in use marked at the unit it starts at)
     */
    default long bitmapBlocks() {
        return totalBlocks();
    }

    /**
     * {@return a bitmap of the blocks in use (1 = in use), bits past the last block set}: what a clean
     * close records, numbered as this heap's format numbers its blocks. Operations drained.
     */
    long[] usedBits();

    /**
     * {@return the class each segment holds, -1 for none} (format 3, whose close record needs them
     * beside {@link #usedBits}: a bare block names no class; format 2: none). Operations drained.
     */
    byte[] segmentClasses();

    /**
     * Open after a clean close: the blocks {@code usedBits} marks (as {@link #usedBits} numbers them)
     * are in use, {@code usedBlocks} of them, the rest free; no scan. {@code segmentClasses} gives
     * each segment's class (format 3, as {@link #segmentClasses} wrote them); format 2 does not ask.
     */
    void restore(long[] usedBits, long usedBlocks, byte[] segmentClasses);

    // ------------------------------------------------------------------ one bitmap, for the GPU

    /**
     * {@return the heap as one bitmap of blocks of the pool's value size numbers it}: chunks in order
     * of offsets, each chunk's first block number, for an engine that keeps that bitmap itself while it
     * runs (the GPU's, pipeline/heap_bitmap.cuh) or marks it in a pass (recovery's kernels). Format 2:
     * its chunks. Format 3: its segments, each a chunk, every free one given to the pool's full class
     * first (docs/lab/2026-11-29-format-3-plan.md, "Step 3's GPU half"). Operations drained.
     *
     * @throws IllegalStateException where format 3's segments hold another class (values shorter than the
     *                               value size), or its values take runs of segments
     */
    TableKernels.HeapLayout oneSizeLayout();

    /** {@return the blocks in use as {@link #oneSizeLayout} numbers them (1 = in use, bits past the last block set)} */
    long[] oneSizeUsedBits();

    /**
     * The blocks {@code usedBits} marks (numbered as {@link #oneSizeLayout} numbers them) are in use,
     * every other block free: the bitmap an engine kept comes back. Operations drained.
     */
    void restoreOneSize(long[] usedBits);

    /**
     * {@return format 3's heap as segments, the form the GPU keeps it in ({@link TableKernels.HeapSegments}),
     * or null for format 2, whose GPU form is {@link #oneSizeLayout}'s}: given back by {@link #restore}
     * with the same bits and classes. Operations drained.
     */
    default TableKernels.HeapSegments segments() {
        return null;
    }
}
