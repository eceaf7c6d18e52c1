package org.gphash.table;

/**
 * The value heap as operations use it: blocks taken for new values and given back once nothing can
 * read them, and the bound check a read makes before it copies a value. Format 2's heap of one block
 * size ({@link ValueHeap}) is the one there is; format 3's heap of size classes
 * ({@link SegmentHeap}) takes the same calls with a class for each value's length, so that operations
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
     * Claims a free block of class {@code valueClass} (format 3's {@link org.gphash.format.ValueClasses};
     * format 2's heap has one block size and ignores it), leaving {@code keep} free
     * ({@link #UPDATE_RESERVE} for a new item), and returns its pool offset; -1 when the heap has no
     * room for it beyond {@code keep} (the heap must grow: {@link #canTake} says when it has).
     */
    long allocate(int valueClass, long keep);

    /**
     * Claims up to {@code n} free blocks of class {@code valueClass} near each other, leaving
     * {@code keep} free, and writes their offsets to {@code out}; returns how many (0 when no more
     * than {@code keep} are free). The caller gives back what it does not use ({@link #freeAll}).
     */
    int allocateNear(long[] out, int n, int valueClass, long keep);

    /**
     * Whether {@link #allocate} of {@code valueClass} leaving {@code keep} would find a block now: a
     * growth asks it first, so that it adds a region only where the take that sent it still fails.
     */
    default boolean canTake(int valueClass, long keep) {
        return freeBlocks() > keep;
    }

    /** Gives a block back. Giving back a block that is not in use is a bug and throws. */
    void free(long offset);

    /** Gives back blocks {@code offsets[from, to)}; one not in use throws, those before it are free by then. */
    void freeAll(long[] offsets, int from, int to);

    /** Whether {@code offset} is the start of a block of class {@code valueClass} of this heap (format 2: of its one size). */
    boolean isBlock(long offset, int valueClass);

    /**
     * Whether {@code valueBytes} read at {@code offset} lie inside the heap's extent: the cheap bound
     * check an operation makes before it reads a value ({@link #free} checks the exact block).
     */
    boolean spans(long offset, int valueBytes);

    /** {@return the blocks of the heap, free or not: a growth compares it with what it observed} */
    long totalBlocks();

    /** {@return the blocks free now} (format 3: blocks of the pool's largest class that no class's segment holds) */
    long freeBlocks();

    /** {@return the blocks in use, every class} (format 3 sums its segments: for recovery, checks and figures, not hot paths) */
    default long usedBlocks() {
        return totalBlocks() - freeBlocks();
    }
}
