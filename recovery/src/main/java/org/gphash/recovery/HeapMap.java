package org.gphash.recovery;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

import org.gphash.format.HeapChunk;
import org.gphash.format.PoolHeader;
import org.gphash.format.ValueClasses;
import org.gphash.table.PoolHeap;
import org.gphash.table.SegmentHeap;
import org.gphash.table.SizeClassHeap;

/**
 * The value heap as the header describes it: which pool offsets are block starts, and which blocks
 * items have claimed. Free space is never persisted (a block is in use exactly when an item refers
 * to it), so this is the whole of the free-space accounting an offline tool can do.
 */
final class HeapMap {

    private final HeapChunk[] chunks;
    private final long[] firstBlock;
    private final int stride;
    private final long[] used;
    private final long totalBlocks;
    private long usedBlocks;
    /**
     * Format 3's heap, whose blocks of every class lie in the whole segments of each chunk and are
     * numbered by the 16-byte unit they start at, as its close record numbers them
     * ({@link SegmentHeap#unitNumber}); null in format 2.
     */
    private final SegmentHeap classes;

    /** The heap the header {@code h} describes, blocks numbered as its format's close record numbers them. */
    static HeapMap of(PoolHeader h) {
        if (h.formatVersion() == PoolHeader.FORMAT_3) {
            return new HeapMap((SegmentHeap) PoolHeap.of(h, null));
        }
        return new HeapMap(h.heapChunks(), h.geometry().valueStride());
    }

    private HeapMap(SegmentHeap classes) {
        this.classes = classes;
        this.chunks = new HeapChunk[0];
        this.firstBlock = new long[1];
        this.stride = ValueClasses.blockBytes(classes.fullClass());
        this.totalBlocks = classes.units();
        this.used = new long[(int) ((totalBlocks + 63) >>> 6)];
    }

    HeapMap(List<HeapChunk> heapChunks, int stride) {
        this.classes = null;
        List<HeapChunk> sorted = new ArrayList<>(heapChunks);
        sorted.sort(Comparator.comparingLong(HeapChunk::offset));
        this.chunks = sorted.toArray(HeapChunk[]::new);
        this.stride = stride;
        this.firstBlock = new long[chunks.length + 1];
        for (int i = 0; i < chunks.length; i++) {
            firstBlock[i + 1] = firstBlock[i] + chunks[i].length() / stride;
        }
        this.totalBlocks = firstBlock[chunks.length];
        this.used = new long[(int) ((totalBlocks + 63) >>> 6)];
    }

    /**
     * The number of the block a word names at {@code offset} whatever its class, or -1 where no
     * block of the heap can start there (format 3: checked no further: a reader checks the value's
     * frame against the word's class).
     */
    long blockAt(long offset) {
        if (classes != null) {
            return offset % 16 == 0 && classes.spans(offset, 16) ? classes.unitNumber(offset) : -1;
        }
        return blockOf(offset, -1);
    }

    /**
     * The block number of {@code offset}, or -1 if it is not the start of a block of the heap (of
     * class {@code valueClass}, the word's, in format 3; format 2 has one block size).
     */
    long blockOf(long offset, int valueClass) {
        if (classes != null) {
            return classes.isBlock(offset, valueClass) ? classes.unitNumber(offset) : -1;
        }
        int lo = 0;
        int hi = chunks.length - 1;
        if (hi < 0) {
            return -1;
        }
        while (lo < hi) {
            int mid = (lo + hi + 1) >>> 1;
            if (chunks[mid].offset() <= offset) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        long rel = offset - chunks[lo].offset();
        if (rel < 0 || rel % stride != 0 || rel / stride >= chunks[lo].length() / stride) {
            return -1;
        }
        return firstBlock[lo] + rel / stride;
    }

    /** Marks a block used; false if an item already claimed it. */
    boolean claim(long block) {
        int w = (int) (block >>> 6);
        long bit = 1L << (block & 63);
        if ((used[w] & bit) != 0) {
            return false;
        }
        used[w] |= bit;
        usedBlocks++;
        return true;
    }

    /** Whether an item claimed {@code block}. */
    boolean used(long block) {
        return (used[(int) (block >>> 6)] & (1L << (block & 63))) != 0;
    }

    /**
     * The first block whose use differs from {@code recorded} (a close record's bitmap, numbered the
     * same way, blocks past the last marked used), or -1.
     */
    long firstDifference(long[] recorded) {
        for (int w = 0; w < used.length && w < recorded.length; w++) {
            long differ = used[w] ^ recorded[w];
            if (w == used.length - 1 && (totalBlocks & 63) != 0) {
                differ &= (1L << (totalBlocks & 63)) - 1;  // past the last block
            }
            if (differ != 0) {
                return 64L * w + Long.numberOfTrailingZeros(differ);
            }
        }
        return -1;
    }

    long totalBlocks() {
        return totalBlocks;
    }

    /** {@return one past the highest number {@link #blockOf} gives: what a bitmap over block numbers holds} */
    long blockNumbers() {
        return totalBlocks;
    }

    long usedBlocks() {
        return usedBlocks;
    }

    long bytes() {
        return classes != null ? classes.totalBytes() : totalBlocks * stride;
    }

    /** {@return the bytes a block takes: format 2's stride, or format 3's class of a value of the pool's value size} */
    int blockBytes() {
        return stride;
    }

    /** A readable description of the heap's extent, for messages. */
    String describe() {
        if (classes != null) {
            return classes.totalBytes() + " bytes in whole segments of " + SizeClassHeap.SEGMENT_BYTES
                    + " bytes, blocks of every class (format 3)";
        }
        return chunks.length + " chunk(s), " + totalBlocks + " blocks of " + stride + " bytes";
    }
}
