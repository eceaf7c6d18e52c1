package org.gphash.table;

import java.util.concurrent.atomic.AtomicLongArray;

import org.gphash.format.ValueClasses;

/**
 * What a {@link SizeClassHeap} holds, read segment by segment from its segments as they were when
 * asked ({@link SizeClassHeap#contents}): the blocks in use and the class each segment holds, for the
 * close record's copy of the heap and for counts. Reads only: exact while no take or free runs (the
 * callers drain operations first), a moment's view otherwise. Apart from the heap, whose job is
 * taking and freeing blocks under its rules.
 */
final class HeapContents {

    private static final int SEGMENT_BYTES = HeapSegments.SEGMENT_BYTES;

    private final HeapSegments g;

    HeapContents(HeapSegments segments) {
        this.g = segments;
    }

    /** Receives a block in use: its pool offset and class. */
    @FunctionalInterface
    interface UsedBlockSink {
        /** One block in use. */
        void accept(long offset, int valueClass);
    }

    /** Gives {@code sink} every block in use, segment by segment. */
    void forEachUsed(UsedBlockSink sink) {
        for (int s = 0; s < g.count; s++) {
            int owner = g.owner.get(s);
            if (owner < 0 || g.used.get(s) <= 0) {
                continue;
            }
            int block = ValueClasses.blockBytes(owner);
            if (block > SizeClassHeap.SMALL_BLOCK_MAX) {
                sink.accept(g.offset[s], owner);
                continue;
            }
            AtomicLongArray b = g.bits.get(s);
            int perSegment = SEGMENT_BYTES / block;
            for (int i = 0; i < perSegment; i++) {
                if ((b.get(i >>> 6) & (1L << i)) != 0) {
                    sink.accept(g.offset[s] + (long) i * block, owner);
                }
            }
        }
    }

    /** {@return the blocks in use, every class} */
    long usedBlocks() {
        long n = 0;
        for (int s = 0; s < g.count; s++) {
            if (g.owner.get(s) >= 0 && g.used.get(s) > 0) {
                n += g.used.get(s);
            }
        }
        return n;
    }

    /**
     * {@return the bytes of the blocks in use, headers included} Summed over the segments' counts (a
     * figure every take and free kept up to date cost two atomic operations a pair, a seventh of a
     * thread's time in {@code HeapBench}); for diagnostics and tests, not a hot path.
     */
    long usedBlockBytes() {
        long bytes = 0;
        for (int s = 0; s < g.count; s++) {
            int owner = g.owner.get(s);
            int used = g.used.get(s);
            if (owner >= 0 && used > 0) {
                bytes += (long) used * ValueClasses.blockBytes(owner);
            }
        }
        return bytes;
    }

    /**
     * Sets bits {@code at .. at + perSegment - 1} of {@code out} where the segment at {@code offset}
     * has its blocks of {@code valueClass} in use (none for a free segment).
     */
    void copyUsedBits(long offset, int valueClass, long[] out, long at) {
        int s = g.segmentOf(offset);
        AtomicLongArray b = g.bits.get(s);
        if (g.owner.get(s) != valueClass || b == null) {
            return;
        }
        int perSegment = SEGMENT_BYTES / ValueClasses.blockBytes(valueClass);
        for (int w = 0; w < b.length(); w++) {
            for (long x = b.get(w); x != 0; x &= x - 1) {
                int i = (w << 6) + Long.numberOfTrailingZeros(x);
                if (i < perSegment) {
                    long n = at + i;
                    out[(int) (n >>> 6)] |= 1L << n;
                }
            }
        }
    }

    /** {@return the class the segment at {@code offset} holds, -1 where it is free or inside a run of segments after its first} */
    int classAt(long offset) {
        int owner = g.owner.get(g.segmentOf(offset));
        return owner >= 0 ? owner : -1;
    }
}
