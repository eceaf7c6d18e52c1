package org.gphash.table;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReferenceArray;

import org.gphash.format.ValueClasses;

/**
 * The segments of a {@link SizeClassHeap} as they are between two growths: each segment's pool offset,
 * region, owner (the class it holds, {@link #FREE}, or {@link #RUN_TAIL}), count of blocks in use (or
 * {@link #RETIRED}), bitmap of blocks in use, the threads that take from it, and per class a room hint
 * per segment; with where a pool offset falls (the regions sorted by offset) and how a thread finds a
 * segment of a class with room. Immutable in its shape: a new region makes a new one
 * ({@link #withRegion}); the atomic arrays' elements change under the heap's rules (its class comment).
 *
 * <p>Segments are numbered in the order their regions were added (a thread keeps a segment's number,
 * so a new region's segments go after the others); the regions are kept sorted by offset with the
 * number of each one's first segment and its count: regions may come in any order of offsets (a
 * resize gives the heap a table level below the first heap chunk), and a free finds its segment by a
 * search over the few regions and a shift, where a search over every segment's offset missed the
 * cache at each step.
 */
final class HeapSegments {

    /** Bytes of a segment. */
    static final int SEGMENT_BYTES = 1 << 16;
    /** log2 of {@link #SEGMENT_BYTES}. */
    static final int SEGMENT_SHIFT = 16;
    /** The owner of a segment no class holds. */
    static final int FREE = -1;
    /** The owner of a segment inside a large block's run, after its first. */
    static final int RUN_TAIL = -2;
    /** The count of a segment no class holds: a reservation that adds one to it stays negative. */
    static final int RETIRED = Integer.MIN_VALUE / 2;

    final long[] offset;
    final int[] region;
    final AtomicIntegerArray owner;
    final AtomicIntegerArray used;
    final AtomicReferenceArray<AtomicLongArray> bits;
    /** Per class, a bit per segment: it may have a free block of the class (set on a free, cleared by the locked search). */
    final AtomicLongArray[] room;
    /** Threads that take from each segment ({@link #hold}): they only steer threads apart. */
    final AtomicIntegerArray holders;
    final int count;
    final int regions;
    final long[] regionStart;
    final int[] regionFirst;
    final int[] regionSegments;

    /** No segments. */
    static final HeapSegments EMPTY = new HeapSegments(new long[0], new int[0], new AtomicIntegerArray(0),
            new AtomicIntegerArray(0), new AtomicReferenceArray<>(0), rooms(0), new AtomicIntegerArray(0), 0, 0,
            new long[0], new int[0], new int[0]);

    private HeapSegments(long[] offset, int[] region, AtomicIntegerArray owner, AtomicIntegerArray used,
                         AtomicReferenceArray<AtomicLongArray> bits, AtomicLongArray[] room, AtomicIntegerArray holders,
                         int count, int regions, long[] regionStart, int[] regionFirst, int[] regionSegments) {
        this.offset = offset;
        this.region = region;
        this.owner = owner;
        this.used = used;
        this.bits = bits;
        this.room = room;
        this.holders = holders;
        this.count = count;
        this.regions = regions;
        this.regionStart = regionStart;
        this.regionFirst = regionFirst;
        this.regionSegments = regionSegments;
    }

    private static AtomicLongArray[] rooms(int segments) {
        AtomicLongArray[] r = new AtomicLongArray[ValueClasses.COUNT];
        for (int c = 0; c < r.length; c++) {
            r[c] = new AtomicLongArray((segments + 63) >>> 6);
        }
        return r;
    }

    // ------------------------------------------------------------------ growth

    /**
     * These segments and those of a new region of {@code bytes} at pool offset {@code offset}, all free
     * (numbered from {@link #count}); the heap's state copied as it is (no take or free runs meanwhile).
     *
     * @throws IllegalArgumentException for a region that is not whole segments on 16 bytes, or overlaps one
     */
    HeapSegments withRegion(long offset, long bytes) {
        if (offset <= 0 || offset % 16 != 0 || bytes <= 0 || bytes % SEGMENT_BYTES != 0) {
            throw new IllegalArgumentException("a heap region of " + bytes + " bytes at " + offset
                    + ": it must start on 16 bytes after the header and hold whole segments of " + SEGMENT_BYTES);
        }
        int at = Arrays.binarySearch(regionStart, offset);
        at = at >= 0 ? at : -at - 1;  // the first region at or after the new one's start
        if (at > 0 && regionStart[at - 1] + (long) regionSegments[at - 1] * SEGMENT_BYTES > offset
                || at < regions && regionStart[at] < offset + bytes) {
            throw new IllegalArgumentException("a heap region of " + bytes + " bytes at " + offset
                    + " overlaps one the heap has");
        }
        int n = (int) (bytes / SEGMENT_BYTES);
        int total = count + n;
        long[] offsets = Arrays.copyOf(this.offset, total);
        int[] regionOf = Arrays.copyOf(this.region, total);
        AtomicIntegerArray owners = new AtomicIntegerArray(total);
        AtomicIntegerArray counts = new AtomicIntegerArray(total);
        AtomicReferenceArray<AtomicLongArray> bitmaps = new AtomicReferenceArray<>(total);
        AtomicLongArray[] rooms = rooms(total);
        AtomicIntegerArray holding = new AtomicIntegerArray(total);
        for (int s = 0; s < total; s++) {
            if (s < count) {
                holding.set(s, holders.get(s));
                owners.set(s, owner.get(s));
                counts.set(s, used.get(s));
                bitmaps.set(s, bits.get(s));
            } else {
                offsets[s] = offset + (long) (s - count) * SEGMENT_BYTES;
                regionOf[s] = regions;
                owners.set(s, FREE);
                counts.set(s, RETIRED);
            }
        }
        for (int c = 0; c < ValueClasses.COUNT; c++) {
            for (int w = 0; w < room[c].length(); w++) {
                rooms[c].set(w, room[c].get(w));
            }
        }
        int r = regions;
        long[] starts = new long[r + 1];
        int[] firsts = new int[r + 1];
        int[] sizes = new int[r + 1];
        System.arraycopy(regionStart, 0, starts, 0, at);
        System.arraycopy(regionFirst, 0, firsts, 0, at);
        System.arraycopy(regionSegments, 0, sizes, 0, at);
        starts[at] = offset;
        firsts[at] = count;
        sizes[at] = n;
        System.arraycopy(regionStart, at, starts, at + 1, r - at);
        System.arraycopy(regionFirst, at, firsts, at + 1, r - at);
        System.arraycopy(regionSegments, at, sizes, at + 1, r - at);
        return new HeapSegments(offsets, regionOf, owners, counts, bitmaps, rooms, holding, total, r + 1, starts, firsts,
                sizes);
    }

    // ------------------------------------------------------------------ where an offset falls

    /** {@return the segment that holds {@code offset}}; throws where no region does. */
    int segmentOf(long offset) {
        int s = segmentAt(offset);
        if (s < 0) {
            throw new IllegalArgumentException("pool offset " + offset + " is in no region of the value heap");
        }
        return s;
    }

    /** The segment that holds {@code offset}, or -1 where no region does. */
    int segmentAt(long offset) {
        int lo = 0;
        int hi = regions - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            long start = regionStart[mid];
            if (offset < start) {
                hi = mid - 1;
            } else if (offset >= start + (long) regionSegments[mid] * SEGMENT_BYTES) {
                lo = mid + 1;
            } else {
                return regionFirst[mid] + (int) ((offset - start) >>> SEGMENT_SHIFT);
            }
        }
        return -1;
    }

    /** The index in segment {@code s} of the block of {@code valueClass} at {@code offset}; throws where there is none. */
    int blockIndex(int s, long offset, int valueClass, int block) {
        long within = offset - this.offset[s];
        if (owner.get(s) != valueClass || within % block != 0 || within / block >= SEGMENT_BYTES / block) {
            throw notABlock(offset, valueClass);
        }
        return (int) (within / block);
    }

    static IllegalArgumentException notABlock(long offset, int valueClass) {
        return new IllegalArgumentException("pool offset " + offset + " is no block of value class " + valueClass
                + " in use: a meta word names a block the heap did not hand out");
    }

    /** The first segment that is neither free nor {@code valueClass}'s (a run of a larger class included), or -1. */
    int otherClassSegment(int valueClass) {
        for (int s = 0; s < count; s++) {
            int o = owner.get(s);
            if (o != FREE && o != valueClass) {
                return s;
            }
        }
        return -1;
    }

    // ------------------------------------------------------------------ segments with room

    /**
     * Makes {@code s} the segment this thread ({@code mine}, its segment per class) takes
     * {@code valueClass}'s blocks from. The holders' counts only steer threads apart; one lost to a
     * growth that copied them meanwhile costs nothing else.
     */
    void hold(int[] mine, int valueClass, int s) {
        int was = mine[valueClass];
        if (was != s) {
            if (was >= 0 && was < count) {
                holders.decrementAndGet(was);
            }
            holders.incrementAndGet(s);
            mine[valueClass] = s;
        }
    }

    /**
     * Without the lock, reading only: the next segment after {@code from} (around to it) whose room hint
     * is set, that holds {@code valueClass} with a block free by its count and that no thread takes from;
     * -1 when none. Hints are not cleared here (the locked search does): writing them from every thread
     * at every move is what their cache lines could not take.
     */
    int nextWithRoom(int valueClass, int perSegment, int from) {
        AtomicLongArray hints = room[valueClass];
        int words = hints.length();
        if (words == 0) {
            return -1;
        }
        int start = from < 0 || from >= count ? 0 : from + 1;
        int w0 = (start >>> 6) % words;
        for (int k = 0; k <= words; k++) {
            int w = (w0 + k) % words;
            long x = hints.get(w);
            if (k == 0) {
                x &= -1L << (start & 63);   // from the start on in its own word
            }
            for (; x != 0; x &= x - 1) {
                int s = (w << 6) + Long.numberOfTrailingZeros(x);
                if (s >= count) {
                    break;
                }
                int u = used.get(s);
                if (owner.get(s) == valueClass && u >= 0 && u < perSegment && holders.get(s) <= 0) {
                    return s;
                }
            }
        }
        return -1;
    }

    /**
     * Under the heap's lock: the lowest segment of {@code valueClass} with a free block by its room hint
     * (with {@code unheldOnly}, of those no thread takes from now), the hints of full ones cleared (cleared
     * first, then the count read, so that a free in between sets it again or is seen); -1 when none.
     */
    int segmentWithRoom(int valueClass, int perSegment, boolean unheldOnly) {
        AtomicLongArray hints = room[valueClass];
        for (int w = 0; w < hints.length(); w++) {
            for (long x = hints.get(w); x != 0; x &= x - 1) {
                int s = (w << 6) + Long.numberOfTrailingZeros(x);
                clearHint(valueClass, s);
                int u = used.get(s);
                if (owner.get(s) == valueClass && u >= 0 && u < perSegment) {
                    setHint(valueClass, s);
                    if (!unheldOnly || holders.get(s) <= 0) {
                        return s;
                    }
                }
            }
        }
        return -1;
    }

    /** Segment {@code s} may have a free block of {@code valueClass}. */
    void setHint(int valueClass, int s) {
        AtomicLongArray hints = room[valueClass];
        long bit = 1L << s;
        if ((hints.get(s >>> 6) & bit) == 0) {  // read first: a hot segment's word is not written at every free
            hints.getAndUpdate(s >>> 6, x -> x | bit);
        }
    }

    void clearHint(int valueClass, int s) {
        long bit = 1L << s;
        room[valueClass].getAndUpdate(s >>> 6, x -> x & ~bit);
    }

    // ------------------------------------------------------------------ counts

    /** Under the heap's lock: the count of a retired segment set to {@code count}, once stray reservations in it are given back. */
    void reopen(int s, int count) {
        while (!used.compareAndSet(s, RETIRED, count)) {
            Thread.onSpinWait();  // a reservation that found it retired is giving itself back
        }
    }

    /** Under the heap's lock: takes the count of segment {@code s} from {@code count} to retired, waiting out stray reservations. */
    void retire(int s, int count) {
        while (!used.compareAndSet(s, count, RETIRED)) {
            Thread.onSpinWait();  // a stray reservation is giving itself back
        }
    }
}
