package org.gphash.table;

import static org.gphash.table.HeapSegments.notABlock;

import java.util.BitSet;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

import org.gphash.format.ValueClasses;

/**
 * Free-space accounting for format 3's value heap of size classes (issue 53, step 2's allocator;
 * docs/lab/2026-11-29-format-3-plan.md): the heap's regions are cut into segments of
 * {@link #SEGMENT_BYTES}; a segment holds blocks of one class ({@link ValueClasses}) while any of them
 * is in use and goes back to the pool of free segments when its last block is freed, so that a class
 * that shrank gives its space to one that grew. A block larger than {@link #SMALL_BLOCK_MAX} takes a
 * run of whole segments of its own.
 *
 * <p>As with {@link ValueHeap}, nothing here is persisted: a block is in use exactly when a published
 * slot's meta word names it (format 3's word names its class too), and recovery rebuilds this state
 * from the slots ({@link #markUsed}).
 *
 * <p><b>Threads.</b> A thread takes blocks of a class from a segment it keeps for that class, lock-free:
 * it reserves one of the segment's blocks on the segment's count of blocks in use, then claims the
 * lowest free bit of the segment's bitmap with a CAS, as format 2's heap claims its blocks; a free clears
 * the bit and gives the reservation back. The lock guards only what moves segments: giving one to a class
 * (the lowest with room, else a free one), and taking back one whose last block was freed, which happens
 * only if no reservation is in it (the count goes from 0 to {@link #RETIRED} in one CAS; a reservation
 * that finds it retired, full or of another class gives itself back, and takes the segment back if it
 * was the last). A thread that needs a segment takes the lowest with room that no other thread takes
 * from, else (a class of fewer than {@link #SHARED_BELOW} segments) the lowest with room, else a free
 * one, else the lowest with room: two threads in one segment contended on its count and bitmap words,
 * while threads kept apart in a class of a few segments held one partly filled each. With one lock
 * for everything, the heap's pairs of a block taken and one freed fell 4-6x at the second thread,
 * where format 2's lost a seventh (`HeapBench`, docs/lab/2026-11-29-format-3-plan.md); a lock per
 * class would not have helped a fixed-size pool, whose blocks are all of one class. Regions are added
 * ({@link #addRegion}) only while no other method runs.
 *
 * <p>This class holds the moves (the lock, the free segments, the takes and frees); {@link HeapSegments}
 * holds the segments' state between two growths, where an offset falls, and the room hints a thread
 * searches; {@link SegmentTakers} each thread's segment per class, and the threads that have ended.
 */
public final class SizeClassHeap {

    /** Bytes of a segment. */
    public static final int SEGMENT_BYTES = HeapSegments.SEGMENT_BYTES;
    /** The largest block kept in shared segments (at least eight to a segment); larger ones take whole segments. */
    public static final int SMALL_BLOCK_MAX = SEGMENT_BYTES / 8;
    private static final int FREE = HeapSegments.FREE;
    private static final int RUN_TAIL = HeapSegments.RUN_TAIL;
    private static final int RETIRED = HeapSegments.RETIRED;

    /** The segments, their addressing and room hints: replaced whole by {@link #addRegion}. */
    private volatile HeapSegments seg = HeapSegments.EMPTY;
    /** Guards the segments' moves: {@link #freeSegments}, owners, runs, and the search of the room hints. */
    private final Object lock = new Object();
    /** Free segments (under {@link #lock}). */
    private final BitSet freeSegments = new BitSet();
    /** Each thread's segment per class, and the threads that have them. */
    private final SegmentTakers takers = new SegmentTakers();
    /** Segments held by classes (not free): what the heap takes of the pool. */
    private final AtomicLong heldSegments = new AtomicLong();
    /** Segments each class of blocks of at most {@link #SMALL_BLOCK_MAX} holds (under {@link #lock}). */
    private final int[] classSegments = new int[ValueClasses.COUNT];
    /**
     * A class that holds fewer segments than this (4 MiB) gives a thread that needs one a segment with
     * room that another thread takes from, before a free one: kept apart, every thread held a segment
     * partly filled of each class it wrote, and 16 threads writing values of some 45 classes held 1.46x
     * the live bytes of 400,000 values (53 MB) after the load, 1.18x shared (`ValueLengthsBench 400000
     * 10 16 mixed`, 16 cores; {@code SizeClassHeapTest}'s sixteen threads: 1.31x at worst kept apart,
     * 1.20x shared). A larger class keeps threads apart, as before: there a thread's partly filled
     * segment is at most a sixty-fourth of the class, and two threads in one segment contend on its
     * count and bitmap words at every take (the class comment).
     */
    static final int SHARED_BELOW = 64;

    /**
     * Adds a region of the pool to the heap: {@code bytes} (a multiple of {@link #SEGMENT_BYTES}) from
     * pool offset {@code offset} (a multiple of 16), all free. Only while no other method runs.
     */
    public void addRegion(long offset, long bytes) {
        synchronized (lock) {
            HeapSegments g = seg;
            HeapSegments grown = g.withRegion(offset, bytes);
            freeSegments.set(g.count, grown.count);
            seg = grown;
        }
    }

    /**
     * Takes a free block of class {@code valueClass}.
     *
     * @return its pool offset, or -1 when the heap has no room for it (the caller adds a region and tries again)
     */
    public long allocate(int valueClass) {
        return allocate(valueClass, 0);
    }

    /**
     * Takes a free block of class {@code valueClass}, giving the class a free segment only where more
     * than {@code keepSegments} are free (blocks in segments the class holds already are taken
     * regardless): a new item leaves room for updates, as format 2's heap keeps blocks for them.
     *
     * @return its pool offset, or -1 when the heap has no room for it (the caller adds a region and tries again)
     */
    public long allocate(int valueClass, int keepSegments) {
        int block = ValueClasses.blockBytes(valueClass);
        if (block > SMALL_BLOCK_MAX) {
            synchronized (lock) {
                return allocateRun(seg, valueClass, block, keepSegments);
            }
        }
        HeapSegments g = seg;
        int perSegment = SEGMENT_BYTES / block;
        int[] mine = takers.mine();
        int s = mine[valueClass];
        if (s >= 0 && s < g.count) {
            long offset = claimIn(g, s, valueClass, block, perSegment);
            if (offset >= 0) {
                return offset;
            }
        }
        // Another segment of the class with room, found and claimed without the lock (a claim is a
        // reservation on the segment's count, which a segment taken back meanwhile refuses), from the
        // one after this thread's on, reading the hints only: under updates the holes are a block or
        // two in each of many segments, so a thread moves at almost every take, and under the lock,
        // with a search of the hints from the first segment that wrote them at every step, 16 threads
        // queued for it (bench ycsb's A from 16 threads: the takes 30% of its samples, the lock's waits
        // 1.7 s over 5 s; docs/lab/2026-11-30-values-of-any-length-around-the-engine.md).
        for (int tries = 0, from = s; tries < UNLOCKED_TRIES; tries++) {
            int t = g.nextWithRoom(valueClass, perSegment, from);
            if (t < 0) {
                break;
            }
            long offset = claimIn(g, t, valueClass, block, perSegment);
            if (offset >= 0) {
                g.hold(mine, valueClass, t);
                return offset;
            }
            from = t;
        }
        synchronized (lock) {
            takers.forgetEnded(g);
            for (;;) {
                // A segment no other thread takes from first: threads that shared one contended on its
                // count and bitmap words (HeapBench, two threads at one size); a small class's shared
                // rather than a free one (SHARED_BELOW).
                s = g.segmentWithRoom(valueClass, perSegment, true);
                if (s < 0 && classSegments[valueClass] < SHARED_BELOW) {
                    s = g.segmentWithRoom(valueClass, perSegment, false);
                }
                if (s < 0) {
                    s = freeSegmentCount(g) > keepSegments ? freeSegments.nextSetBit(0) : -1;
                    if (s >= 0) {
                        assignSegment(g, s, valueClass, block);
                    } else if ((s = g.segmentWithRoom(valueClass, perSegment, false)) < 0) {
                        return -1;
                    }
                }
                g.hold(mine, valueClass, s);
                long offset = claimIn(g, s, valueClass, block, perSegment);
                if (offset >= 0) {
                    return offset;
                }
            }
        }
    }

    /** Segments of a class tried without the lock before a thread takes it to find or give one. */
    private static final int UNLOCKED_TRIES = 4;

    /**
     * A block of segment {@code s} for {@code valueClass}: one reserved on the segment's count, then the
     * lowest free bit claimed; -1, nothing taken, when the segment is full, free or another class's.
     */
    private long claimIn(HeapSegments g, int s, int valueClass, int block, int perSegment) {
        int u = g.used.incrementAndGet(s);
        int owner = g.owner.get(s);
        if (u <= 0 || u > perSegment || owner != valueClass) {
            // Given back; if it was the last in a segment whose last block was freed meanwhile (whose
            // take-back this reservation defeated), the segment goes back now.
            if (g.used.decrementAndGet(s) == 0 && owner >= 0) {
                takeBackIfEmpty(g, s, owner);
            }
            return -1;
        }
        // The reservation holds a free bit for this thread, and the segment cannot be taken back meanwhile.
        AtomicLongArray b = g.bits.get(s);
        for (int w = 0; ; w = w + 1 == b.length() ? 0 : w + 1) {
            long x = b.get(w);
            while (x != -1L) {
                long bit = Long.lowestOneBit(~x);
                if (b.compareAndSet(w, x, x | bit)) {
                    return g.offset[s] + (long) ((w << 6) + Long.numberOfTrailingZeros(bit)) * block;
                }
                x = b.get(w);
            }
        }
    }

    /** Under the lock: gives free segment {@code s} to {@code valueClass}, all its blocks free. */
    private void assignSegment(HeapSegments g, int s, int valueClass, int block) {
        int perSegment = SEGMENT_BYTES / block;
        AtomicLongArray b = new AtomicLongArray((perSegment + 63) >>> 6);
        for (int i = perSegment; i < b.length() * 64; i++) {
            b.set(i >>> 6, b.get(i >>> 6) | (1L << i));  // past the last block: never free
        }
        freeSegments.clear(s);
        g.bits.set(s, b);
        g.owner.set(s, valueClass);
        g.reopen(s, 0);
        heldSegments.incrementAndGet();
        classSegments[valueClass]++;
        g.setHint(valueClass, s);
    }

    /** Under the lock: gives the free segments {@code s..s+k} to one large block of {@code valueClass}, in use. */
    private void claimRun(HeapSegments g, int s, int k, int valueClass, int block) {
        freeSegments.clear(s, s + k);
        g.owner.set(s, valueClass);
        g.reopen(s, 1);
        for (int t = s + 1; t < s + k; t++) {
            g.owner.set(t, RUN_TAIL);
        }
        heldSegments.addAndGet(k);
    }

    /** Under the lock: a large block, the lowest run of free segments, in one region, that holds it. */
    private long allocateRun(HeapSegments g, int valueClass, int block, int keepSegments) {
        int k = (block + SEGMENT_BYTES - 1) / SEGMENT_BYTES;
        if (freeSegmentCount(g) - k < keepSegments) {
            return -1;
        }
        for (int s = freeSegments.nextSetBit(0); s >= 0 && s + k <= g.count; s = freeSegments.nextSetBit(s + 1)) {
            int end = freeSegments.nextClearBit(s);
            if (end - s >= k && g.region[s + k - 1] == g.region[s]) {
                claimRun(g, s, k, valueClass, block);
                return g.offset[s];
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
    public void free(long offset, int valueClass) {
        int block = ValueClasses.blockBytes(valueClass);
        HeapSegments g = seg;
        int s = g.segmentOf(offset);
        if (block > SMALL_BLOCK_MAX) {
            synchronized (lock) {
                freeRun(g, s, offset, valueClass, block);
            }
            return;
        }
        // The block is in use, so its segment is held by its class and stays so until the free below.
        int i = g.blockIndex(s, offset, valueClass, block);
        AtomicLongArray b = g.bits.get(s);
        long bit = 1L << i;
        long x;
        do {
            x = b.get(i >>> 6);
            if ((x & bit) == 0) {
                throw notABlock(offset, valueClass);
            }
        } while (!b.compareAndSet(i >>> 6, x, x & ~bit));
        if (g.used.decrementAndGet(s) == 0) {
            takeBackIfEmpty(g, s, valueClass);
        } else {
            g.setHint(valueClass, s);
        }
    }

    /**
     * Frees the block at {@code offset}, of the class its segment holds now (a block in use keeps its
     * segment its class's): for callers that kept the offset alone, as the table's reclamation does.
     *
     * @throws IllegalArgumentException if no block in use starts there
     */
    public void free(long offset) {
        HeapSegments g = seg;
        int owner = g.owner.get(g.segmentOf(offset));
        if (owner < 0) {
            throw new IllegalArgumentException("pool offset " + offset + " is no block in use: its segment holds no class");
        }
        free(offset, owner);
    }

    /**
     * Whether a block of class {@code valueClass} could start at {@code offset}, in use or not: inside a
     * region, on a block's boundary in its segment (blocks that share segments), or on a segment whose
     * run of the class's length stays in its region (larger blocks).
     */
    public boolean isBlock(long offset, int valueClass) {
        if (valueClass < 0 || valueClass >= ValueClasses.COUNT) {
            return false;
        }
        HeapSegments g = seg;
        int s = g.segmentAt(offset);
        if (s < 0) {
            return false;
        }
        int block = ValueClasses.blockBytes(valueClass);
        long within = offset - g.offset[s];
        if (block <= SMALL_BLOCK_MAX) {
            return within % block == 0 && within / block < SEGMENT_BYTES / block;
        }
        int k = (block + SEGMENT_BYTES - 1) / SEGMENT_BYTES;
        return within == 0 && s + k <= g.count && g.region[s + k - 1] == g.region[s];
    }

    /**
     * Whether {@link #allocate(int, int)} of {@code valueClass} with {@code keepSegments} would find a
     * block now: a segment of the class with room, or free segments enough (a run, for a large block).
     * A growth asks it first, so that it adds a region only where the take that sent it still fails.
     */
    public boolean canTake(int valueClass, int keepSegments) {
        int block = ValueClasses.blockBytes(valueClass);
        synchronized (lock) {
            HeapSegments g = seg;
            if (block > SMALL_BLOCK_MAX) {
                int k = (block + SEGMENT_BYTES - 1) / SEGMENT_BYTES;
                if (freeSegmentCount(g) - k < keepSegments) {
                    return false;
                }
                for (int s = freeSegments.nextSetBit(0); s >= 0 && s + k <= g.count; s = freeSegments.nextSetBit(s + 1)) {
                    if (freeSegments.nextClearBit(s) - s >= k && g.region[s + k - 1] == g.region[s]) {
                        return true;
                    }
                }
                return false;
            }
            return g.segmentWithRoom(valueClass, SEGMENT_BYTES / block, false) >= 0 || freeSegmentCount(g) > keepSegments;
        }
    }

    /** {@return how many runs of {@code k} free segments, each inside one region, the free segments hold apart} */
    public long freeRuns(int k) {
        synchronized (lock) {
            HeapSegments g = seg;
            long runs = 0;
            for (int s = freeSegments.nextSetBit(0); s >= 0 && s < g.count; ) {
                int end = freeSegments.nextClearBit(s);
                int from = s;
                for (int t = s + 1; t <= end; t++) {  // a run of free segments, cut where a region ends
                    if (t == end || g.region[t] != g.region[from]) {
                        runs += (t - from) / k;
                        from = t;
                    }
                }
                s = end >= g.count ? -1 : freeSegments.nextSetBit(end);
            }
            return runs;
        }
    }

    /** {@return the segments no class holds} */
    public long freeSegmentCount() {
        return freeSegmentCount(seg);
    }

    private long freeSegmentCount(HeapSegments g) {
        return g.count - heldSegments.get();
    }

    /** {@return the segments of all regions} */
    public int segmentCount() {
        return seg.count;
    }

    /**
     * Segment {@code s} had its last block freed: back to the pool, unless a reservation came in
     * first (then it stays its class's, with room).
     */
    private void takeBackIfEmpty(HeapSegments g, int s, int valueClass) {
        synchronized (lock) {
            if (g.owner.get(s) == valueClass && g.used.compareAndSet(s, 0, RETIRED)) {
                g.owner.set(s, FREE);
                g.bits.set(s, null);
                g.clearHint(valueClass, s);
                freeSegments.set(s);
                heldSegments.decrementAndGet();
                classSegments[valueClass]--;
            } else {
                g.setHint(valueClass, s);
            }
        }
    }

    /** Under the lock: frees a large block's run. */
    private void freeRun(HeapSegments g, int s, long offset, int valueClass, int block) {
        if (g.owner.get(s) != valueClass || g.used.get(s) <= 0 || g.offset[s] != offset) {
            throw notABlock(offset, valueClass);
        }
        int k = (block + SEGMENT_BYTES - 1) / SEGMENT_BYTES;
        g.retire(s, 1);
        for (int t = s; t < s + k; t++) {
            g.owner.set(t, FREE);
        }
        freeSegments.set(s, s + k);
        heldSegments.addAndGet(-k);
    }

    /**
     * Recovery's rebuild: marks the block of {@code valueClass} at {@code offset}, which a published
     * slot names, in use (on a heap whose regions are all free when the rebuild starts). Operations
     * must not run meanwhile.
     *
     * @throws IllegalArgumentException if the offset is no block of that class, or two slots name it
     */
    public void markUsed(long offset, int valueClass) {
        if (!markUsedIfFree(offset, valueClass)) {
            throw notABlock(offset, valueClass);
        }
    }

    /**
     * {@link #markUsed}, answering false where the block is in use already (a second slot names it:
     * recovery clears that slot) rather than throwing.
     *
     * @throws IllegalArgumentException if the offset is no block of that class
     */
    public boolean markUsedIfFree(long offset, int valueClass) {
        int block = ValueClasses.blockBytes(valueClass);
        synchronized (lock) {
            HeapSegments g = seg;
            int s = g.segmentOf(offset);
            if (block > SMALL_BLOCK_MAX) {
                int k = (block + SEGMENT_BYTES - 1) / SEGMENT_BYTES;
                if (g.offset[s] != offset || s + k > g.count || g.region[s + k - 1] != g.region[s]) {
                    throw notABlock(offset, valueClass);
                }
                if (freeSegments.nextClearBit(s) < s + k) {
                    return false;
                }
                claimRun(g, s, k, valueClass, block);
                return true;
            }
            if (g.owner.get(s) == FREE) {
                assignSegment(g, s, valueClass, block);
            }
            int i = g.blockIndex(s, offset, valueClass, block);
            AtomicLongArray b = g.bits.get(s);
            long x = b.get(i >>> 6);
            if ((x & (1L << i)) != 0) {
                return false;
            }
            b.set(i >>> 6, x | (1L << i));
            if (g.used.incrementAndGet(s) == SEGMENT_BYTES / block) {
                g.clearHint(valueClass, s);
            }
            return true;
        }
    }

    /**
     * The open after a clean close ({@link SegmentHeap#restore}): the free segment at {@code offset}
     * given to {@code valueClass} (blocks of at most {@link #SMALL_BLOCK_MAX}) with the blocks
     * {@code blockBits} marks in use, {@code used} of them, under one take of the lock rather than one a
     * block. Operations must not run meanwhile.
     *
     * @throws IllegalArgumentException if no free segment starts there, or the class's blocks take runs
     */
    public void restoreSegment(long offset, int valueClass, long[] blockBits, int used) {
        int block = ValueClasses.blockBytes(valueClass);
        int perSegment = SEGMENT_BYTES / block;
        if (block > SMALL_BLOCK_MAX || used < 1 || used > perSegment) {
            throw new IllegalArgumentException(used + " blocks of class " + valueClass + " restored in one segment");
        }
        synchronized (lock) {
            HeapSegments g = seg;
            int s = g.segmentOf(offset);
            if (g.offset[s] != offset || g.owner.get(s) != FREE) {
                throw new IllegalArgumentException("pool offset " + offset + " starts no free segment of the value heap");
            }
            assignSegment(g, s, valueClass, block);
            AtomicLongArray b = g.bits.get(s);
            for (int w = 0; w < b.length() && w < blockBits.length; w++) {
                b.set(w, b.get(w) | blockBits[w]);
            }
            g.used.set(s, used);
            if (used == perSegment) {
                g.clearHint(valueClass, s);
            }
        }
    }

    /**
     * Gives every free segment to {@code valueClass} (blocks of at most {@link #SMALL_BLOCK_MAX}), so
     * that every segment holds that class: for an engine that keeps one bitmap of that class's blocks
     * over all segments while it runs ({@link SegmentHeap#oneSizeLayout}). Operations drained.
     *
     * @throws IllegalStateException naming a segment another class holds
     */
    public void giveFreeSegmentsTo(int valueClass) {
        int block = ValueClasses.blockBytes(valueClass);
        if (block > SMALL_BLOCK_MAX) {
            throw new IllegalArgumentException("value class " + valueClass + " takes runs of segments");
        }
        synchronized (lock) {
            HeapSegments g = seg;
            int other = g.otherClassSegment(valueClass);
            if (other >= 0) {
                throw new IllegalStateException("the value heap's segment at pool offset " + g.offset[other]
                        + " holds blocks of value class " + g.owner.get(other) + ", not only " + valueClass);
            }
            for (int s = freeSegments.nextSetBit(0); s >= 0 && s < g.count; s = freeSegments.nextSetBit(s + 1)) {
                assignSegment(g, s, valueClass, block);
            }
        }
    }

    /** {@return the bytes of the segments classes hold: what the heap takes of the pool now} */
    public long heldBytes() {
        return heldSegments.get() * SEGMENT_BYTES;
    }

    /**
     * {@return what the heap holds now, read segment by segment} For the close record's copy and for
     * counts: exact while no take or free runs.
     */
    HeapContents contents() {
        return new HeapContents(seg);
    }

    /** {@return the blocks in use, every class} Exact while no take or free runs. */
    public long usedBlocks() {
        return contents().usedBlocks();
    }

    /** {@return the bytes of the blocks in use, headers included} Exact while no take or free runs ({@link HeapContents#usedBlockBytes}). */
    public long usedBlockBytes() {
        return contents().usedBlockBytes();
    }

    /** {@return the bytes of all regions} */
    public long totalBytes() {
        return (long) seg.count * SEGMENT_BYTES;
    }
}
