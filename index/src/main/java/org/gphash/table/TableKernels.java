package org.gphash.table;

import org.gphash.Geometry;
import org.gphash.format.PoolHeader;
import org.gphash.persistence.PoolFile;

/**
 * The whole-table passes of recovery and resize, as another engine runs them (the GPU engine runs
 * them as kernels). {@link PoolTable} calls them at the points where the CPU engine runs its own
 * loops, with operations drained, so the CPU never touches the table while they run. Each must
 * leave the pool exactly as the CPU loops would (docs/DESIGN.md, "Recovery" and "Resize").
 */
public interface TableKernels {

    /**
     * The pool file is open and mapped, with this geometry, these hash seeds and this format (its
     * meta words and value blocks: 2 or 3); called before anything reads or writes the table; may
     * refuse a pool its engine cannot run (a {@link org.gphash.BackendUnavailableException}). Kernels still starting may keep these until their first pass
     * or {@link #beforeWrites}.
     */
    void attach(PoolFile file, Geometry geometry, long[] seeds, int formatVersion);

    /**
     * An open has read and checked the pool and is about to write it (recovery's repairs, the mark
     * that the pool is in use), or a create has made its file and is about to write the header:
     * kernels still starting finish here, so that an open they refuse has written nothing and a
     * create they refuse leaves no file (it discards what it made).
     */
    default void beforeWrites() {
    }

    /** Whether the engine these kernels belong to writes and checks item checksums (open refuses such pools otherwise). */
    default boolean supportsItemChecksums() {
        return false;
    }

    /**
     * Whether the engine these kernels belong to runs pools of format {@code version}: format 2 only
     * until the kernels learn format 3 (issue 53, step 3 of docs/lab/2026-11-29-format-3-plan.md);
     * create and open refuse another before they write.
     */
    default boolean supportsFormat(int version) {
        return version == PoolHeader.FORMAT_VERSION;
    }

    /**
     * Recovery's judgement over every level of {@code layout}, writing nothing: how many INSERT
     * slots, torn items (fingerprint not the key's, or no candidate bucket of the key holds the item)
     * and duplicates {@link #clearBrokenAndDuplicates} would clear.
     */
    RecoveryCounts countBrokenAndDuplicates(TableLayout layout);

    /** Recovery's repair over every level of {@code layout}: clear INSERT slots, torn items, duplicates. */
    RecoveryCounts clearBrokenAndDuplicates(TableLayout layout);

    /**
     * The bitmap of value blocks in use (one bit per block of {@code heap}, set = used) and the
     * number of items, writing nothing to the pool. With {@code validItemsOnly}, only items that are
     * their key's valid item count (the others are about to be cleared, and a resize's copy shares
     * its block with the original); otherwise every item does.
     *
     * @throws org.gphash.error.PoolFormatException if an item's value offset is no block, or two items share one
     */
    MarkedBlocks markValueBlocks(TableLayout layout, HeapLayout heap, boolean validItemsOnly);

    /**
     * Format 3's marks by class: the close record's bitmap of the 16-byte units where the blocks of
     * items start (segment {@code i} of {@code segmentOffsets}, in order of offsets, holds units
     * {@code 4096 i} on), the class each segment's items name (-1: none), and the number of items;
     * {@code validItemsOnly} as {@link #markValueBlocks}. Writes nothing to the pool.
     *
     * @throws org.gphash.error.PoolFormatException if an item's value offset is no unit of a segment, two
     *                                              items share one, or one segment's items name two classes
     */
    MarkedSegments markValueSegments(TableLayout layout, long[] segmentOffsets, boolean validItemsOnly);

    /**
     * Resize step 3 over the bottom level of {@code layout}: copies each valid item up and clears it
     * below; drops copies that are not their key's valid item. Items that fit nowhere above stay.
     */
    RehashResult rehashBottom(TableLayout layout);

    /** Counts of recovery phase 1. */
    record RecoveryCounts(long insertSlots, long tornSlots, long duplicates) {
        /** Slots that are or would be cleared. */
        public long total() {
            return insertSlots + tornSlots + duplicates;
        }
    }

    /** Result of recovery phase 2. */
    record MarkedBlocks(long[] usedBits, long items) {
    }

    /** Format 3's marks by class ({@link #markValueSegments}), in the form a clean close records them. */
    record MarkedSegments(long[] unitBits, byte[] classes, long items) {
    }

    /**
     * Result of one rehash pass.
     *
     * @param moved          items copied up and cleared below
     * @param dropped        bottom items cleared because a more valid copy of their key exists
     * @param unplaced       items left below because every candidate bucket above is full
     * @param retiredBlocks  value blocks no item refers to any more (to be freed)
     */
    record RehashResult(long moved, long dropped, long unplaced, long[] retiredBlocks) {
    }

    /**
     * The value heap as the block bitmap numbers it: chunks sorted by offset, each chunk's first block
     * number, and the bitmap's length in 64-bit words.
     */
    record HeapLayout(long[] chunkOffsets, long[] chunkLengths, long[] firstBlocks, int stride, int words) {
    }

    /**
     * Format 3's value heap as segments ({@link SegmentHeap}), for an engine that keeps it itself while
     * it runs (the GPU's pipeline, pipeline/heap_segments.cuh): every segment's offset in order of
     * offsets, the class each holds (-1 free, and inside a run of segments after its first: a block
     * over 8 KiB names its class in its run's first segment), the bitmap of 16-byte units where a block
     * in use starts (segment {@code i}'s units are bits {@code 4096 i} on, as the close record numbers
     * them), the class a value of the pool's value size takes, and for each segment the segments from
     * it to its region's end (a run stays in one region).
     */
    record HeapSegments(long[] offsets, byte[] classes, long[] unitBits, int fullClass, int[] regionRoom) {
    }
}
