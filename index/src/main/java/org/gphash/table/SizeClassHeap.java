package org.gphash.table;

import java.util.Arrays;
import java.util.BitSet;

import org.gphash.format.ValueClasses;

/**
 * Free-space accounting for format 3's value heap of size classes (issue 53, step 2's allocator;
 * docs/lab/2026-11-29-format-3-plan.md): the heap's regions are cut into segments of
 * {@link #SEGMENT_BYTES}; a segment holds blocks of one class ({@link ValueClasses}) while any of them
 * is in use and goes back to the pool of free segments when its last block is freed, so that a class
 * that shrank gives its space to one that grew. Within a class, the lowest free block of the lowest
 * segment with room is taken first, which keeps segments full. A block larger than
 * {@link #SMALL_BLOCK_MAX} takes a run of whole segments of its own.
 *
 * <p>As with {@link ValueHeap}, nothing here is persisted: a block is in use exactly when a published
 * slot's meta word names it (format 3's word names its class too), and recovery rebuilds this state
 * from the slots ({@link #markUsed}).
 *
 * <p>Threads: one lock for the whole heap, for now. The engines do not use this heap yet; when one
 * does, its contention under many writers is to be measured before it is split (a lock per class, the
 * pool of free segments apart), as {@link ValueHeap}'s lock-free claims were for format 2.
 */
public final class SizeClassHeap {

    /** Bytes of a segment. */
    public static final int SEGMENT_BYTES = 1 << 16;
    /** The largest block kept in shared segments (at least eight to a segment); larger ones take whole segments. */
    public static final int SMALL_BLOCK_MAX = SEGMENT_BYTES / 8;
    private static final int FREE = -1;
    /** A segment inside a large block's run, after its first. */
    private static final int RUN_TAIL = -2;

    /** Per class: its segments that have a free block. */
    private final BitSet[] partial = new BitSet[ValueClasses.COUNT];

    // Segments, numbered in the order regions were added (regions in increasing pool offsets).
    private long[] segmentOffset = new long[0];
    /** Per segment: the region it belongs to (runs of large blocks stay inside one region). */
    private int[] segmentRegion = new int[0];
    private int[] owner = new int[0];
    private int[] used = new int[0];
    private long[][] bits = new long[0][];
    private int segments;
    private int regions;
    private final BitSet freeSegments = new BitSet();
    /** Segments held by classes (not free): what the heap takes of the pool. */
    private long heldSegments;
    /** Bytes of the blocks in use, headers included. */
    private long usedBlockBytes;

    public SizeClassHeap() {
        for (int c = 0; c < ValueClasses.COUNT; c++) {
            partial[c] = new BitSet();
        }
    }

    /**
     * Adds a region of the pool to the heap: {@code bytes} (a multiple of {@link #SEGMENT_BYTES}) from
     * pool offset {@code offset} (a multiple of 16), all free.
     */
    public synchronized void addRegion(long offset, long bytes) {
        if (offset <= 0 || offset % 16 != 0 || bytes <= 0 || bytes % SEGMENT_BYTES != 0) {
            throw new IllegalArgumentException("a heap region of " + bytes + " bytes at " + offset
                    + ": it must start on 16 bytes after the header and hold whole segments of " + SEGMENT_BYTES);
        }
        if (segments > 0 && offset < segmentOffset[segments - 1] + SEGMENT_BYTES) {
            throw new IllegalArgumentException("a heap region at " + offset + " overlaps or precedes the last one, "
                    + "which ends at " + (segmentOffset[segments - 1] + SEGMENT_BYTES));
        }
        int n = (int) (bytes / SEGMENT_BYTES);
        int total = segments + n;
        segmentOffset = Arrays.copyOf(segmentOffset, total);
        segmentRegion = Arrays.copyOf(segmentRegion, total);
        owner = Arrays.copyOf(owner, total);
        used = Arrays.copyOf(used, total);
        bits = Arrays.copyOf(bits, total);
        for (int i = 0; i < n; i++) {
            int s = segments + i;
            segmentOffset[s] = offset + (long) i * SEGMENT_BYTES;
            segmentRegion[s] = regions;
            owner[s] = FREE;
        }
        freeSegments.set(segments, total);
        segments = total;
        regions++;
    }

    /**
     * Takes a free block of class {@code valueClass}.
     *
     * @return its pool offset, or -1 when the heap has no room for it (the caller adds a region and tries again)
     */
    public synchronized long allocate(int valueClass) {
        int block = ValueClasses.blockBytes(valueClass);
        if (block > SMALL_BLOCK_MAX) {
            return allocateRun(valueClass, block);
        }
        int s = partial[valueClass].nextSetBit(0);
        if (s < 0) {
            s = takeSegment(valueClass, block);
            if (s < 0) {
                return -1;
            }
        }
        long[] b = bits[s];
        int perSegment = SEGMENT_BYTES / block;
        int i = firstClear(b, perSegment);
        b[i >>> 6] |= 1L << i;
        if (++used[s] == perSegment) {
            partial[valueClass].clear(s);
        }
        usedBlockBytes += block;
        return segmentOffset[s] + (long) i * block;
    }

    /** A free segment given to {@code valueClass}, now in its partial set; -1 when none is free. */
    private int takeSegment(int valueClass, int block) {
        int s = freeSegments.nextSetBit(0);
        if (s < 0) {
            return -1;
        }
        assignSegment(s, valueClass, block);
        return s;
    }

    private static int firstClear(long[] b, int limit) {
        for (int w = 0; w < b.length; w++) {
            if (b[w] != -1L) {
                int i = (w << 6) + Long.numberOfTrailingZeros(~b[w]);
                if (i < limit) {
                    return i;
                }
            }
        }
        throw new IllegalStateException("a segment in a class's partial set has no free block");
    }

    /** Gives free segment {@code s} to {@code valueClass}, all its blocks free, in the class's partial set. */
    private void assignSegment(int s, int valueClass, int block) {
        freeSegments.clear(s);
        owner[s] = valueClass;
        used[s] = 0;
        bits[s] = new long[(SEGMENT_BYTES / block + 63) >>> 6];
        heldSegments++;
        partial[valueClass].set(s);
    }

    /** Gives the free segments {@code s..s+k} to one large block of {@code valueClass}, in use. */
    private void claimRun(int s, int k, int valueClass, int block) {
        freeSegments.clear(s, s + k);
        owner[s] = valueClass;
        used[s] = 1;
        for (int t = s + 1; t < s + k; t++) {
            owner[t] = RUN_TAIL;
        }
        heldSegments += k;
        usedBlockBytes += block;
    }

    /** A large block: the lowest run of free segments, in one region, that holds it. */
    private long allocateRun(int valueClass, int block) {
        int k = (block + SEGMENT_BYTES - 1) / SEGMENT_BYTES;
        for (int s = freeSegments.nextSetBit(0); s >= 0 && s + k <= segments; s = freeSegments.nextSetBit(s + 1)) {
            int end = freeSegments.nextClearBit(s);
            if (end - s >= k && segmentRegion[s + k - 1] == segmentRegion[s]) {
                claimRun(s, k, valueClass, block);
                return segmentOffset[s];
            }
        }
        return -1;
    }

    /**
     * Frees the block of class {@code valueClass} at {@code offset}; an emptied segment goes back to
     * the pool.
     *
     * @throws IllegalArgumentException if no block of that class starts there, or it is free already
     */
    public synchronized void free(long offset, int valueClass) {
        int block = ValueClasses.blockBytes(valueClass);
        int s = segmentOf(offset);
        if (block > SMALL_BLOCK_MAX) {
            if (owner[s] != valueClass || used[s] != 1 || segmentOffset[s] != offset) {
                throw notABlock(offset, valueClass);
            }
            int k = (block + SEGMENT_BYTES - 1) / SEGMENT_BYTES;
            for (int t = s; t < s + k; t++) {
                owner[t] = FREE;
                used[t] = 0;
            }
            freeSegments.set(s, s + k);
            heldSegments -= k;
            usedBlockBytes -= block;
            return;
        }
        long within = offset - segmentOffset[s];
        if (owner[s] != valueClass || within % block != 0 || within / block >= SEGMENT_BYTES / block) {
            throw notABlock(offset, valueClass);
        }
        int i = (int) (within / block);
        long[] b = bits[s];
        if ((b[i >>> 6] & (1L << i)) == 0) {
            throw notABlock(offset, valueClass);
        }
        b[i >>> 6] &= ~(1L << i);
        int perSegment = SEGMENT_BYTES / block;
        if (--used[s] == 0) {
            partial[valueClass].clear(s);
            owner[s] = FREE;
            bits[s] = null;
            freeSegments.set(s);
            heldSegments--;
            usedBlockBytes -= block;
            return;
        }
        if (used[s] == perSegment - 1) {
            partial[valueClass].set(s);
        }
        usedBlockBytes -= block;
    }

    /**
     * Recovery's rebuild: marks the block of {@code valueClass} at {@code offset}, which a published
     * slot names, in use (on a heap whose regions are all free when the rebuild starts). Operations
     * must not run meanwhile.
     *
     * @throws IllegalArgumentException if the offset is no block of that class, or two slots name it
     */
    public synchronized void markUsed(long offset, int valueClass) {
        int block = ValueClasses.blockBytes(valueClass);
        int s = segmentOf(offset);
        if (block > SMALL_BLOCK_MAX) {
            int k = (block + SEGMENT_BYTES - 1) / SEGMENT_BYTES;
            if (segmentOffset[s] != offset || s + k > segments || segmentRegion[s + k - 1] != segmentRegion[s]
                    || freeSegments.nextClearBit(s) < s + k) {
                throw notABlock(offset, valueClass);
            }
            claimRun(s, k, valueClass, block);
            return;
        }
        if (owner[s] == FREE) {
            assignSegment(s, valueClass, block);
        }
        long within = offset - segmentOffset[s];
        if (owner[s] != valueClass || within % block != 0 || within / block >= SEGMENT_BYTES / block) {
            throw notABlock(offset, valueClass);
        }
        int i = (int) (within / block);
        if ((bits[s][i >>> 6] & (1L << i)) != 0) {
            throw notABlock(offset, valueClass);
        }
        bits[s][i >>> 6] |= 1L << i;
        if (++used[s] == SEGMENT_BYTES / block) {
            partial[valueClass].clear(s);
        }
        usedBlockBytes += block;
    }

    private int segmentOf(long offset) {
        int lo = 0;
        int hi = segments - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            long start = segmentOffset[mid];
            if (offset < start) {
                hi = mid - 1;
            } else if (offset >= start + SEGMENT_BYTES) {
                lo = mid + 1;
            } else {
                return mid;
            }
        }
        throw new IllegalArgumentException("pool offset " + offset + " is in no region of the value heap");
    }

    private static IllegalArgumentException notABlock(long offset, int valueClass) {
        return new IllegalArgumentException("pool offset " + offset + " is no block of value class " + valueClass
                + " in use: a meta word names a block the heap did not hand out");
    }

    /** {@return the bytes of the segments classes hold: what the heap takes of the pool now} */
    public synchronized long heldBytes() {
        return heldSegments * SEGMENT_BYTES;
    }

    /** {@return the bytes of the blocks in use, headers included} */
    public synchronized long usedBlockBytes() {
        return usedBlockBytes;
    }

    /** {@return the bytes of all regions} */
    public synchronized long totalBytes() {
        return (long) segments * SEGMENT_BYTES;
    }
}
