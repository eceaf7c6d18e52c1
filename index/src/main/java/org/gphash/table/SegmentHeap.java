package org.gphash.table;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;

import org.gphash.format.ValueClasses;
import org.gphash.format.ValueFormat;

/**
 * Format 3's value heap as the pool uses it ({@link PoolHeap}): blocks of every size class
 * ({@link ValueClasses}) in segments of {@link SizeClassHeap#SEGMENT_BYTES}, so that one pool holds
 * values of any length up to its value size, a fixed-size pool being the case where every value has
 * the largest length (issue 53; docs/lab/2026-11-29-format-3-plan.md, step 4). The regions are the
 * header's heap chunks (and levels a resize emptied), each cut to whole segments.
 *
 * <p><b>Counts.</b> The calls that count blocks ({@link #totalBlocks}, {@link #freeBlocks}, a new
 * item's {@code keep}, a growth's want) count blocks of the pool's largest class, the one a
 * full-length value takes, and count as free only the segments no class holds: room left in a
 * class's segments is room for that class alone, so it is not promised to any take. The blocks in
 * use, every class, are {@link #usedBlocks}. A take fails (-1) only where no segment of its class has
 * room and no free segment may be given to it; the growth that follows asks {@link #canTake} first.
 *
 * <p><b>The close record</b> numbers the heap's 16-byte units, regions in order of offsets, and marks
 * the unit each block in use starts at ({@link #usedBits}), with the class each segment holds
 * ({@link #segmentClasses}, segments in the same order); the next open restores every segment of the
 * class the record gives it ({@link #restore}). A bare block has no header to name its class, so the
 * record does.
 */
public final class SegmentHeap implements PoolHeap {

    private static final int SEGMENT = SizeClassHeap.SEGMENT_BYTES;
    /** The close record's unit: every block starts on one (blocks are multiples of 16 bytes from a segment's start). */
    private static final int UNIT = 16;
    private static final int UNITS_PER_SEGMENT = SEGMENT / UNIT;

    /** The regions added, in order of offsets, each one's first unit of the close record's numbering, and the extent. */
    private record Regions(long[] offset, long[] bytes, long[] firstUnit, long low, long high) {
    }

    /** Replaced whole by a rebuild ({@link #startRebuild}), only while no operation runs. */
    private volatile SizeClassHeap heap = new SizeClassHeap();
    /** The class of a value of the pool's value size: the unit of the counts. */
    private final int fullClass;
    /** Blocks of {@link #fullClass} a segment holds (0 for a block of whole segments). */
    private final int fullPerSegment;
    /** Segments a block of {@link #fullClass} takes (1 for blocks that share segments). */
    private final int fullSegments;
    /** Blocks a rebuild marked in use so far. */
    private final AtomicLong marked = new AtomicLong();
    private volatile Regions regions = new Regions(new long[0], new long[0], new long[1], 1, 0);

    /**
     * A heap for values of at most {@code valueSize} bytes, with no region yet; {@code bareValues}: a
     * value whose length is a block size takes a bare block ({@link ValueFormat#of}: where the pool
     * keeps no item checksums), which decides the class of a value of the value size.
     */
    public SegmentHeap(int valueSize, boolean bareValues) {
        this.fullClass = ValueFormat.v3(valueSize, bareValues).classOf(valueSize);
        int block = ValueClasses.blockBytes(fullClass);
        this.fullPerSegment = block > SizeClassHeap.SMALL_BLOCK_MAX ? 0 : SEGMENT / block;
        this.fullSegments = block > SizeClassHeap.SMALL_BLOCK_MAX ? (block + SEGMENT - 1) / SEGMENT : 1;
    }

    /** {@return the class of a value of the pool's value size} */
    public int fullClass() {
        return fullClass;
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
        heap.addRegion(start, whole);
        Regions r = regions;
        int n = r.offset.length;
        int at = -Arrays.binarySearch(r.offset, start) - 1;  // regions in order of offsets (a resize adds one below)
        long[] o = new long[n + 1];
        long[] b = new long[n + 1];
        System.arraycopy(r.offset, 0, o, 0, at);
        System.arraycopy(r.bytes, 0, b, 0, at);
        o[at] = start;
        b[at] = whole;
        System.arraycopy(r.offset, at, o, at + 1, n - at);
        System.arraycopy(r.bytes, at, b, at + 1, n - at);
        long[] firstUnit = new long[n + 2];  // each region's first unit, and the total last
        for (int i = 0; i <= n; i++) {
            firstUnit[i + 1] = firstUnit[i] + b[i] / UNIT;
        }
        regions = new Regions(o, b, firstUnit, n == 0 ? start : Math.min(r.low, start), Math.max(r.high, start + whole - 1));
    }

    /** Segments to keep free for {@code keep} blocks of the largest class. */
    private int keepSegments(long keep) {
        if (keep <= 0) {
            return 0;
        }
        long segments = fullPerSegment > 0 ? (keep + fullPerSegment - 1) / fullPerSegment : keep * fullSegments;
        return (int) Math.min(Integer.MAX_VALUE, segments);
    }

    @Override
    public long allocate(int valueClass, long keep) {
        return heap.allocate(valueClass, keepSegments(keep));
    }

    @Override
    public int allocateNear(long[] out, int n, int valueClass, long keep) {
        int keepSegments = keepSegments(keep);
        int got = 0;
        while (got < n) {
            long b = heap.allocate(valueClass, keepSegments);
            if (b < 0) {
                break;
            }
            out[got++] = b;
        }
        return got;
    }

    @Override
    public boolean canTake(int valueClass, long keep) {
        return heap.canTake(valueClass, keepSegments(keep));
    }

    @Override
    public void free(long offset) {
        heap.free(offset);
    }

    @Override
    public void freeAll(long[] offsets, int from, int to) {
        for (int i = from; i < to; i++) {
            heap.free(offsets[i]);
        }
    }

    @Override
    public boolean isBlock(long offset, int valueClass) {
        return heap.isBlock(offset, valueClass);
    }

    @Override
    public boolean spans(long offset, int valueBytes) {
        Regions r = regions;
        return offset >= r.low && offset + valueBytes - 1 <= r.high;
    }

    // ------------------------------------------------------------------ the close record's copy

    /**
     * {@return the close record's number of the 16-byte unit at {@code offset}} (inside a region):
     * what its bitmap, and the tools' map of the heap, number a block by
     */
    public long unitNumber(long offset) {
        Regions r = regions;
        int i = Arrays.binarySearch(r.offset, offset);
        i = i >= 0 ? i : -i - 2;
        return r.firstUnit[i] + (offset - r.offset[i]) / UNIT;
    }

    /** {@return the offset of unit number {@code n}} ({@link #unitNumber}'s inverse) */
    long offsetOfUnit(long n) {
        Regions r = regions;
        int i = Arrays.binarySearch(r.firstUnit, 0, r.offset.length, n);
        i = i >= 0 ? i : -i - 2;
        return r.offset[i] + (n - r.firstUnit[i]) * UNIT;
    }

    /** {@return the 16-byte units of the regions: one past the highest {@link #unitNumber}} */
    public long units() {
        Regions r = regions;
        return r.firstUnit[r.offset.length];
    }

    @Override
    public long bitmapBlocks() {
        return units();
    }

    /** {@return words of a bitmap over the heap's 16-byte units} */
    @Override
    public int bitmapWords() {
        return (int) ((units() + 63) >>> 6);
    }

    /** The units the blocks in use start at (1 = a block in use starts there), bits past the last unit set. Operations drained. */
    @Override
    public long[] usedBits() {
        long[] bits = new long[bitmapWords()];
        heap.contents().forEachUsed((offset, c) -> {
            long n = unitNumber(offset);
            bits[(int) (n >>> 6)] |= 1L << n;
        });
        long units = units();
        if ((units & 63) != 0) {
            bits[bits.length - 1] |= -1L << (units & 63);
        }
        return bits;
    }

    /**
     * The class each segment holds, segments in order of offsets (as {@link #unitNumber} numbers their
     * units: segment {@code i} holds units {@code 4096 i} on), -1 for a free one or one inside a run
     * of segments after its first. Operations drained.
     */
    @Override
    public byte[] segmentClasses() {
        long[] offsets = segmentOffsets();
        byte[] classes = new byte[offsets.length];
        HeapContents h = heap.contents();
        for (int i = 0; i < offsets.length; i++) {
            classes[i] = (byte) h.classAt(offsets[i]);
        }
        return classes;
    }

    /**
     * Open after a clean close: the blocks that start at the units {@code usedBits} marks are in use,
     * each of the class {@code segmentClasses} gives its segment; each segment of small blocks is
     * restored whole under one take of the heap's lock ({@link SizeClassHeap#restoreSegment}), runs of
     * segments block by block. A mark that is no block of its segment's class, or a segment with marks
     * and no class, is refused.
     *
     * @throws IllegalStateException naming the first block refused
     */
    @Override
    public void restore(long[] usedBits, long usedBlocks, byte[] segmentClasses) {
        startRebuild();
        Regions r = regions;
        SizeClassHeap h = heap;
        int wordsPerSegment = UNITS_PER_SEGMENT / 64;
        long[] blockBits = new long[(SEGMENT / ValueClasses.blockBytes(0) + 63) / 64];
        int k = 0;
        for (int i = 0; i < r.offset.length; i++) {
            long segments = r.bytes[i] / SEGMENT;
            for (long sg = 0; sg < segments; sg++, k++) {
                int firstWord = (int) ((r.firstUnit[i] >>> 6) + sg * wordsPerSegment);
                long segmentOffset = r.offset[i] + sg * SEGMENT;
                int first = -1;
                for (int w = 0; w < wordsPerSegment && first < 0; w++) {
                    if (usedBits[firstWord + w] != 0) {
                        first = (w << 6) + Long.numberOfTrailingZeros(usedBits[firstWord + w]);
                    }
                }
                if (first < 0) {
                    continue;
                }
                int c = k < segmentClasses.length ? segmentClasses[k] : -1;
                if (c < 0 || c >= ValueClasses.COUNT) {
                    throw restoreRefused(segmentOffset + (long) first * UNIT);
                }
                int block = ValueClasses.blockBytes(c);
                if (block > SizeClassHeap.SMALL_BLOCK_MAX) {
                    restoreRun(usedBits, firstWord, wordsPerSegment, segmentOffset, c);
                    continue;
                }
                Arrays.fill(blockBits, 0);
                int used = 0;
                for (int w = 0; w < wordsPerSegment; w++) {
                    for (long x = usedBits[firstWord + w]; x != 0; x &= x - 1) {
                        int within = ((w << 6) + Long.numberOfTrailingZeros(x)) * UNIT;
                        if (within % block != 0 || within / block >= SEGMENT / block) {
                            throw restoreRefused(segmentOffset + within);
                        }
                        blockBits[(within / block) >>> 6] |= 1L << (within / block);
                        used++;
                    }
                }
                h.restoreSegment(segmentOffset, c, blockBits, used);
                marked.addAndGet(used);
            }
        }
        finishRebuild();
        if (marked.get() != usedBlocks) {
            throw new IllegalStateException("a close record of " + usedBlocks + " blocks in use marked " + marked.get());
        }
    }

    /** The blocks of runs of segments that start in one segment, of class {@code valueClass}. */
    private void restoreRun(long[] usedBits, int firstWord, int words, long segmentOffset, int valueClass) {
        for (int w = 0; w < words; w++) {
            for (long x = usedBits[firstWord + w]; x != 0; x &= x - 1) {
                long offset = segmentOffset + (long) ((w << 6) + Long.numberOfTrailingZeros(x)) * UNIT;
                if (!isBlock(offset, valueClass) || !markUsed(offset, valueClass)) {
                    throw restoreRefused(offset);
                }
            }
        }
    }

    private static IllegalStateException restoreRefused(long offset) {
        return new IllegalStateException("the close record marks a block at pool offset " + offset
                + " in a segment it names no class for, or no block of its segment's class, or marked twice");
    }

    // ------------------------------------------------------------------ one bitmap of the full class

    /**
     * Every segment, in order of offsets, as one chunk of {@link #fullClass}'s blocks (the free ones
     * given to it first): the GPU's bitmap over them numbers segment i's blocks from i times the blocks
     * a segment holds (docs/lab/2026-11-29-format-3-plan.md, "Step 3's GPU half").
     *
     * @throws IllegalStateException where a segment holds another class (a shorter value), or the
     *                               pool's values take runs of segments
     */
    @Override
    public TableKernels.HeapLayout oneSizeLayout() {
        requireSharedSegments();
        heap.giveFreeSegmentsTo(fullClass);
        long[] offsets = segmentOffsets();
        long[] lengths = new long[offsets.length];
        long[] first = new long[offsets.length];
        int block = ValueClasses.blockBytes(fullClass);
        for (int i = 0; i < offsets.length; i++) {
            lengths[i] = (long) fullPerSegment * block;
            first[i] = (long) i * fullPerSegment;
        }
        long blocks = (long) offsets.length * fullPerSegment;
        return new TableKernels.HeapLayout(offsets, lengths, first, block, (int) ((blocks + 63) >>> 6));
    }

    @Override
    public long[] oneSizeUsedBits() {
        long[] offsets = segmentOffsets();
        long blocks = (long) offsets.length * fullPerSegment;
        long[] bits = new long[(int) ((blocks + 63) >>> 6)];
        HeapContents h = heap.contents();
        for (int i = 0; i < offsets.length; i++) {
            h.copyUsedBits(offsets[i], fullClass, bits, (long) i * fullPerSegment);
        }
        if ((blocks & 63) != 0) {
            bits[bits.length - 1] |= -1L << (blocks & 63);
        }
        return bits;
    }

    /** A segment with no block marked goes back to the free segments; bits past the last block are ignored. */
    @Override
    public void restoreOneSize(long[] usedBits) {
        requireSharedSegments();
        startRebuild();
        long[] offsets = segmentOffsets();
        long[] blockBits = new long[(fullPerSegment + 63) >>> 6];
        SizeClassHeap h = heap;
        for (int i = 0; i < offsets.length; i++) {
            Arrays.fill(blockBits, 0);
            int used = 0;
            long at = (long) i * fullPerSegment;
            for (int j = 0; j < fullPerSegment; j++) {
                long n = at + j;
                if ((usedBits[(int) (n >>> 6)] & (1L << n)) != 0) {
                    blockBits[j >>> 6] |= 1L << j;
                    used++;
                }
            }
            if (used > 0) {
                h.restoreSegment(offsets[i], fullClass, blockBits, used);
                marked.addAndGet(used);
            }
        }
    }

    /** The one bitmap numbers blocks that share segments: refused where the pool's values take runs of them. */
    private void requireSharedSegments() {
        if (fullPerSegment == 0) {
            throw new IllegalStateException("values of class " + fullClass + " take runs of segments");
        }
    }

    @Override
    public TableKernels.HeapSegments segments() {
        return new TableKernels.HeapSegments(segmentOffsets(), segmentClasses(), usedBits(), fullClass, regionRoom());
    }

    /** For each segment, in order of offsets: the segments from it to its region's end (a run of segments stays in one region). */
    private int[] regionRoom() {
        Regions r = regions;
        int[] out = new int[segmentOffsets().length];
        int k = 0;
        for (int i = 0; i < r.offset.length; i++) {
            long n = r.bytes[i] / SEGMENT;
            for (long s = 0; s < n; s++) {
                out[k++] = (int) (n - s);
            }
        }
        return out;
    }

    /** Every segment's offset, in order of offsets. */
    private long[] segmentOffsets() {
        Regions r = regions;
        long n = 0;
        for (long b : r.bytes) {
            n += b / SEGMENT;
        }
        long[] out = new long[(int) n];
        int k = 0;
        for (int i = 0; i < r.offset.length; i++) {
            for (long s = 0; s < r.bytes[i] / SEGMENT; s++) {
                out[k++] = r.offset[i] + s * SEGMENT;
            }
        }
        return out;
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
        marked.set(0);
    }

    @Override
    public boolean markUsed(long offset, int valueClass) {
        if (!heap.markUsedIfFree(offset, valueClass)) {
            return false;
        }
        marked.incrementAndGet();
        return true;
    }

    @Override
    public void finishRebuild() {
        // The free segments are those no mark touched: nothing to count.
    }

    @Override
    public long regionBytes(long bytes, long blocks) {
        long segments = fullPerSegment > 0 ? (blocks + fullPerSegment - 1) / fullPerSegment
                : Math.multiplyExact(blocks, (long) fullSegments);
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

    /** {@return the blocks of the largest class the regions' segments hold} (a run of segments never crosses a region) */
    @Override
    public long totalBlocks() {
        if (fullPerSegment > 0) {
            return (long) heap.segmentCount() * fullPerSegment;
        }
        long blocks = 0;
        for (long b : regions.bytes) {
            blocks += b / SEGMENT / fullSegments;
        }
        return blocks;
    }

    /**
     * {@return the blocks of the largest class the free segments hold} (room in segments a class holds
     * is that class's alone); for a class of runs of segments, the runs the free segments make apart
     * (a count under the heap's lock: for growth and figures, not hot paths)
     */
    @Override
    public long freeBlocks() {
        return fullPerSegment > 0 ? heap.freeSegmentCount() * fullPerSegment : heap.freeRuns(fullSegments);
    }

    @Override
    public long usedBlocks() {
        return heap.usedBlocks();
    }

    /** {@return the bytes of the segments classes hold now: what the heap takes of the pool for its blocks in use} */
    public long heldBytes() {
        return heap.heldBytes();
    }

    /** {@return the bytes of the blocks in use, headers included} (diagnostics: a sum over the segments) */
    public long usedBlockBytes() {
        return heap.usedBlockBytes();
    }
}
