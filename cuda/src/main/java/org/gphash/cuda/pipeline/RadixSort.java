package org.gphash.cuda.pipeline;

import jcuda.driver.CUstream;
import org.gphash.cuda.runtime.DeviceBuffer;
import org.gphash.cuda.runtime.KernelParams;
import org.gphash.cuda.runtime.Launcher;

/**
 * A stable LSD radix sort of (uint32 key, uint32 value) pairs in GPU memory, 8 bits per pass
 * (pipeline/radix_sort.cuh): per-tile digit counts, their exclusive scan digit-major, a stable
 * scatter; runs of at most {@link KernelParams#BLOCK_SORT_MAX} pairs sort in place in one block. The pairs
 * move between two buffers; {@link #sort} says which holds the result. Not thread-safe.
 */
public final class RadixSort implements AutoCloseable {

    private final PipelineKernels k;
    private final DeviceScan scan;
    private final DeviceBuffer counts = new DeviceBuffer();

    RadixSort(PipelineKernels kernels, DeviceScan scan) {
        this.k = kernels;
        this.scan = scan;
    }

    /**
     * Sizes the digit counts for sorts of up to {@code maxN} items; call it before queueing (see
     * DeviceScan.reserve). Returns whether a buffer moved.
     */
    boolean reserve(long maxN) {
        long tiles = (maxN + KernelParams.SORT_TILE - 1) / KernelParams.SORT_TILE;
        long before = counts.address();
        counts.ensure(KernelParams.RADIX * tiles * 4);
        boolean moved = scan.reserve(KernelParams.RADIX * tiles);
        return moved | counts.address() != before;
    }

    /** Passes for keys below 2^bits. */
    public static int passes(int bits) {
        return Math.max(1, (bits + 7) / 8);
    }

    /**
     * Sorts the first n pairs of (keys, vals) by the low {@code bits} bits of the keys, n being
     * {@code maxN} or, when {@code nAt} is not 0, the count in device memory there (at most maxN).
     * Returns true when the result ends up in (altKeys, altVals), false when in (keys, vals).
     */
    boolean sort(CUstream stream, long keys, long vals, long altKeys, long altVals, long maxN, long nAt, int bits) {
        if (maxN <= KernelParams.BLOCK_SORT_MAX) {  // one launch, in place: the passes' launches are what a small run's sort costs
            Launcher.launchBlocks(k.radixBlockSort, 1, stream,
                    KernelParams.sortPass(keys, vals, altKeys, altVals, maxN, nAt, 0, 0, 0), KernelParams.int32(bits));
            return false;
        }
        long tiles = (maxN + KernelParams.SORT_TILE - 1) / KernelParams.SORT_TILE;
        if (counts.capacity() < KernelParams.RADIX * tiles * 4) {
            throw new IllegalStateException("sort of " + maxN + " items without reserve()");
        }
        long inK = keys;
        long inV = vals;
        long outK = altKeys;
        long outV = altVals;
        int passes = passes(bits);
        for (int pass = 0; pass < passes; pass++) {
            byte[] args = KernelParams.sortPass(inK, inV, outK, outV, maxN, nAt, pass * 8, counts.address(), tiles);
            Launcher.launchBlocks(k.radixCount, Math.toIntExact(tiles), stream, args);
            scan.exclusiveSum(stream, counts.address(), counts.address(), KernelParams.RADIX * tiles);
            Launcher.launchBlocks(k.radixScatter, Math.toIntExact(tiles), stream, args);
            long t = inK;
            inK = outK;
            outK = t;
            t = inV;
            inV = outV;
            outV = t;
        }
        return (passes & 1) == 1;
    }

    @Override
    public void close() {
        counts.close();
    }
}
