package org.gphash.cuda.pipeline;


import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

import jcuda.Pointer;
import jcuda.driver.CUfunction;
import org.gphash.Geometry;
import org.gphash.cuda.runtime.CudaRuntime;
import org.gphash.cuda.runtime.DeviceBuffer;
import org.gphash.cuda.runtime.KernelParams;
import org.gphash.cuda.runtime.Launcher;
import org.gphash.cuda.runtime.PoolRegistration;
import org.gphash.format.SlotMeta;
import org.gphash.table.TableLayout;

/**
 * The HBM index mirror (pipeline/index_mirror.cuh): every level of the pool's table copied slot for
 * slot into GPU memory, so probes read GPU memory and only values cross PCIe, and beside it a 16-bit
 * tag per slot (pipeline/mirror_tags.cuh), so that probes read a bucket's tags and only the slots
 * whose tag is the key's fingerprint. Volatile: loaded from the pool, by one sequential copy per
 * level, and its tags built from the copies, when the engine opens the pool (after recovery) and
 * after every resize; kept exact by the pipeline, which writes the pool first and the mirror after.
 * Not thread-safe.
 */
final class DeviceIndexMirror implements AutoCloseable {

    /** Buckets compared with the pool per copy to the host. */
    private static final int COMPARE_BUCKETS = 1 << 14;
    private static final ValueLayout.OfLong WORD = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final CUfunction buildTags;
    private final CudaRuntime cuda;
    private final List<DeviceBuffer> levels = new ArrayList<>();
    private final DeviceBuffer tags = new DeviceBuffer();
    private long[] addresses = new long[0];
    private long bytes;
    private long lastLoadNanos;

    DeviceIndexMirror(PipelineKernels kernels) {
        this.buildTags = kernels.buildTags;
        this.cuda = kernels.cuda;
    }

    /** GPU memory a mirror of this layout takes, tags included. */
    static long bytesFor(TableLayout layout, int slotsPerBucket) {
        long total = tagBytes(layout, slotsPerBucket);
        for (int d = 0; d < layout.levelCount(); d++) {
            total += layout.bucketsAtDepth(d) * layout.bucketSize();
        }
        return total;
    }

    private static long tagBytes(TableLayout layout, int slotsPerBucket) {
        return layout.totalBuckets() * slotsPerBucket * KernelParams.TAG_BYTES;
    }

    /**
     * Copies the levels of {@code layout} from the pool, as registered with CUDA, and builds their
     * tags; returns with both in GPU memory, before any stream of the engine reads them.
     */
    void load(TableLayout layout, Geometry geometry, long[] seeds, int formatVersion, PoolRegistration pool) {
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
        long tagBytes = tagBytes(layout, geometry.slotsPerBucket());
        tags.ensure(tagBytes);
        bytes += tagBytes;
        Launcher.launch(buildTags, layout.totalBuckets() * geometry.slotsPerBucket(), null,
                tableParams(layout, geometry, seeds, formatVersion), KernelParams.longs(layout.totalBuckets()));
        cuda.synchronizeContext();  // the engine's streams do not wait for the default one
        lastLoadNanos = System.nanoTime() - t0;
    }

    /** TableParams over the mirror: base 0, the device address of each level's copy and of the tags. */
    byte[] tableParams(TableLayout layout, Geometry geometry, long[] seeds, int formatVersion) {
        if (addresses.length != layout.levelCount()) {
            throw new IllegalStateException("the index mirror holds " + addresses.length + " levels, the table has "
                    + layout.levelCount());
        }
        return KernelParams.table(0, addresses, layout, geometry, seeds, formatVersion, tags.address());
    }

    long bytes() {
        return bytes;
    }

    /** How long the last load took (allocation and copies). */
    long lastLoadNanos() {
        return lastLoadNanos;
    }

    /**
     * Slots whose copy here differs from the pool's: the meta word, the key under a non-EMPTY word
     * (keys left under EMPTY words are dead in both), or the tag, which must be the top 16 bits of the
     * slot's word. Read while no kernel runs; copies the mirror to the host a chunk at a time.
     */
    long staleSlots(TableLayout layout, Geometry geometry, MemorySegment pool) {
        int slots = geometry.slotsPerBucket();
        int slotSize = geometry.slotSize();
        int bucketSize = layout.bucketSize();
        long stale = 0;
        long globalBucket = 0;
        for (int d = 0; d < layout.levelCount(); d++) {
            long buckets = layout.bucketsAtDepth(d);
            for (long b0 = 0; b0 < buckets; b0 += COMPARE_BUCKETS) {
                int n = (int) Math.min(COMPARE_BUCKETS, buckets - b0);
                byte[] copy = new byte[n * bucketSize];
                cuMemcpyDtoH(Pointer.to(copy), levels.get(d).at(b0 * bucketSize), copy.length);
                short[] tag = new short[n * slots];
                cuMemcpyDtoH(Pointer.to(tag), tags.at((globalBucket + b0) * slots * KernelParams.TAG_BYTES),
                        (long) tag.length * KernelParams.TAG_BYTES);
                MemorySegment mine = MemorySegment.ofArray(copy);
                MemorySegment theirs = pool.asSlice(layout.levelOffset(d) + b0 * bucketSize, copy.length);
                for (int i = 0; i < n * slots; i++) {
                    long at = (long) (i / slots) * bucketSize + (long) (i % slots) * slotSize;
                    long meta = mine.get(WORD, at);
                    boolean same = meta == theirs.get(WORD, at)
                            && (meta == SlotMeta.EMPTY || MemorySegment.mismatch(mine, at + 8, at + slotSize, theirs, at + 8,
                                    at + slotSize) < 0)
                            && Short.toUnsignedInt(tag[i]) == SlotMeta.fingerprint(meta);
                    if (!same) {
                        stale++;
                    }
                }
            }
            globalBucket += buckets;
        }
        return stale;
    }

    private void release() {
        for (DeviceBuffer b : levels) {
            b.close();
        }
        tags.close();
        levels.clear();
        addresses = new long[0];
        bytes = 0;
    }

    @Override
    public void close() {
        release();
    }
}
