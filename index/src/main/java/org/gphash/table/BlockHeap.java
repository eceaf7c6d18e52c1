package org.gphash.table;

/**
 * The value heap as operations use it: blocks taken for new values and given back once nothing can
 * read them, and the bound check a read makes before it copies a value. Format 2's heap of one block
 * size ({@link ValueHeap}) is the one there is; format 3's heap of size classes
 * ({@link SizeClassHeap}) is to take the same calls for a pool of one value size, so that operations
 * run on either without a second route (issue 53, docs/lab/2026-11-29-format-3-plan.md). What only a
 * heap's own format knows (recovery's rebuild, the close record's copy, growth by chunks, the GPU's
 * copy of the bitmap) stays with that heap.
 *
 * <p>Lock-free: every method may run from many threads at once.
 */
public interface BlockHeap {

    /**
     * Blocks only an update may take: an update writes its new value before it frees the old one,
     * so a heap that new items had filled to the last block could no longer update anything (issue
     * 14). The reserve refills as updates' old blocks are reclaimed.
     */
    long UPDATE_RESERVE = 64;

    /**
     * Claims a free block, leaving {@code keep} free ({@link #UPDATE_RESERVE} for a new item), and
     * returns its pool offset; -1 when no more than {@code keep} are free (the heap must grow).
     */
    long allocate(long keep);

    /**
     * Claims up to {@code n} free blocks near each other, leaving {@code keep} free, and writes their
     * offsets to {@code out}; returns how many (0 when no more than {@code keep} are free). The caller
     * gives back what it does not use ({@link #freeAll}).
     */
    int allocateNear(long[] out, int n, long keep);

    /** Gives a block back. Giving back a block that is not in use is a bug and throws. */
    void free(long offset);

    /** Gives back blocks {@code offsets[from, to)}; one not in use throws, those before it are free by then. */
    void freeAll(long[] offsets, int from, int to);

    /** Whether {@code offset} is the start of a block of this heap. */
    boolean isBlock(long offset);

    /**
     * Whether {@code valueBytes} read at {@code offset} lie inside the heap's extent: the cheap bound
     * check an operation makes before it reads a value ({@link #free} checks the exact block).
     */
    boolean spans(long offset, int valueBytes);

    /** {@return the blocks of the heap, free or not: a growth compares it with what it observed} */
    long totalBlocks();

    /** {@return the blocks free now} */
    long freeBlocks();
}
