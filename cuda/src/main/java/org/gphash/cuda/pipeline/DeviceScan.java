package org.gphash.cuda.pipeline;

import jcuda.driver.CUfunction;
import jcuda.driver.CUstream;
import org.gphash.cuda.runtime.DeviceBuffer;
import org.gphash.cuda.runtime.KernelParams;
import org.gphash.cuda.runtime.Launcher;

/**
 * Device-wide scans of 32-bit integers (pipeline/device_scan.cuh): the reduction of each tile, a
 * one-block scan of those, then each tile scanned with its prefix; up to {@link KernelParams#SMALL_SCAN_MAX}
 * items, one block walking the tiles in order. In place is allowed. Keeps the scratch space for the
 * tile reductions. Not thread-safe.
 */
final class DeviceScan implements AutoCloseable {

    private final PipelineKernels k;
    private final DeviceBuffer partials = new DeviceBuffer();

    DeviceScan(PipelineKernels kernels) {
        this.k = kernels;
    }

    /**
     * Sizes the scratch space for scans of up to {@code n} items. Call it before queueing a batch's
     * scans: growing it frees the old buffer, which kernels already queued may still use.
     */
    boolean reserve(long n) {
        long before = partials.address();
        partials.ensure(Math.max(64, tiles(n) * 4));
        return partials.address() != before;
    }

    /** out[i] = in[0] + ... + in[i-1], unsigned 32-bit. */
    void exclusiveSum(CUstream stream, long in, long out, long n) {
        run(stream, k.scanSmallExclusiveSum, k.scanReduceSum, k.scanPartialsSum, k.scanExclusiveSum, in, out, n);
    }

    /** out[i] = max(in[0..i]), signed 32-bit (-1 is the identity). */
    void inclusiveMax(CUstream stream, long in, long out, long n) {
        run(stream, k.scanSmallInclusiveMax, k.scanReduceMax, k.scanPartialsMax, k.scanInclusiveMax, in, out, n);
    }

    private void run(CUstream stream, CUfunction small, CUfunction reduce, CUfunction scanPartials, CUfunction scanTiles,
                     long in, long out, long n) {
        if (n <= 0) {
            return;
        }
        if (n <= KernelParams.SMALL_SCAN_MAX) {  // one block walks the tiles: three launches are most of a small scan's time
            Launcher.launchBlocks(small, 1, stream, KernelParams.scanArgs(in, out, n, 0));
            return;
        }
        long tiles = tiles(n);
        if (partials.address() == 0 || tiles * 4 > partials.capacity()) {
            throw new IllegalStateException("scan of " + n + " items without reserve(): scratch space would be freed "
                    + "under queued kernels");
        }
        byte[] args = KernelParams.scanArgs(in, out, n, partials.address());
        Launcher.launchBlocks(reduce, Math.toIntExact(tiles), stream, args);
        Launcher.launchBlocks(scanPartials, 1, stream, args);
        Launcher.launchBlocks(scanTiles, Math.toIntExact(tiles), stream, args);
    }

    static long tiles(long n) {
        return (n + KernelParams.SCAN_TILE - 1) / KernelParams.SCAN_TILE;
    }

    @Override
    public void close() {
        partials.close();
    }
}
