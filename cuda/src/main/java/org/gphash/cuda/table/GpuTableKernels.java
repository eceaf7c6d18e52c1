package org.gphash.cuda.table;

import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;
import static jcuda.driver.JCudaDriver.cuMemsetD8;

import java.nio.file.Path;
import java.util.Arrays;

import jcuda.Pointer;
import org.gphash.BackendUnavailableException;
import org.gphash.Geometry;
import org.gphash.cuda.runtime.CudaRuntime;
import org.gphash.cuda.runtime.DeviceBuffer;
import org.gphash.cuda.runtime.KernelParams;
import org.gphash.cuda.runtime.Launcher;
import org.gphash.cuda.runtime.PoolRegistration;
import org.gphash.error.PoolFormatException;
import org.gphash.format.PoolHeader;
import org.gphash.format.ValueClasses;
import org.gphash.format.ValueFormat;
import org.gphash.persistence.PoolFile;
import org.gphash.table.SizeClassHeap;
import org.gphash.table.TableKernels;
import org.gphash.table.TableLayout;

/**
 * Recovery and resize as kernels (pool/recovery_kernel.cuh, pool/rehash_kernel.cuh): the pool table calls
 * these with operations drained, on the thread that holds the engine, and each returns only when
 * its kernels have finished.
 */
public final class GpuTableKernels implements TableKernels, AutoCloseable {

    /** Format 3's close record numbers its bitmap by 16-byte units (SegmentHeap's). */
    private static final int UNIT = 16;

    private final CudaRuntime cuda;
    private final PoolRegistration registration;
    private final DeviceBuffer counters = new DeviceBuffer();
    private final DeviceBuffer retired = new DeviceBuffer();
    private final DeviceBuffer bitmap = new DeviceBuffer();
    private final DeviceBuffer chunkTable = new DeviceBuffer();
    /** Format 3's marking by class: each segment's class (uint32_t). */
    private final DeviceBuffer segmentClasses = new DeviceBuffer();
    private Path path;
    private Geometry geometry;
    private long[] seeds;
    private int formatVersion;

    public GpuTableKernels(CudaRuntime cuda) {
        this.cuda = cuda;
        this.registration = new PoolRegistration(cuda::bind);
    }

    @Override
    public void attach(PoolFile file, Geometry geometry, long[] seeds, int formatVersion) {
        cuda.bind();
        this.path = file.path();
        this.geometry = geometry;
        this.seeds = seeds.clone();
        this.formatVersion = formatVersion;
        file.setMappingListener(registration);  // registers the mapping as it is now, then every change
    }

    @Override
    public boolean supportsFormat(int version) {
        return runsFormat(version);
    }

    /** Formats 2 and 3, values of any length up to the value size in format 3 (runs of segments for blocks over 8 KiB). */
    static boolean runsFormat(int version) {
        return version == PoolHeader.FORMAT_VERSION || version == PoolHeader.FORMAT_3;
    }

    /** {@return the runtime these kernels run on} */
    public CudaRuntime runtime() {
        return cuda;
    }

    /** The pool's registration with CUDA (copies of pool ranges go through it). */
    public PoolRegistration registration() {
        return registration;
    }

    Geometry geometry() {
        return geometry;
    }

    /** The kernels' view of the table as it is laid out now (the pool address changes when it grows). */
    public byte[] tableParams(TableLayout layout) {
        return KernelParams.table(registration.deviceBase(), layout, geometry, seeds, formatVersion);
    }

    private long[] runScan(jcuda.driver.CUfunction f, TableLayout layout, int[] depths, long retiredCapacity,
                           long[] chunkArgs, long bitmapAddress, int mode) {
        return runScan(f, layout, depths, retiredCapacity, chunkArgs, bitmapAddress, mode, 0);
    }

    private long[] runScan(jcuda.driver.CUfunction f, TableLayout layout, int[] depths, long retiredCapacity,
                           long[] chunkArgs, long bitmapAddress, int mode, long segmentClassAddress) {
        cuda.bind();
        counters.ensure(KernelParams.SCAN_COUNTERS * 8L);
        cuMemsetD8(counters.pointer(), (byte) 0, KernelParams.SCAN_COUNTERS * 8L);
        byte[] table = tableParams(layout);
        for (int depth : depths) {
            byte[] scan = KernelParams.scan(depth, counters.address(), retired.address(), retiredCapacity,
                    chunkArgs[0], chunkArgs[1], chunkArgs[2], chunkArgs[3], chunkArgs[4], bitmapAddress, mode,
                    segmentClassAddress);
            Launcher.launch(f, layout.bucketsAtDepth(depth) * geometry.slotsPerBucket(), null, table, scan);
        }
        cuda.synchronizeContext();
        long[] c = new long[KernelParams.SCAN_COUNTERS];
        cuMemcpyDtoH(Pointer.to(c), counters.pointer(), c.length * 8L);
        return c;
    }

    private static int[] allDepths(TableLayout layout) {
        int[] d = new int[layout.levelCount()];
        for (int i = 0; i < d.length; i++) {
            d[i] = i;
        }
        return d;
    }

    @Override
    public RecoveryCounts countBrokenAndDuplicates(TableLayout layout) {
        return recoverLevels(layout, KernelParams.SCAN_JUDGE_ONLY);
    }

    @Override
    public RecoveryCounts clearBrokenAndDuplicates(TableLayout layout) {
        return recoverLevels(layout, 0);
    }

    private RecoveryCounts recoverLevels(TableLayout layout, int mode) {
        long[] c = runScan(cuda.recoverLevel, layout, allDepths(layout), 0, new long[5], 0, mode);
        return new RecoveryCounts(c[KernelParams.INSERT_CLEARED], c[KernelParams.TORN_CLEARED],
                c[KernelParams.DUPLICATES_CLEARED]);
    }

    @Override
    public MarkedBlocks markValueBlocks(TableLayout layout, HeapLayout heap, boolean validItemsOnly) {
        long[] c = markLevels(layout, heap, validItemsOnly ? KernelParams.SCAN_VALID_ONLY : 0, 0);
        return new MarkedBlocks(markedBits(c, heap.words()), c[KernelParams.ITEMS]);
    }

    /**
     * Format 3: every segment a chunk of 16-byte units (segment {@code i}'s from unit {@code 4096 i}, as
     * the close record numbers them), and each segment's class from the words of the items whose blocks
     * start in it: two classes in one segment are corruption, as an offset that is no unit or two items
     * on one block are.
     */
    @Override
    public MarkedSegments markValueSegments(TableLayout layout, long[] segmentOffsets, boolean validItemsOnly) {
        int n = segmentOffsets.length;
        long[] lengths = new long[n];
        long[] first = new long[n];
        Arrays.fill(lengths, SizeClassHeap.SEGMENT_BYTES);
        long unitsPerSegment = SizeClassHeap.SEGMENT_BYTES / UNIT;
        for (int i = 0; i < n; i++) {
            first[i] = i * unitsPerSegment;
        }
        int words = (int) ((n * unitsPerSegment + 63) >>> 6);
        HeapLayout units = new HeapLayout(segmentOffsets, lengths, first, UNIT, words);
        cuda.bind();
        segmentClasses.ensure(Math.max(8, n * 4L));
        cuMemsetD8(segmentClasses.pointer(), (byte) 0xFF, Math.max(8, n * 4L));
        int mode = KernelParams.SCAN_BY_CLASS | (validItemsOnly ? KernelParams.SCAN_VALID_ONLY : 0);
        long[] c = markLevels(layout, units, mode, segmentClasses.address());
        if (c[KernelParams.OTHER_CLASSES] > 0) {
            throw new PoolFormatException(PoolFormatException.Reason.CORRUPT, path, c[KernelParams.OTHER_CLASSES]
                    + " items refer to value blocks of another class than the blocks beside them in their 64 KiB"
                    + " segment; nothing was changed");
        }
        long[] bits = markedBits(c, words);
        int[] classWords = new int[n];
        if (n > 0) {
            cuMemcpyDtoH(Pointer.to(classWords), segmentClasses.pointer(), n * 4L);
        }
        byte[] classes = new byte[n];
        for (int i = 0; i < n; i++) {
            // No class (0xFFFFFFFF) and a class no byte holds both read as none: SegmentHeap.restore
            // refuses a segment with marks and no class.
            classes[i] = classWords[i] >= 0 && classWords[i] < ValueClasses.COUNT ? (byte) classWords[i] : -1;
        }
        return new MarkedSegments(bits, classes, c[KernelParams.ITEMS]);
    }

    /** Runs mark_level over every level with {@code heap}'s chunks, its bitmap cleared first; the scan's counts. */
    private long[] markLevels(TableLayout layout, HeapLayout heap, int mode, long segmentClassAddress) {
        cuda.bind();
        int chunks = heap.chunkOffsets().length;
        long[] table = new long[chunks * 3];
        System.arraycopy(heap.chunkOffsets(), 0, table, 0, chunks);
        System.arraycopy(heap.chunkLengths(), 0, table, chunks, chunks);
        System.arraycopy(heap.firstBlocks(), 0, table, 2 * chunks, chunks);
        chunkTable.ensure(Math.max(8, table.length * 8L));
        if (table.length > 0) {
            cuMemcpyHtoD(chunkTable.pointer(), Pointer.to(table), table.length * 8L);
        }
        long bitmapBytes = Math.max(8, heap.words() * 8L);
        bitmap.ensure(bitmapBytes);
        cuMemsetD8(bitmap.pointer(), (byte) 0, bitmapBytes);
        long base = chunkTable.address();
        long[] chunkArgs = {base, base + chunks * 8L, base + chunks * 16L, chunks, heap.stride()};
        return runScan(cuda.markLevel, layout, allDepths(layout), 0, chunkArgs, bitmap.address(), mode, segmentClassAddress);
    }

    /** The bitmap a {@link #markLevels} filled, {@code words} of it, once its counts show no corruption. */
    private long[] markedBits(long[] c, int words) {
        if (c[KernelParams.BAD_OFFSETS] > 0) {
            throw new PoolFormatException(PoolFormatException.Reason.CORRUPT, path, c[KernelParams.BAD_OFFSETS]
                    + " items refer to value offsets that are not blocks of the value heap; nothing was changed");
        }
        if (c[KernelParams.SHARED_BLOCKS] > 0) {
            throw new PoolFormatException(PoolFormatException.Reason.CORRUPT, path, c[KernelParams.SHARED_BLOCKS]
                    + " value blocks are referred to by more than one item; nothing was changed");
        }
        long[] used = new long[words];
        if (words > 0) {
            cuMemcpyDtoH(Pointer.to(used), bitmap.pointer(), words * 8L);
        }
        return used;
    }

    @Override
    public RehashResult rehashBottom(TableLayout layout) {
        cuda.bind();  // a resize may run on any thread (the CPU engine's code serving calls before the GPU engine)
        int bottom = layout.levelCount() - 1;
        long slots = layout.bucketsAtDepth(bottom) * geometry.slotsPerBucket();
        retired.ensure(slots * 8);  // each bottom slot unlinks at most one block
        long[] c = runScan(cuda.rehashBottom, layout, new int[] {bottom}, slots, new long[5], 0, 0);
        int n = (int) Math.min(c[KernelParams.SCAN_RETIRED], slots);
        long[] blocks = new long[n];
        if (n > 0) {
            cuMemcpyDtoH(Pointer.to(blocks), retired.pointer(), n * 8L);
        }
        return new RehashResult(c[KernelParams.MOVED], c[KernelParams.DUPLICATES_CLEARED], c[KernelParams.UNPLACED], blocks);
    }

    void releasePool() {
        registration.release();
    }

    @Override
    public void close() {
        cuda.bind();
        counters.close();
        retired.close();
        bitmap.close();
        chunkTable.close();
        segmentClasses.close();
    }
}
