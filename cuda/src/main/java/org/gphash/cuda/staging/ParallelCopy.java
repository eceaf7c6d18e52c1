package org.gphash.cuda.staging;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RecursiveAction;

/**
 * Large copies between Java memory and pinned staging buffers, split over the common fork-join pool:
 * a 2^20-operation batch of 128-byte values is 128 MiB each way, which one core copies at a fraction
 * of what the PCIe link moves.
 */
final class ParallelCopy {

    /** Below this a copy runs on the caller's thread. */
    private static final long PIECE = 4L << 20;

    private ParallelCopy() {
    }

    static void copy(MemorySegment src, long srcOffset, MemorySegment dst, long dstOffset, long bytes) {
        if (bytes <= PIECE || ForkJoinPool.getCommonPoolParallelism() < 2) {
            MemorySegment.copy(src, srcOffset, dst, dstOffset, bytes);
            return;
        }
        ForkJoinPool.commonPool().invoke(new Piece(src, srcOffset, dst, dstOffset, bytes));
    }

    private static final class Piece extends RecursiveAction {
        private final MemorySegment src;
        private final long srcOffset;
        private final MemorySegment dst;
        private final long dstOffset;
        private final long bytes;

        Piece(MemorySegment src, long srcOffset, MemorySegment dst, long dstOffset, long bytes) {
            this.src = src;
            this.srcOffset = srcOffset;
            this.dst = dst;
            this.dstOffset = dstOffset;
            this.bytes = bytes;
        }

        @Override
        protected void compute() {
            if (bytes <= PIECE) {
                MemorySegment.copy(src, srcOffset, dst, dstOffset, bytes);
                return;
            }
            long half = bytes / 2;
            invokeAll(new Piece(src, srcOffset, dst, dstOffset, half),
                    new Piece(src, srcOffset + half, dst, dstOffset + half, bytes - half));
        }
    }
}
