package org.gphash.table;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;

import org.gphash.format.ValueClasses;

/**
 * Format 3's heap of size classes ({@link SizeClassHeap}) for a pool whose values all take one class:
 * the calls operations make ({@link BlockHeap}), so that a format 3 pool of one value size runs the
 * operations format 2's runs, on the same code (issue 53; docs/lab/2026-11-29-format-3-plan.md, step
 * 3). A count of free blocks is reserved before each take, as {@link ValueHeap} reserves its own, so
 * that a new item leaves {@link #UPDATE_RESERVE} blocks for updates here too and a take that reserved
 * a block always finds one. Recovery rebuilds it from the slots ({@link PoolHeap}). Not behind an
 * engine yet.
 *
 * <p>With one class, every segment is free or that class's, so the free count is exact: the blocks the
 * regions hold (whole segments of blocks, or, for a block larger than {@link SizeClassHeap#SMALL_BLOCK_MAX},
 * runs of segments inside one region) less those in use.
 */
public final class OneClassHeap implements PoolHeap {

    private static final int SEGMENT = SizeClassHeap.SEGMENT_BYTES;

    /** The regions added, in order of offsets, and the heap's extent; replaced whole by {@link #addRegion}. */
    private record Regions(long[] offset, long[] bytes, long[] first, long low, long high) {
    }

    /** Replaced whole by a rebuild ({@link #startRebuild}), only while no operation runs. */
    private volatile SizeClassHeap heap = new SizeClassHeap();
    private final int valueClass;
    private final int block;
    /** Segments a large block takes (1 for blocks that share segments). */
    private final int segmentsPerBlock;
    /** Blocks a segment holds (0 for a large block). */
    private final int blocksPerSegment;
    private final AtomicLong free = new AtomicLong();
    /** Blocks a rebuild marked in use so far. */
    private final AtomicLong marked = new AtomicLong();
    private volatile Regions regions = new Regions(new long[0], new long[0], new long[1], 1, 0);
    private volatile long total;

    /** A heap of blocks of class {@code valueClass} ({@link ValueClasses}), with no region yet. */
    public OneClassHeap(int valueClass) {
        this.valueClass = valueClass;
        this.block = ValueClasses.blockBytes(valueClass);
        this.segmentsPerBlock = block > SizeClassHeap.SMALL_BLOCK_MAX ? (block + SEGMENT - 1) / SEGMENT : 1;
        this.blocksPerSegment = block > SizeClassHeap.SMALL_BLOCK_MAX ? 0 : SEGMENT / block;
    }

    /** {@return the class of every block} */
    public int valueClass() {
        return valueClass;
    }

    /**
     * Adds the whole segments of a region of the pool from its first 16-byte boundary, all free
     * ({@link SizeClassHeap#addRegion}: anywhere no region is); a region too small for one adds
     * nothing. Only while no other method runs.
     */
    @Override
    public void addRegion(long offset, long bytes) {
        long start = (offset + 15) & ~15L;
        long whole = (offset + bytes - start) / SEGMENT * SEGMENT;
        if (whole <= 0) {
            return;
        }
        addWholeRegion(start, whole);
    }

    private void addWholeRegion(long offset, long bytes) {
        heap.addRegion(offset, bytes);
        Regions r = regions;
        int n = r.offset.length;
        long blocks = blocksIn(bytes);
        int at = -Arrays.binarySearch(r.offset, offset) - 1;  // regions in order of offsets (a resize adds one below)
        long[] o = new long[n + 1];
        long[] b = new long[n + 1];
        System.arraycopy(r.offset, 0, o, 0, at);
        System.arraycopy(r.bytes, 0, b, 0, at);
        o[at] = offset;
        b[at] = bytes;
        System.arraycopy(r.offset, at, o, at + 1, n - at);
        System.arraycopy(r.bytes, at, b, at + 1, n - at);
        long[] first = new long[n + 2];  // each region's first block number, and the total last
        for (int i = 0; i <= n; i++) {
            first[i + 1] = first[i] + blocksIn(b[i]);
        }
        regions = new Regions(o, b, first, n == 0 ? offset : Math.min(r.low, offset), Math.max(r.high, offset + bytes - 1));
        total += blocks;
        free.addAndGet(blocks);
    }

    /** The blocks a region of {@code bytes} holds: runs of a large block never cross a region. */
    private long blocksIn(long bytes) {
        long segments = bytes / SEGMENT;
        return blocksPerSegment > 0 ? segments * blocksPerSegment : segments / segmentsPerBlock;
    }

    /** Reserves up to {@code n} of the free count, leaving {@code keep}; {@return how many} */
    private long reserve(long n, long keep) {
        for (;;) {
            long f = free.get();
            long take = Math.min(n, f - keep);
            if (take <= 0) {
                return 0;
            }
            if (free.compareAndSet(f, f - take)) {
                return take;
            }
        }
    }

    /** A block for a reservation already made: one exists; a take may miss it while other threads' takes are under way. */
    private long takeReserved() {
        for (int round = 0;; round++) {
            long b = heap.allocate(valueClass);
            if (b >= 0) {
                return b;
            }
            if (round == 1_000_000) {
                throw new IllegalStateException("value heap of class " + valueClass + ": " + free.get() + " blocks counted "
                        + "free, but none could be taken");
            }
            Thread.onSpinWait();
        }
    }

    @Override
    public long allocate(long keep) {
        return reserve(1, keep) == 1 ? takeReserved() : -1;
    }

    @Override
    public int allocateNear(long[] out, int n, long keep) {
        int got = (int) reserve(n, keep);
        for (int i = 0; i < got; i++) {
            out[i] = takeReserved();
        }
        return got;
    }

    @Override
    public void free(long offset) {
        heap.free(offset, valueClass);
        free.incrementAndGet();
    }

    @Override
    public void freeAll(long[] offsets, int from, int to) {
        int i = from;
        try {
            for (; i < to; i++) {
                heap.free(offsets[i], valueClass);
            }
        } finally {
            free.addAndGet(i - from);
        }
    }

    /**
     * Whether {@code offset} starts a block of this heap, free or not: inside a region, on a block's
     * boundary in its segment (blocks share segments) or on a run's first segment (runs are taken
     * lowest first from a region's start, a whole number of segments each, so they start there).
     */
    @Override
    public boolean isBlock(long offset) {
        Regions r = regions;
        int i = Arrays.binarySearch(r.offset, offset);
        if (i < 0) {
            i = -i - 2;
        }
        if (i < 0 || offset >= r.offset[i] + r.bytes[i]) {
            return false;
        }
        long within = offset - r.offset[i];
        if (blocksPerSegment > 0) {
            long inSegment = within % SEGMENT;
            return inSegment % block == 0 && inSegment / block < blocksPerSegment;
        }
        long segment = within / SEGMENT;
        return within % SEGMENT == 0 && segment % segmentsPerBlock == 0
                && segment / segmentsPerBlock < blocksIn(r.bytes[i]);
    }

    @Override
    public boolean spans(long offset, int valueBytes) {
        Regions r = regions;
        return offset >= r.low && offset + valueBytes - 1 <= r.high;
    }

    // ------------------------------------------------------------------ the close record's copy

    /**
     * {@return the number of the block at {@code offset}} (a block: {@link #isBlock}): the blocks of
     * the regions in order of offsets, each region's from its start; what the close record's bitmap
     * is numbered by.
     */
    public long blockNumber(long offset) {
        Regions r = regions;
        int i = Arrays.binarySearch(r.offset, offset);
        i = i >= 0 ? i : -i - 2;
        long within = offset - r.offset[i];
        long inRegion = blocksPerSegment > 0 ? within / SEGMENT * blocksPerSegment + within % SEGMENT / block
                : within / SEGMENT / segmentsPerBlock;
        return r.first[i] + inRegion;
    }

    /** {@return the offset of block number {@code n}} ({@link #blockNumber}'s inverse) */
    public long offsetOf(long n) {
        Regions r = regions;
        int i = Arrays.binarySearch(r.first, 0, r.offset.length, n);
        if (i < 0) {
            i = -i - 2;
        } else {
            while (i + 1 < r.offset.length && r.first[i + 1] == n) {
                i++;  // a region of no blocks starts where the next does
            }
        }
        long k = n - r.first[i];
        return r.offset[i] + (blocksPerSegment > 0 ? k / blocksPerSegment * SEGMENT + k % blocksPerSegment * block
                : k * segmentsPerBlock * SEGMENT);
    }

    /** {@return words of a bitmap over the blocks ({@link #blockNumber})} */
    @Override
    public int bitmapWords() {
        return (int) ((total + 63) >>> 6);
    }

    /** A bitmap of the blocks in use, numbered by {@link #blockNumber}, bits past the last block set. Operations drained. */
    @Override
    public long[] usedBits() {
        long[] bits = new long[bitmapWords()];
        SizeClassHeap h = heap;
        for (long n = 0; n < total; n++) {
            if (h.inUse(offsetOf(n), valueClass)) {
                bits[(int) (n >>> 6)] |= 1L << n;
            }
        }
        if ((total & 63) != 0) {
            bits[bits.length - 1] |= -1L << (total & 63);
        }
        return bits;
    }

    /** Open after a clean close: the blocks the close record's bitmap marks, in use ({@link #usedBits}'s inverse). */
    @Override
    public void restore(long[] usedBits, long usedBlocks) {
        startRebuild();
        for (long n = 0; n < total; n++) {
            if ((usedBits[(int) (n >>> 6)] & (1L << n)) != 0 && !markUsed(offsetOf(n))) {
                throw new IllegalStateException("block " + n + " marked twice in a restore");
            }
        }
        finishRebuild();
        if (marked.get() != usedBlocks) {
            throw new IllegalStateException("a close record of " + usedBlocks + " blocks in use marked " + marked.get());
        }
    }

    /** Recovery: a heap of the same regions, every block free. */
    @Override
    public void startRebuild() {
        Regions r = regions;
        SizeClassHeap fresh = new SizeClassHeap();
        for (int i = 0; i < r.offset.length; i++) {
            fresh.addRegion(r.offset[i], r.bytes[i]);
        }
        heap = fresh;
        free.set(0);
        marked.set(0);
    }

    @Override
    public boolean markUsed(long offset) {
        if (!heap.markUsedIfFree(offset, valueClass)) {
            return false;
        }
        marked.incrementAndGet();
        return true;
    }

    @Override
    public void finishRebuild() {
        free.set(total - marked.get());
    }

    @Override
    public long regionBytes(long bytes, long blocks) {
        long segments = blocksPerSegment > 0 ? (blocks + blocksPerSegment - 1) / blocksPerSegment
                : Math.multiplyExact(blocks, (long) segmentsPerBlock);
        long atLeast = Math.max(bytes, Math.multiplyExact(segments, (long) SEGMENT));
        return (atLeast + SEGMENT - 1) / SEGMENT * SEGMENT;
    }

    @Override
    public long totalBytes() {
        Regions r = regions;
        long bytes = 0;
        for (long b : r.bytes) {
            bytes += b;
        }
        return bytes;
    }

    @Override
    public long totalBlocks() {
        return total;
    }

    @Override
    public long freeBlocks() {
        return free.get();
    }
}
