package org.gphash.table;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

import org.gphash.Geometry;
import org.gphash.error.PoolFormatException;
import org.gphash.format.CloseRecord;
import org.gphash.format.HeapChunk;

/**
 * Free-space accounting for the value heap: fixed-size blocks in one or more chunks of the pool
 * file, tracked by a volatile bitmap (1 = in use).
 *
 * <p>Nothing here is persisted. Whether a block is in use is defined by the pool itself: a block is
 * in use exactly when a published slot refers to it. Recovery rebuilds this bitmap from a scan of
 * the slots, so a crash at any point (a value written but never published, an old value swapped
 * out but not yet freed) can leak nothing across a restart.
 *
 * <p>Allocation first reserves one unit of the free count (so a free bit is known to exist), then
 * claims a zero bit with CAS, starting from a per-thread cursor so threads do not fight over one
 * word. Lock-free.
 */
public final class ValueHeap implements PoolHeap {

    /** The chunks and bitmap in force; replaced (only while operations are drained) on growth. */
    /** {@code low} and {@code high}: the first byte of the lowest block and the last byte of the highest. */
    private record Layout(HeapChunk[] chunks, long[] firstBlock, long totalBlocks, AtomicLongArray bitmap, long low,
                          long high) {
        Layout(HeapChunk[] chunks, long[] firstBlock, long totalBlocks, AtomicLongArray bitmap) {
            this(chunks, firstBlock, totalBlocks, bitmap, chunks.length == 0 ? 1 : chunks[0].offset(),
                    chunks.length == 0 ? 0 : chunks[chunks.length - 1].offset() + chunks[chunks.length - 1].length() - 1);
        }
    }

    private final int stride;
    private volatile Layout layout;
    public final AtomicLong freeBlocks = new AtomicLong();
    /** No word below this one has a free block: where batch allocation starts looking (lowest first). */
    private final AtomicInteger lowestFreeWord = new AtomicInteger();
    private final ThreadLocal<long[]> cursor = ThreadLocal.withInitial(
            () -> new long[] {(Thread.currentThread().threadId() * 0x9E3779B97F4A7C15L) >>> 1});

    /** The pool, for errors (null for a tool's view). */
    private final Path path;

    ValueHeap(int stride, List<HeapChunk> chunks) {
        this(stride, chunks, null);
    }

    /**
     * A heap of blocks of {@code stride} bytes over {@code chunks}, all free, apart from any pool
     * (benchmarks of the allocator: {@code org.gphash.bench.HeapBench}); the engines' heaps come with
     * their pools.
     */
    public static ValueHeap detached(int stride, List<HeapChunk> chunks) {
        ValueHeap heap = new ValueHeap(stride, chunks);
        heap.finishRebuild();  // every block free, counted
        return heap;
    }

    ValueHeap(int stride, List<HeapChunk> chunks, Path path) {
        this.stride = stride;
        this.path = path;
        this.layout = buildLayout(chunks, null);
    }

    /**
     * The error for a value offset that is no block, or a block freed twice: an item's meta word was
     * changed behind the engine's back (operations check offsets before they use them, so this is the
     * last line). The block is not freed, so it is never handed out twice.
     */
    private RuntimeException damaged(String what) {
        return new PoolFormatException(PoolFormatException.Reason.CORRUPT,
                path == null ? Path.of("(pool)") : path, what + ": an item's meta word was changed by "
                + "something other than the engine; the pool must not be used further: close it and run `gphash check`");
    }

    private Layout buildLayout(List<HeapChunk> chunks, Layout previous) {
        List<HeapChunk> sorted = new ArrayList<>(chunks);
        sorted.sort(Comparator.comparingLong(HeapChunk::offset));
        HeapChunk[] array = sorted.toArray(HeapChunk[]::new);
        long[] first = new long[array.length + 1];
        for (int i = 0; i < array.length; i++) {
            first[i + 1] = first[i] + array[i].length() / stride;
        }
        long total = first[array.length];
        AtomicLongArray bitmap = new AtomicLongArray((int) Math.max(1, (total + 63) >>> 6));
        // Blocks past the end of the last word are marked used so the scan never hands them out.
        for (long b = total; b < (long) bitmap.length() * 64; b++) {
            bitmap.set((int) (b >>> 6), bitmap.get((int) (b >>> 6)) | (1L << (b & 63)));
        }
        if (previous != null) {
            // Re-map the used bits of the old layout onto the new numbering, chunk by chunk.
            for (int c = 0; c < previous.chunks.length; c++) {
                HeapChunk chunk = previous.chunks[c];
                int nc = indexOf(array, chunk);
                for (long b = 0; b < chunk.length() / stride; b++) {
                    if (isSet(previous.bitmap, previous.firstBlock[c] + b)) {
                        set(bitmap, first[nc] + b);
                    }
                }
            }
        }
        return new Layout(array, first, total, bitmap);
    }

    private static int indexOf(HeapChunk[] chunks, HeapChunk chunk) {
        for (int i = 0; i < chunks.length; i++) {
            if (chunks[i].equals(chunk)) {
                return i;
            }
        }
        throw new IllegalStateException("chunk vanished: " + chunk);
    }

    private static boolean isSet(AtomicLongArray bitmap, long block) {
        return (bitmap.get((int) (block >>> 6)) & (1L << (block & 63))) != 0;
    }

    private static void set(AtomicLongArray bitmap, long block) {
        int w = (int) (block >>> 6);
        bitmap.set(w, bitmap.get(w) | (1L << (block & 63)));
    }

    /**
     * Claims a free block and returns its pool offset, or -1 when none is free (the caller grows
     * the heap and tries again).
     */
    public long allocate() {
        return allocate(0);
    }

    /** Format 2 has one block size: the class is ignored ({@link #allocate(long)}). */
    @Override
    public long allocate(int valueClass, long keep) {
        return allocate(keep);
    }

    /** As {@link #allocate()}, leaving {@code keep} blocks free ({@link #UPDATE_RESERVE} for a new item). */
    public long allocate(long keep) {
        long[] one = ONE.get();
        return allocateNear(one, 1, keep) == 1 ? one[0] : -1;
    }

    private static final ThreadLocal<long[]> ONE = ThreadLocal.withInitial(() -> new long[1]);

    /** Format 2 has one block size: the class is ignored ({@link #allocateNear(long[], int, long)}). */
    @Override
    public int allocateNear(long[] out, int n, int valueClass, long keep) {
        return allocateNear(out, n, keep);
    }

    /**
     * Claims up to {@code n} free blocks, leaving {@code keep} free, and writes their offsets to
     * {@code out}; returns how many (0 when no more than {@code keep} are free). They are reserved
     * from the free count with one CAS and taken from the bitmap from this thread's cursor on, all
     * the free ones of a word with one CAS: a thread that takes a block at a time CASes the one
     * shared count for each, which 16 threads' writes contended on (an eighth of the CPU engine's
     * samples in a 16-thread load). The caller gives back what it does not use ({@link #freeAll}).
     */
    public int allocateNear(long[] out, int n, long keep) {
        long f;
        int want;
        do {
            f = freeBlocks.get();
            if (f <= keep) {
                return 0;
            }
            want = (int) Math.min(n, f - keep);
        } while (!freeBlocks.compareAndSet(f, f - want));
        long[] c = cursor.get();
        c[0] = claim(out, 0, want, (int) (c[0] % layout.bitmap.length()), false);
        return want;
    }

    /**
     * Claims {@code want} blocks already reserved from the free count (so that many free bits exist),
     * writing their offsets to {@code out} from {@code at}: the lowest free ones of each word with one
     * CAS, from word {@code w} on, wrapping. With {@code lowestFirst}, a word found full moves the
     * lowest-free-word hint past it. Returns the word it stopped at.
     */
    private int claim(long[] out, int at, int want, int w, boolean lowestFirst) {
        Layout l = layout;
        AtomicLongArray bitmap = l.bitmap;
        int words = bitmap.length();
        int taken = 0;
        while (taken < want) {
            long bits = bitmap.get(w);
            if (bits == -1L) {
                if (lowestFirst && w == lowestFreeWord.get()) {
                    lowestFreeWord.compareAndSet(w, w + 1);
                }
                w = w + 1 == words ? 0 : w + 1;
                continue;
            }
            long take = ~bits;
            while (Long.bitCount(take) > want - taken) {
                take &= ~Long.highestOneBit(take);  // the lowest free blocks of the word, as many as needed
            }
            if (bitmap.compareAndSet(w, bits, bits | take)) {
                long base = (long) w << 6;
                for (long t = take; t != 0; t &= t - 1) {
                    out[at + taken++] = offsetOf(l, base + Long.numberOfTrailingZeros(t));
                }
            }
        }
        return w;
    }

    /** Returns a block to the free space. Freeing a block that is not in use is a bug and throws. */
    @Override
    public void free(long offset) {
        clearBit(layout, offset);
        freeBlocks.incrementAndGet();
    }

    /**
     * Returns blocks {@code offsets[from, to)} to the free space, counted free with one atomic add:
     * threads that free one block at a time contend on the count. Freeing a block that is not in use
     * is a bug and throws; the blocks before it are free by then.
     */
    @Override
    public void freeAll(long[] offsets, int from, int to) {
        Layout l = layout;
        int i = from;
        try {
            for (; i < to; i++) {
                clearBit(l, offsets[i]);
            }
        } finally {
            // A bit is cleared before its block is counted: a reservation never outruns the free bits.
            if (i > from) {
                freeBlocks.addAndGet(i - from);
            }
        }
    }

    private void clearBit(Layout l, long offset) {
        long block = blockOf(l, offset);
        if (block < 0) {
            throw damaged("value offset " + offset + " is not a block of the heap");
        }
        int w = (int) (block >>> 6);
        long bit = 1L << (block & 63);
        long bits;
        do {
            bits = l.bitmap.get(w);
            if ((bits & bit) == 0) {
                throw damaged("value block at " + offset + " freed twice (two items referred to it)");
            }
        } while (!l.bitmap.compareAndSet(w, bits, bits & ~bit));
        // Read first: a write to this one shared word on every free contended between threads.
        int lowest;
        while (w < (lowest = lowestFreeWord.get()) && !lowestFreeWord.compareAndSet(lowest, w)) {
            Thread.onSpinWait();
        }
    }

    /**
     * Whether a value read at {@code offset} lies inside the heap's extent (the cheap bound check
     * operations make before they read a value; {@link #free} checks the exact block).
     */
    @Override
    public boolean spans(long offset, int valueBytes) {
        Layout l = layout;
        return offset >= l.low && offset + valueBytes - 1 <= l.high;
    }

    /** Whether {@code offset} is the start of a block of this heap. */
    @Override
    public boolean isBlock(long offset, int valueClass) {
        return isBlock(offset);
    }

    /** Whether {@code offset} is the start of a block of this heap. */
    public boolean isBlock(long offset) {
        return blockOf(layout, offset) >= 0;
    }

    /**
     * Recovery: marks the block at {@code offset} used. Returns false if it already was (two slots
     * refer to it). Thread-safe, so recovery can scan in parallel; call {@link #finishRebuild()}
     * once every mark is made.
     */
    @Override
    public boolean markUsed(long offset, int valueClass) {
        return markUsed(offset);
    }

    /** {@link #markUsed(long, int)} of the one block size. */
    public boolean markUsed(long offset) {
        Layout l = layout;
        long block = blockOf(l, offset);
        int w = (int) (block >>> 6);
        long bit = 1L << (block & 63);
        long bits;
        do {
            bits = l.bitmap.get(w);
            if ((bits & bit) != 0) {
                return false;
            }
        } while (!l.bitmap.compareAndSet(w, bits, bits | bit));
        return true;
    }

    /** Recovery: clears all marks before a rebuild. */
    @Override
    public void startRebuild() {
        layout = buildLayout(List.of(layout.chunks), null);
        lowestFreeWord.set(0);
        freeBlocks.set(0);
    }

    @Override
    public TableKernels.HeapLayout oneSizeLayout() {
        return exportLayout();
    }

    @Override
    public long[] oneSizeUsedBits() {
        return usedBits();
    }

    @Override
    public void restoreOneSize(long[] usedBits) {
        startRebuild();
        markUsedBits(usedBits);
        finishRebuild();
    }

    /** The block numbering of the current layout, for a rebuild that marks blocks elsewhere (a GPU). */
    TableKernels.HeapLayout exportLayout() {
        Layout l = layout;
        long[] offsets = new long[l.chunks.length];
        long[] lengths = new long[l.chunks.length];
        for (int i = 0; i < l.chunks.length; i++) {
            offsets[i] = l.chunks[i].offset();
            lengths[i] = l.chunks[i].length();
        }
        return new TableKernels.HeapLayout(offsets, lengths, Arrays.copyOf(l.firstBlock, l.chunks.length),
                stride, l.bitmap.length());
    }

    /** Marks the blocks set in {@code usedBits} (numbered as {@link #exportLayout()} said) as in use. */
    public void markUsedBits(long[] usedBits) {
        AtomicLongArray bitmap = layout.bitmap;
        if (usedBits.length != bitmap.length()) {
            throw new IllegalArgumentException("bitmap of " + usedBits.length + " words for a heap of " + bitmap.length());
        }
        for (int w = 0; w < usedBits.length; w++) {
            long used = usedBits[w];
            if (used != 0) {
                bitmap.getAndUpdate(w, bits -> bits | used);
            }
        }
    }

    /**
     * Open after a clean close: takes the bitmap the close left ({@link CloseRecord}, numbered as
     * {@link #exportLayout()} says, bits past the last block set) with {@code usedBlocks} blocks in
     * use. No loop of its own: open of a large pool is one pass over the record, in its CRC and count.
     */
    @Override
    public void restore(long[] usedBits, long usedBlocks, byte[] segmentClasses) {
        restore(usedBits, usedBlocks);
    }

    /** Format 2 has no segments: no classes to record. */
    @Override
    public byte[] segmentClasses() {
        return new byte[0];
    }

    /** {@link #restore(long[], long, byte[])}: format 2's bitmap numbers blocks of one size. */
    public void restore(long[] usedBits, long usedBlocks) {
        Layout l = layout;
        if (usedBits.length != l.bitmap.length()) {
            throw new IllegalArgumentException("bitmap of " + usedBits.length + " words for a heap of " + l.bitmap.length());
        }
        layout = new Layout(l.chunks, l.firstBlock, l.totalBlocks, new AtomicLongArray(usedBits));
        lowestFreeWord.set(0);
        freeBlocks.set(l.totalBlocks - usedBlocks);
    }

    @Override
    public int bitmapWords() {
        return layout.bitmap.length();
    }

    /** A copy of the bitmap (1 = in use; bits past the last block set), numbered as {@link #exportLayout()} says. */
    @Override
    public long[] usedBits() {
        AtomicLongArray bitmap = layout.bitmap;
        long[] out = new long[bitmap.length()];
        for (int w = 0; w < out.length; w++) {
            out[w] = bitmap.get(w);
        }
        return out;
    }

    /**
     * Reserves up to {@code n} free blocks into {@code out}, whole bitmap words at a time where it
     * can (a GPU batch needs thousands at once), lowest addresses first so the heap stays compact;
     * returns how many it got.
     */
    public int allocateMany(long[] out, int n) {
        int got = 0;
        while (got < n) {
            long f = freeBlocks.get();
            if (f <= 0) {
                break;
            }
            int want = (int) Math.min(f, n - got);
            if (!freeBlocks.compareAndSet(f, f - want)) {
                continue;
            }
            claim(out, got, want, Math.min(lowestFreeWord.get(), layout.bitmap.length() - 1), true);
            got += want;
        }
        return got;
    }

    /** Recovery: derives the free count from the marks. */
    @Override
    public void finishRebuild() {
        Layout l = layout;
        long used = 0;
        for (int w = 0; w < l.bitmap.length(); w++) {
            used += Long.bitCount(l.bitmap.get(w));
        }
        long padding = (long) l.bitmap.length() * 64 - l.totalBlocks;
        freeBlocks.set(l.totalBlocks - (used - padding));
    }

    /** A heap chunk of the pool's header, all free ({@link #addChunk}). */
    @Override
    public void addRegion(long offset, long bytes) {
        addChunk(new HeapChunk(offset, bytes));
    }

    /** Adds a chunk; only while no operation runs. Its blocks start free. */
    void addChunk(HeapChunk chunk) {
        Layout old = layout;
        List<HeapChunk> chunks = new ArrayList<>(List.of(old.chunks));
        chunks.add(chunk);
        layout = buildLayout(chunks, old);
        lowestFreeWord.set(0);
        freeBlocks.addAndGet(chunk.length() / stride);
    }

    @Override
    public long totalBlocks() {
        return layout.totalBlocks;
    }

    @Override
    public long freeBlocks() {
        return Math.max(0, freeBlocks.get());
    }

    @Override
    public long regionBytes(long bytes, long blocks) {
        return Geometry.alignUp(Math.max(bytes, Math.multiplyExact(blocks, (long) stride)), stride);
    }

    @Override
    public long totalBytes() {
        return layout.totalBlocks * stride;
    }

    private long offsetOf(Layout l, long block) {
        int lo = 0;
        int hi = l.chunks.length - 1;
        while (lo < hi) {
            int mid = (lo + hi + 1) >>> 1;
            if (l.firstBlock[mid] <= block) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        return l.chunks[lo].offset() + (block - l.firstBlock[lo]) * stride;
    }

    /** The block number of {@code offset}, or -1 if it is not the start of a block. */
    private long blockOf(Layout l, long offset) {
        int lo = 0;
        int hi = l.chunks.length - 1;
        if (hi < 0) {
            return -1;
        }
        while (lo < hi) {
            int mid = (lo + hi + 1) >>> 1;
            if (l.chunks[mid].offset() <= offset) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        HeapChunk c = l.chunks[lo];
        long rel = offset - c.offset();
        if (rel < 0 || rel % stride != 0 || rel / stride >= c.length() / stride) {
            return -1;
        }
        return l.firstBlock[lo] + rel / stride;
    }
}
