package org.gphash.cuda.pipeline;


import java.util.ArrayList;
import java.util.List;

import org.gphash.cuda.runtime.DeviceBuffer;
import org.gphash.cuda.runtime.KernelParams;
import org.gphash.cuda.runtime.PoolRegistration;
import org.gphash.format.Geometry;
import org.gphash.index.TableLayout;

/**
 * The HBM index mirror (pipeline/index_mirror.cuh): every level of the pool's table copied slot for
 * slot into GPU memory, so probes read GPU memory and only values cross PCIe. Volatile: loaded from
 * the pool, by one sequential copy per level, when the engine opens the pool (after recovery) and
 * after every resize; kept exact by the pipeline, which writes the pool first and the mirror after.
 * Not thread-safe.
 */
final class DeviceIndexMirror implements AutoCloseable {

    private final List<DeviceBuffer> levels = new ArrayList<>();
    private long[] addresses = new long[0];
    private long bytes;
    private long lastLoadNanos;

    /** GPU memory a mirror of this layout takes. */
    static long bytesFor(TableLayout layout) {
        long total = 0;
        for (int d = 0; d < layout.levelCount(); d++) {
            total += layout.bucketsAtDepth(d) * layout.bucketSize();
        }
        return total;
    }

    /** Copies the levels of {@code layout} from the pool, as registered with CUDA. */
    void load(TableLayout layout, PoolRegistration pool) {
        long t0 = System.nanoTime();
        release();
        addresses = new long[layout.levelCount()];
        for (int d = 0; d < layout.levelCount(); d++) {
            long size = layout.bucketsAtDepth(d) * layout.bucketSize();
            DeviceBuffer b = new DeviceBuffer().ensure(size);
            levels.add(b);
            addresses[d] = b.address();
            pool.copyToDevice(b.pointer(), layout.levelOffset(d), size);
            bytes += size;
        }
        lastLoadNanos = System.nanoTime() - t0;
    }

    /** TableParams over the mirror: base 0 and the device address of each level's copy. */
    byte[] tableParams(TableLayout layout, Geometry geometry, long[] seeds) {
        if (addresses.length != layout.levelCount()) {
            throw new IllegalStateException("the index mirror holds " + addresses.length + " levels, the table has "
                    + layout.levelCount());
        }
        return KernelParams.table(0, addresses, layout, geometry, seeds);
    }

    long bytes() {
        return bytes;
    }

    /** How long the last load took (allocation and copies). */
    long lastLoadNanos() {
        return lastLoadNanos;
    }

    /** The mirror's copy of a level, for tests. */
    byte[] level(int depth, long length) {
        byte[] out = new byte[Math.toIntExact(length)];
        jcuda.driver.JCudaDriver.cuMemcpyDtoH(jcuda.Pointer.to(out), levels.get(depth).pointer(), length);
        return out;
    }

    private void release() {
        for (DeviceBuffer b : levels) {
            b.close();
        }
        levels.clear();
        addresses = new long[0];
        bytes = 0;
    }

    @Override
    public void close() {
        release();
    }
}
