package org.gphash.cuda.pipeline;

import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;
import static jcuda.driver.JCudaDriver.cuStreamCreate;

import java.util.Arrays;
import java.util.List;

import jcuda.Pointer;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;
import org.gphash.Geometry;
import org.gphash.GpuTuning;
import org.gphash.cuda.cache.BucketCache;
import org.gphash.cuda.path.EngineParts;
import org.gphash.cuda.routing.Router;
import org.gphash.cuda.runtime.DeviceBuffer;
import org.gphash.cuda.runtime.DevicePointer;
import org.gphash.cuda.runtime.KernelParams;
import org.gphash.cuda.staging.PipelineTicket;
import org.gphash.table.PoolTable;

/**
 * What every batch on the HBM index mirror runs on, whatever its size or origin: the mirror, the
 * value heap's bitmap on the GPU ({@link DeviceHeap}), the pipeline ({@link BatchPipeline}) and the
 * engine's stream; one run of the pipeline queued and accounted for; the heap grown before a run so
 * that every value write finds a block; the table resized, and the run again for the operations whose
 * candidate buckets were all full. Host batches ({@link HostBatches}), small batches
 * ({@link SmallBatches}) and device-resident batches ({@link DeviceBatches}) build on it.
 */
final class MirrorRuns {

    /** Operations per pipeline run; larger batches run as successive slices. */
    static final int MAX_SLICE = 1 << 20;
    /**
     * Bytes of places of the value size a slice holds at most (the pipeline's gather column, a lane's
     * staged values): slices of {@link #MAX_SLICE} up to values of 4 KiB, fewer operations for larger
     * values (4,096 of 1 MiB), so that a pool of large values takes the mirror's routes in GPU memory
     * a large batch of small values takes. A slice's places are never more than the batch's own
     * columns of places hold. At 1 GiB a batch of 2^20 values of 4 KiB (values of any length up to
     * 4 KiB, most of them short) ran as four slices, each with its own kind count, room check and
     * counters read back: its updates at 0.69x of one slice's rate (docs/lab/2026-12-01-large-values-on-the-gpu.md).
     */
    static final long SLICE_VALUE_BYTES = 1L << 32;

    /** {@return operations per pipeline run for values of {@code valueSize} bytes} */
    static int maxSlice(int valueSize) {
        return (int) Math.max(1, Math.min(MAX_SLICE, SLICE_VALUE_BYTES / Math.max(1, valueSize)));
    }

    final EngineParts parts;

    final PipelineKernels kernels;

    final Geometry geometry;

    final DeviceIndexMirror mirror;

    final DeviceHeap heap;

    final BatchPipeline pipeline;

    final CUstream stream = new CUstream();

    final DeviceBuffer rerun = new DeviceBuffer();

    final HeapGrowthAhead ahead;

    /** Chooses how each chunk is grouped and where its values read go. */
    final Router router;

    /** Runs that wrote without grouping, their keys being distinct (for tests and stats). */
    long distinctWriteRuns;

    MirrorRuns(EngineParts parts, PipelineKernels kernels, Router router) {
        this.parts = parts;
        this.kernels = kernels;
        this.geometry = parts.geometry();
        this.router = router;
        GpuTuning tuning = router.tuning();
        this.pipeline = new BatchPipeline(kernels, geometry, tuning);
        this.mirror = new DeviceIndexMirror(kernels);
        this.heap = DeviceHeap.forPool(parts.pool());
        this.ahead = new HeapGrowthAhead(parts.pool(), parts.cuda(), tuning.growHeapAhead());
    }

    /** Creates the stream, puts the heap's bitmap on the GPU and loads the mirror; the caller closes this if it fails. */
    void open() {
        cuStreamCreate(stream, CUstream_flags.CU_STREAM_NON_BLOCKING);
        heap.push(parts.pool());
        loadMirror();
    }

    /** After a batch: prepares the heap's next growth ahead when it runs low ({@link HeapGrowthAhead}). */
    void afterBatch() {
        pipeline.endBatch();
        ahead.afterBatch(heap.freeBlocks(), heap.totalBlocks());
    }

    /** What this holds on the GPU and in pinned memory, for the path's close. */
    List<AutoCloseable> closeables() {
        return List.of(ahead, mirror, heap, pipeline, rerun);
    }

    /**
     * Runs one slice through the pipeline, again for the operations of groups that found every
     * candidate bucket full, after a resize, until none is left.
     */
    void runSlice(long n, long kindsAt, long keysAt, long valuesAt, long codesAt, long outAt, long valueWrites,
                          boolean reads, boolean writes) {
        runSlice(n, kindsAt, keysAt, valuesAt, 0, codesAt, outAt, 0, valueWrites, reads, writes);
    }

    /** As above, with each value's length ({@code lengthsAt}: 0 where every value has the value size) and each read's ({@code outLengthsAt}, or 0). */
    void runSlice(long n, long kindsAt, long keysAt, long valuesAt, long lengthsAt, long codesAt, long outAt,
                  long outLengthsAt, long valueWrites, boolean reads, boolean writes) {
        BucketCache cache = parts.cache();
        long opsAt = 0;
        long count = n;
        for (;;) {
            ensureFreeBlocks(valueWrites);
            PipelineTicket ticket = enqueue(count, kindsAt, keysAt, valuesAt, lengthsAt, codesAt, outAt, outLengthsAt, 0,
                    opsAt, reads, writes, Router.grouping(writes, false, readKeysRepeat));
            long[] c = pipeline.await(ticket);
            observe(ticket, c);
            account(c, cache);
            if (c[KernelParams.PIPE_NEED_RESIZE] == 0) {
                return;
            }
            int[] again = needResize(n, codesAt, opsAt, count);
            resize();
            rerun.ensure(again.length * 4L);
            cuMemcpyHtoD(rerun.pointer(), Pointer.to(again), again.length * 4L);
            opsAt = rerun.address();
            count = again.length;
        }
    }

    /** Queues one run of the pipeline on the engine's stream, grouped by key or not as the router said. */
    PipelineTicket enqueue(long n, long kindsAt, long keysAt, long valuesAt, long codesAt, long outAt,
                                         long outPositionsAt, long opsAt, boolean reads, boolean writes,
                                         Router.Grouping grouping) {
        return enqueue(n, kindsAt, keysAt, valuesAt, 0, codesAt, outAt, 0, outPositionsAt, opsAt, reads, writes, grouping);
    }

    /** As above, with the values' lengths and the reads' (device addresses, or 0: every value has the value size). */
    PipelineTicket enqueue(long n, long kindsAt, long keysAt, long valuesAt, long lengthsAt, long codesAt, long outAt,
                           long outLengthsAt, long outPositionsAt, long opsAt, boolean reads, boolean writes,
                           Router.Grouping grouping) {
        BucketCache cache = parts.cache();
        cache.operationsRan(n, parts.tableParams());
        byte[] cacheParams = cache.params();
        boolean ungrouped = grouping == Router.Grouping.NONE;
        if (writes && ungrouped) {
            distinctWriteRuns++;
        }
        return pipeline.enqueue(stream,
                new BatchPipeline.DeviceOps(n, kindsAt, keysAt, valuesAt, codesAt, outAt, opsAt, cache.lastClock(), outPositionsAt,
                        lengthsAt, outLengthsAt),
                parts.tableParams(), mirrorTableParams(), cacheParams,
                cache.enabled(), heap, parts.pool().file().mappedSize(), reads, writes, ungrouped);
    }

    /**
     * Whether the keys of the last batch of reads repeated, by the GPU's sample of it (pipe_decide):
     * what {@link Router#grouping} decides the next batch of reads by. Reads are correct either way:
     * grouping only saves pool reads of repeated keys.
     */
    boolean readKeysRepeat = true;

    /** Learns from a finished run whether its keys repeated (batches of reads only). */
    void observe(PipelineTicket ticket, long[] c) {
        if (!ticket.writes()) {
            readKeysRepeat = c[KernelParams.PIPE_REPEATS] != 0;
        }
    }

    /** The operations of the last run whose code says NEED_RESIZE. */
    private int[] needResize(long n, long codesAt, long opsAt, long count) {
        byte[] c = new byte[Math.toIntExact(n)];
        cuMemcpyDtoH(Pointer.to(c), DevicePointer.at(codesAt), n);
        int[] ran;
        if (opsAt == 0) {
            ran = null;
        } else {
            ran = new int[Math.toIntExact(count)];
            cuMemcpyDtoH(Pointer.to(ran), rerun.pointer(), count * 4L);
        }
        int[] again = new int[16];
        int k = 0;
        for (int i = 0; i < count; i++) {
            int op = ran == null ? i : ran[i];
            if ((c[op] & KernelParams.CODE_MASK) == KernelParams.NEED_RESIZE_CODE) {
                if (k == again.length) {
                    again = Arrays.copyOf(again, k * 2);
                }
                again[k++] = op;
            }
        }
        return Arrays.copyOf(again, k);
    }

    void account(long[] c, BucketCache cache) {
        if (router.tuning().logBatches() && heap instanceof DeviceSegmentHeap s) {
            // The heap's self-check ran after the take and the retire (BatchPipeline.checkHeap): two copies
            // a batch, so only where batches are logged.
            long[] k = s.takeCheckCounts();
            if ((k[0] | k[1] | k[2] | k[4] | k[5] | k[6]) != 0) {
                throw new IllegalStateException("format 3's heap on the GPU disagrees with itself: after the take " + k[0]
                        + " segments' counts, " + k[1] + " with stray bits, " + k[2] + " free ones not clear, " + k[3]
                        + " free; after the retire " + k[4] + ", " + k[5] + ", " + k[6] + ", " + k[7]
                        + " free, the stack's top " + s.freeSegments());
            }
        }
        if (c[KernelParams.PIPE_HEAP_SHORT] != 0 || c[KernelParams.PIPE_FREE_ERRORS] != 0
                || c[KernelParams.PIPE_HEAP_DISAGREE] != 0) {
            throw new IllegalStateException("the pipeline's value heap went wrong: " + c[KernelParams.PIPE_HEAP_SHORT]
                    + " writes found no block, " + c[KernelParams.PIPE_FREE_ERRORS] + " unlinked blocks were not in use, "
                    + c[KernelParams.PIPE_HEAP_DISAGREE] + " blocks promised by a segment's count were not free in its bits; "
                    + heap.describe() + "; the last batch of values of many lengths wanted " + lastSegmentsWanted
                    + " free segments and found " + lastSegmentsFree);
        }
        parts.pool().addToSize(c[KernelParams.PIPE_ITEMS_ADDED] - c[KernelParams.PIPE_ITEMS_REMOVED]);
        heap.account(c[KernelParams.PIPE_BLOCKS_TAKEN], c[KernelParams.PIPE_BLOCKS_FREED]);
        if (cache.enabled()) {
            cache.addPipelineCounts(c[KernelParams.PIPE_CACHE_HITS], c[KernelParams.PIPE_CACHE_MISSES]);
        }
    }

    /**
     * Grows the heap, with nothing in flight, until a batch's values of many lengths all find a block
     * (format 3): {@code segments} free segments, what the count of the batch's value bytes in blocks
     * that share segments bounds ({@link DeviceSegmentHeap#segmentsFor}), room in the segments classes
     * hold not counted, and the batch's writes of blocks over 8 KiB by class ({@code runsByClass}, null
     * for none), which occur only where the pool's own class takes runs of segments. Those are placed on
     * the host as the GPU's runs step will place them ({@link DeviceSegmentHeap#placeRuns}), on the
     * GPU's segments as they are; where some would not fit, or too few segments would be left, the heap
     * grows by a region that holds them. Where the heap's lower bound of free runs of the pool's class
     * (the longest) already holds them, nothing is read but the stack's top.
     */
    void ensureFreeSegments(long segments, long[] runsByClass) {
        DeviceSegmentHeap h = (DeviceSegmentHeap) heap;
        lastSegmentsWanted = segments;
        if (runsByClass != null && !h.takesRuns()) {
            throw new IllegalStateException("writes of a batch take runs of segments in a pool whose values do not");
        }
        if (h.takesRuns() && h.holdsRuns(runsByClass, segments)) {
            return;
        }
        for (int growths = 0; ; growths++) {
            long missing;
            if (h.takesRuns()) {
                long[] placed = h.placeRuns(runsByClass);  // {segments of writes not placed, free segments left}
                lastSegmentsFree = placed[1];
                missing = placed[0] + Math.max(0, segments - placed[1]);
            } else {
                lastSegmentsFree = h.freeSegments();
                missing = Math.max(0, segments - lastSegmentsFree);
            }
            if (missing == 0) {
                return;
            }
            if (growths == 3) {
                throw new IllegalStateException("the heap still lacks " + missing + " segments for a batch after "
                        + growths + " growths; " + heap.describe());
            }
            parts.cache().awaitLoad();
            heap.pull(parts.pool());
            PoolTable pool = parts.pool();
            if (h.takesRuns()) {
                // The pool counts free runs of its own class: as many more as hold the missing segments,
                // in one region.
                pool.ensureFreeBlocks(pool.freeBlocks() + (missing + h.runLength() - 1) / h.runLength());
            } else {
                pool.ensureFreeBlocks(Math.multiplyExact(segments, h.blocksPerSegment()));
            }
            heap.push(pool);
        }
    }

    /** The last {@link #ensureFreeSegments}'s want and the free segments it found, for an error's message. */
    private long lastSegmentsWanted;
    private long lastSegmentsFree;

    /** Grows the heap, with nothing in flight, until a batch's writes all find a block. */
    void ensureFreeBlocks(long blocks) {
        if (heap.freeBlocks() >= blocks) {
            return;
        }
        if (heap instanceof DeviceSegmentHeap h && h.takesRuns()) {
            h.recount();  // its count of free runs is a lower bound: count them as they are
            if (heap.freeBlocks() >= blocks) {
                return;
            }
        }
        parts.cache().awaitLoad();  // growth remaps the pool, which a load reads
        heap.pull(parts.pool());
        parts.pool().ensureFreeBlocks(blocks);
        heap.push(parts.pool());
    }

    /** Grows the table; the heap's bitmap goes to the host and back, the mirror is loaded anew. */
    void resize() {
        heap.pull(parts.pool());
        parts.resize();
        heap.push(parts.pool());
        loadMirror();
    }

    /** TableParams over the mirror as the kernels receive them. */
    byte[] mirrorTableParams() {
        PoolTable pool = parts.pool();
        return mirror.tableParams(pool.layout(), geometry, pool.seeds(), pool.formatVersion());
    }

    /** Slots whose HBM mirror copy or tag differs from the pool (DeviceIndexMirror.staleSlots); nothing in flight. */
    long staleMirrorSlots() {
        PoolTable pool = parts.pool();
        return mirror.staleSlots(pool.layout(), geometry, pool.mapping());
    }

    void loadMirror() {
        PoolTable pool = parts.pool();
        mirror.load(pool.layout(), geometry, pool.seeds(), pool.formatVersion(), parts.kernels().registration());
    }
}
