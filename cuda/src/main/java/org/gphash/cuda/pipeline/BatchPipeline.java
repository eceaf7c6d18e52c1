package org.gphash.cuda.pipeline;

import static jcuda.driver.JCudaDriver.cuEventCreate;
import static jcuda.driver.JCudaDriver.cuEventDestroy;
import static jcuda.driver.JCudaDriver.cuEventElapsedTime;
import static jcuda.driver.JCudaDriver.cuEventRecord;
import static jcuda.driver.JCudaDriver.cuEventSynchronize;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoHAsync;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoDAsync;
import static jcuda.driver.JCudaDriver.cuMemsetD8Async;

import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Map;

import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;
import jcuda.driver.CUfunction;
import jcuda.driver.CUstream;
import org.gphash.Geometry;
import org.gphash.GpuTuning;
import org.gphash.cuda.routing.Router;
import org.gphash.cuda.runtime.DeviceBuffer;
import org.gphash.cuda.runtime.KernelParams;
import org.gphash.cuda.runtime.Launcher;
import org.gphash.cuda.runtime.ParamStruct;
import org.gphash.cuda.runtime.PinnedBuffer;
import org.gphash.cuda.staging.PipelineTicket;

/**
 * The v2 batch pipeline's host side (cuda/src/main/cuda/gphash/pipeline/): the queue of stage launches
 * for one batch on one stream, over {@link PipelineBuffers}, replayed as a CUDA graph
 * ({@link StageGraphs}) once captured, timed per stage on request ({@link StageProfile}). A batch's
 * sizes and buffers are read by the kernels from a descriptor in device memory, so the launches depend
 * only on its capacity class and what it does.
 *
 * <p>Stages: group by key (key table, stable radix sort; skipped for reads whose keys do not repeat)
 * -> look keys up in the HBM mirror -> outcomes and net effects (two max-scans) -> claim insert slots in
 * the mirror -> read pool values in address order -> take blocks, write values, keys and meta words in
 * persist order and address order -> BktCache and the heap follow. Not thread-safe.
 *
 * <p>Why this class is long: it queues every stage of a batch in order, each a launch or two with its
 * arguments; the stages' CUDA is in pipeline/*.cuh, their buffers in {@link PipelineBuffers}.
 */
public final class BatchPipeline implements AutoCloseable {

    /** Blocks of a strided kernel at most: enough warps to keep a Hopper GPU's memory system busy. */
    private static final int MAX_BLOCKS = 4096;
    /** Runs of capacity classes up to this take value blocks by next fit (takeBlocks). */
    static final long NEXT_FIT_MAX = 1 << 14;
    /** Address bins of runs of capacity classes up to FEW_BINS_MAX (addressBins). */
    static final int FEW_BINS = 1 << 10;
    static final long FEW_BINS_MAX = 1 << 14;
    /**
     * Lanes of host-batch chunks, taken in a ring: one chunk in flight each. Four keep the GPU fed
     * while the lock holder stages the next batch (several threads' batches of one chunk each, or
     * two batches' two chunks each); each costs its chunk's buffers in GPU and pinned memory. Two, three
     * and eight lanes ran slower from 16 threads (docs/lab/2026-11-27-chunks-and-lanes-from-16-threads.md).
     */
    static final int LANES = 4;

    /**
     * Batches queued and not yet awaited, at most: each has its own pinned descriptor, counters and
     * events, so a host thread can stage the next batch while the GPU runs this one.
     */
    static final int SLOTS = LANES + 4;
    /**
     * Batches of at most this many operations put every pool access in one address bin: a handful of
     * accesses gains nothing from address order, and the bins' memsets and scans (two stages of fixed
     * cost) would be most of such a batch's time ({@link GpuTuning#oneBinMax()}; 0: always bin).
     */
    private final int oneBinMax;
    /** {@link GpuTuning#logBatches()}: every batch's counters to standard error, and its lists checked. */
    private final boolean logBatches;
    /** An address shift that puts every pool offset in bin 0. */
    private static final int ONE_BIN_SHIFT = 63;

    /** One batch in device memory: the PipeBatch struct's fields. */
    record DeviceOps(long n, long kinds, long keys, long values, long codes, long out, long ops, long clock, long outAt,
                     long lengths, long outLengths) {

        /** A batch whose values all have the value size, and whose reads want no lengths. */
        DeviceOps(long n, long kinds, long keys, long values, long codes, long out, long ops, long clock, long outAt) {
            this(n, kinds, keys, values, codes, out, ops, clock, outAt, 0, 0);
        }

        /** The batch as its PipeBatch descriptor. */
        ParamStruct.Writer descriptor() {
            return KernelParams.pipeBatch(n, kinds, keys, values, codes, out, ops, clock, outAt, lengths, outLengths);
        }
    }

    private final PipelineKernels k;
    private final DeviceScan scan;
    private final RadixSort sort;
    private final PipelineBuffers b;
    private final StageGraphs graphs;
    private final StageProfile profile = new StageProfile();
    private final PinnedBuffer hostDescriptor = new PinnedBuffer();
    private final PinnedBuffer hostCounters = new PinnedBuffer();
    private final DeviceKindCount kindCount;
    private final CUevent[] begin = new CUevent[SLOTS];
    private final CUevent[] end = new CUevent[SLOTS];
    private int nextSlot;
    /** GPU time of the last run (a slice, or its rerun), and of the runs of the batch under way. */
    private long runGpuNanos;
    private long batchGpuNanos;
    private long lastBatchGpuNanos;
    private final float[] elapsedMs = new float[1];
    private long smallWriteBatches;
    /** The one-launch small writes' clock readings while stages are profiled (pipe_small_writes.cuh). */
    private static final int SMALL_WRITE_STAMPS = 13;
    private final DeviceBuffer smallWriteStamps = new DeviceBuffer();
    /** A one-launch run queued by {@link #enqueue} while profiled: its clock readings await collection. */
    private boolean stampsPending;
    /** Graphs of the small writes (their own: a few, by BktCache setting and reads). */
    private final StageGraphs smallWriteGraphs;
    /** Writing runs of at most this many operations run in one launch ({@link GpuTuning#smallWritesMax()}). */
    private final int smallWritesMax;
    /** The most blocks of the one-launch kernel resident at once (its cooperative launch's limit). */
    private final int smallWritesResident;
    /**
     * Operations per block of the one-launch kernel (smallWritesBlocks): on the GPHash artifact's
     * YCSB-A at 2^12, 32 and 128 a block ran best, fewer blocks of 512 worst
     * (docs/lab/2026-11-27-small-chunk-stages.md).
     */
    static final int SMALL_WRITES_OPS_PER_BLOCK = 32;
    /**
     * Runs of at most this many operations take one block (smallWritesBlocks): a small batch's
     * barriers are then a block's, cheaper than the grid's that two blocks need.
     */
    static final int SMALL_WRITES_ONE_BLOCK_MAX = 128;
    /** Whether probes run a thread per key (tag_probe.cuh's tag_probe_fits: 4 or 8 slots), else a warp. */
    private final boolean threadProbe;

    BatchPipeline(PipelineKernels kernels, Geometry geometry, GpuTuning tuning) {
        this.k = kernels;
        this.graphs = new StageGraphs(kernels.cuda);
        this.smallWriteGraphs = new StageGraphs(kernels.cuda);
        this.threadProbe = geometry.slotsPerBucket() == 4 || geometry.slotsPerBucket() == 8;
        this.oneBinMax = tuning.oneBinMax();
        this.smallWritesMax = tuning.smallWritesMax();
        this.smallWritesResident = Math.min(kernels.cuda.residentBlocks(kernels.smallWrites, Launcher.BLOCK),
                kernels.cuda.residentBlocks(kernels.smallWritesGrouped, Launcher.BLOCK));
        this.logBatches = tuning.logBatches();
        this.b = new PipelineBuffers(geometry);
        this.scan = new DeviceScan(kernels);
        this.sort = new RadixSort(kernels, scan);
        this.kindCount = new DeviceKindCount(kernels.countKinds);
        for (int i = 0; i < SLOTS; i++) {
            begin[i] = new CUevent();
            end[i] = new CUevent();
            cuEventCreate(begin[i], CUevent_flags.CU_EVENT_DEFAULT);
            cuEventCreate(end[i], CUevent_flags.CU_EVENT_DEFAULT);
        }
        hostDescriptor.ensure(SLOTS * KernelParams.PIPE_BATCH_FIELDS * 8L);
        hostCounters.ensure(SLOTS * KernelParams.PIPE_COUNTERS * 8L);
    }

    /** Times every stage with GPU events from now on (or stops), clearing what was timed. */
    public void profile(boolean on) {
        profile.enable(on);
    }

    /** GPU time per stage since profiling was turned on, in nanoseconds. */
    Map<StageProfile.Stage, Long> stageNanos() {
        return profile.nanos();
    }

    /**
     * GPU time of the last batch, first launch to last (events), summed over its runs: a batch larger
     * than a slice (values of more than 1 KiB) runs as several, and its last slice alone was a fraction.
     */
    long lastGpuNanos() {
        return lastBatchGpuNanos;
    }

    /** Closes the batch under way: its runs' GPU time becomes {@link #lastGpuNanos()}. */
    void endBatch() {
        lastBatchGpuNanos = batchGpuNanos;
        batchGpuNanos = 0;
    }

    /** Times a run between its slot's events (after they were reached). */
    private void timeRun(int slot) {
        cuEventElapsedTime(elapsedMs, begin[slot], end[slot]);
        runGpuNanos = (long) (elapsedMs[0] * 1e6);
        batchGpuNanos += runGpuNanos;
    }

    /** Graphs captured so far. */
    long graphCaptures() {
        return graphs.captures();
    }

    /**
     * Whether a batch of {@code n} operations runs in the buffers as they are: a larger one replaces
     * them (and the scan and sort scratch sized by them), which no batch still queued may be using.
     */
    boolean fits(long n) {
        return PipelineBuffers.capacityFor(Math.max(1, n)) <= b.capacity();
    }

    private void ensureCapacity(long n) {
        if (b.ensure(n)) {
            graphs.drop();  // they refer to the buffers just replaced
        }
    }

    /** Counts a device-resident batch's kinds ({@link DeviceKindCount}); waits for the count. */
    long[] countKinds(CUstream stream, DeviceOps ops, byte[] table) {
        ensureCapacity(Math.max(1, ops.n()));
        // Eight operations a thread: fewer blocks, each adding its sums once (pipeline.cuh).
        return kindCount.count(stream, ops, table, grid((ops.n() + 7) / 8));
    }

    /** The next slot (descriptor, counters, events); callers keep fewer than SLOTS batches in flight. */
    private int takeSlot() {
        int s = nextSlot;
        nextSlot = (nextSlot + 1) % SLOTS;
        return s;
    }

    private void upload(CUstream stream, DeviceOps ops, int slot) {
        long[] d = ops.descriptor().words();
        long at = (long) slot * KernelParams.PIPE_BATCH_FIELDS * 8;
        for (int i = 0; i < d.length; i++) {
            hostDescriptor.segment().set(ValueLayout.JAVA_LONG, at + i * 8L, d[i]);
        }
        cuMemcpyHtoDAsync(b.descriptor.pointer(), hostDescriptor.pointer().withByteOffset(at), d.length * 8L, stream);
    }

    /**
     * Runs one batch of at most 2^31 operations on {@code stream} and waits for it; returns its
     * counters (KernelParams.PIPE_*). {@code table}: TableParams of the pool; {@code mirrorTable}: of the
     * mirror; {@code cache}: CacheParams (capacity 0: none); {@code reads}/{@code writes}: whether any
     * operation reads or writes a value (stages for neither are skipped).
     */
    long[] run(CUstream stream, DeviceOps ops, byte[] table, byte[] mirrorTable, byte[] cache, boolean cacheOn,
               DeviceHeap heap, long poolLength, boolean reads, boolean writes) {
        long[] out = await(enqueue(stream, ops, table, mirrorTable, cache, cacheOn, heap, poolLength, reads, writes, false));
        if (logBatches) {
            b.checkLists(out);  // only here: the lists are this batch's until the next is queued
        }
        return out;
    }

    /**
     * Queues one batch on {@code stream} without waiting (see {@link #run}); {@link #await} gives its
     * counters. Batches queued on one stream run one after another, in order; at most SLOTS - 1 may
     * be in flight, and the heap may not change (grow) while any is. With {@code ungrouped} the batch
     * is queued without grouping by key at all (no key table, no sort, no scans: fewest launches):
     * always correct for reads, and paying when their keys do not repeat (the caller predicts it from
     * the last batch's sample, {@link KernelParams#PIPE_REPEATS}); for a batch that writes, correct
     * only when no key repeats, which the caller must know. Otherwise a batch of reads is grouped or
     * not as the GPU's sample of it decides. A writing batch of at most {@link GpuTuning#smallWritesMax()}
     * operations runs as one launch of the small writes' kernel ({@link Router#writesInOneLaunch}).
     */
    PipelineTicket enqueue(CUstream stream, DeviceOps ops, byte[] table, byte[] mirrorTable, byte[] cache, boolean cacheOn,
                   DeviceHeap heap, long poolLength, boolean reads, boolean writes, boolean ungrouped) {
        int mode = ungrouped ? 2 : writes ? 0 : 1;
        long n = ops.n();
        ensureCapacity(n);
        // Launches follow the batch's own capacity class, not the buffers' (which only grow): a batch
        // of 8 after a load in batches of 2^20 would otherwise launch 4096 blocks per kernel, scan 2^20
        // entries twice, sort 2^20 positions in three passes and clear a key table of 2^21 entries.
        long launch = PipelineBuffers.capacityFor(n);
        boolean oneLaunch = Router.writesInOneLaunch(n, writes, smallWritesMax);
        int bins = oneLaunch ? 1 : addressBins(n, launch, oneBinMax);
        byte[] p = b.params(bins == 1 ? ONE_BIN_SHIFT : PipelineBuffers.addressShift(poolLength, bins), launch);
        byte[] h = heap.params();
        // Scratch space for every scan and the sort of this batch, before anything is queued.
        if (sort.reserve(b.capacity()) | scan.reserve(Math.max(Math.max(b.capacity(), KernelParams.ADDRESS_BINS),
                heap.words()))) {
            graphs.drop();  // a scratch buffer moved
        }
        int slot = takeSlot();
        cuEventRecord(begin[slot], stream);
        upload(stream, ops, slot);
        if (oneLaunch) {
            // The counters are the kernel's to set (no memset): it starts by setting them.
            int flags = smallWritesFlags(reads, cacheOn);
            int blocks = smallWritesBlocks(n);
            profile.begin();  // timed by the kernel's own clock readings, not by marks
            long stamps = stampsWhileProfiled();
            Runnable one = () -> launchSmallWrites(!ungrouped, blocks, stream, table, mirrorTable, p, cache, h,
                    KernelParams.int32(flags), KernelParams.longs(stamps));
            if (stamps == 0) {
                graphs.launch(new StageGraphs.Key(launch, reads, true, ungrouped ? 0 : 1, blocks, cacheOn,
                        StageGraphs.params(table, mirrorTable, cache, h, p)), stream, one);
            } else {
                one.run();
                stampsPending = true;
            }
            smallWriteBatches++;
            return finishEnqueue(stream, slot, n, launch, reads, writes);
        }
        Runnable stages = () -> queueStages(stream, launch, table, mirrorTable, cache, cacheOn, h, p, heap, reads, writes,
                mode, bins);
        profile.begin();
        if (!profile.on()) {
            graphs.launch(new StageGraphs.Key(launch, reads, writes, mode, 0, cacheOn,
                    StageGraphs.params(table, mirrorTable, cache, h, p)), stream, stages);
        } else {
            stages.run();
        }
        return finishEnqueue(stream, slot, n, launch, reads, writes);
    }

    /**
     * Runs a writing batch of at most {@link GpuTuning#smallWritesMax()} operations in one launch
     * (pipeline/pipe_small_writes.cuh; {@code grouped}: its keys may repeat) and one copy each way: {@code io} holds
     * the batch staged ({@link SmallWrites#stage}), its descriptor pointing into {@code io}'s device
     * buffers; the counters, codes and values read come back into {@code io}'s pinned memory. Waits;
     * returns the counters (KernelParams.PIPE_*). Nothing else may be queued on {@code stream}.
     */
    long[] runSmallWrites(CUstream stream, SmallWrites io, long n, byte[] table, byte[] mirrorTable, byte[] cache,
                          boolean cacheOn, DeviceHeap heap, boolean reads, boolean grouped) {
        ensureCapacity(n);
        long launch = PipelineBuffers.capacityFor(n);
        byte[] p = b.params(ONE_BIN_SHIFT, launch, io.in.deviceAddress(), io.out.deviceAddress());
        int flags = smallWritesFlags(reads, cacheOn);
        // By the batch's layout class, not its size: one graph serves the class.
        int blocks = smallWritesBlocks(io.layout());
        long stamps = stampsWhileProfiled();
        byte[] h = heap.params();
        long in = io.inBytes();
        long out = io.outBytes();
        long stampsAt = stamps;
        Runnable queue = () -> {
            io.in.copyIn(in, stream);
            launchSmallWrites(grouped, blocks, stream, table, mirrorTable, p, cache, h, KernelParams.int32(flags),
                    KernelParams.longs(stampsAt));
            io.out.copyOut(out, stream);
        };
        int slot = takeSlot();
        cuEventRecord(begin[slot], stream);
        if (stamps == 0) {
            // Same addresses and sizes every time (SmallWrites' fixed layout): one graph launch.
            // The key holds every address the graph captured: the parameter structs, and the pinned
            // buffers its copies read and write.
            byte[] where = Arrays.copyOf(p, p.length + 16);
            ByteBuffer.wrap(where, p.length, 16).order(ByteOrder.LITTLE_ENDIAN)
                    .putLong(io.in.host().address()).putLong(io.out.host().address());
            smallWriteGraphs.launch(new StageGraphs.Key(in, reads, true, grouped ? 1 : 0, blocks, cacheOn,
                    StageGraphs.params(table, mirrorTable, cache, h, where)), stream, queue);
        } else {
            queue.run();
        }
        cuEventRecord(end[slot], stream);
        smallWriteBatches++;
        cuEventSynchronize(end[slot]);
        timeRun(slot);
        if (stamps != 0) {
            collectStamps();
        }
        return io.counters();
    }

    /** Where the one-launch kernel records its clock while stages are profiled, else 0 (none). */
    private long stampsWhileProfiled() {
        if (!profile.on()) {
            return 0;
        }
        smallWriteStamps.ensure(SMALL_WRITE_STAMPS * 8L);
        return smallWriteStamps.address();
    }

    /** Adds the one-launch kernel's clock readings to the profile (after it ran). */
    private void collectStamps() {
        long[] at = new long[SMALL_WRITE_STAMPS];
        jcuda.driver.JCudaDriver.cuMemcpyDtoH(jcuda.Pointer.to(at), smallWriteStamps.pointer(), at.length * 8L);
        profile.collectStamps(at);
    }

    /**
     * Runs a device-resident batch of gets in one launch ({@link SmallReads#queueOnDevice}) on
     * {@code stream} between this pipeline's events, and waits for it; its GPU time counts toward
     * {@link #lastGpuNanos()}.
     */
    void runGetsInOneLaunch(CUstream stream, SmallReads reads, long n, long keysAt, long outAt, long codesAt, byte[] table,
                            byte[] mirrorTable, byte[] cache, long clock) {
        int slot = takeSlot();
        cuEventRecord(begin[slot], stream);
        reads.queueOnDevice(stream, n, keysAt, outAt, codesAt, table, mirrorTable, cache, clock);
        cuEventRecord(end[slot], stream);
        cuEventSynchronize(end[slot]);
        timeRun(slot);
    }

    /** The one-launch kernel's flags (pipe_small_writes.cuh: kSmallReads, kSmallWrites, kSmallCacheOn). */
    private static int smallWritesFlags(boolean reads, boolean cacheOn) {
        return (reads ? KernelParams.SMALL_READS : 0) | KernelParams.SMALL_WRITES
                | (cacheOn ? KernelParams.SMALL_CACHE_ON : 0);
    }

    /**
     * The one-launch kernel's grid for a run of {@code n} operations: a block of eight warps per
     * {@link #SMALL_WRITES_OPS_PER_BLOCK} operations (its stages give a value copy or a probe a warp
     * each, and each is a round trip over the link), rounded up to a power of two so that a few grids
     * (and graphs) serve every size, and never more blocks than the GPU holds at once, as a cooperative
     * launch requires.
     */
    private int smallWritesBlocks(long n) {
        if (n <= SMALL_WRITES_ONE_BLOCK_MAX) {
            return 1;
        }
        long perOps = Math.max(1, (n + SMALL_WRITES_OPS_PER_BLOCK - 1) / SMALL_WRITES_OPS_PER_BLOCK);
        long wanted = Long.highestOneBit(perOps * 2 - 1);  // perOps rounded up to a power of two
        return (int) Math.min(wanted, smallWritesResident);
    }

    /**
     * Launches the one-launch kernel, the grouped instance where keys may repeat: cooperatively on
     * several blocks (its grid barriers need every block resident), plainly on one (its barriers are
     * then the block's).
     */
    private void launchSmallWrites(boolean grouped, int blocks, CUstream stream, byte[]... params) {
        CUfunction f = grouped ? k.smallWritesGrouped : k.smallWrites;
        if (blocks == 1) {
            Launcher.launchBlocks(f, 1, stream, params);
        } else {
            Launcher.launchCooperative(f, blocks, stream, params);
        }
    }

    /** The counters' copy back and the end event of a queued batch. */
    private PipelineTicket finishEnqueue(CUstream stream, int slot, long n, long launch, boolean reads, boolean writes) {
        long at = (long) slot * KernelParams.PIPE_COUNTERS * 8;
        cuMemcpyDtoHAsync(hostCounters.pointer().withByteOffset(at), b.counters.pointer(), KernelParams.PIPE_COUNTERS * 8L,
                stream);
        cuEventRecord(end[slot], stream);
        return new PipelineTicket(slot, n, launch, reads, writes);
    }

    /** Batches run by {@link #runSmallWrites} since open. */
    public long smallWriteBatches() {
        return smallWriteBatches;
    }

    /** Waits for a queued batch and returns its counters (KernelParams.PIPE_*). */
    long[] await(PipelineTicket ticket) {
        int slot = ticket.slot();
        cuEventSynchronize(end[slot]);
        timeRun(slot);
        profile.collect();
        if (stampsPending) {
            stampsPending = false;
            collectStamps();
        }
        long[] out = new long[KernelParams.PIPE_COUNTERS];
        long at = (long) slot * KernelParams.PIPE_COUNTERS * 8;
        for (int i = 0; i < out.length; i++) {
            out[i] = hostCounters.segment().get(ValueLayout.JAVA_LONG, at + i * 8L);
        }
        if (logBatches) {
            System.err.printf("gphash pipeline: n=%d capacity=%d reads=%b writes=%b counters=%s gpu=%.3f ms%n", ticket.n(),
                    ticket.capacity(), ticket.reads(), ticket.writes(), Arrays.toString(out), runGpuNanos / 1e6);
        }
        return out;
    }

    /** The kernels and memsets of one batch, queued on {@code stream} (captured into a graph, or launched). */
    private void queueStages(CUstream stream, long launch, byte[] table, byte[] mirrorTable, byte[] cache, boolean cacheOn,
                             byte[] h, byte[] p, DeviceHeap heap, boolean reads, boolean writes, int mode, int bins) {
        long c = launch;
        long t = 2 * launch;
        boolean mayGroup = mode != 2;
        cuMemsetD8Async(b.counters.pointer(), (byte) 0, KernelParams.PIPE_COUNTERS * 8L, stream);
        if (mayGroup) {
            cuMemsetD8Async(b.owner.pointer(), (byte) 0xFF, t * 4, stream);
        }
        profile.mark(stream);
        // GROUP: whether a batch of reads runs ungrouped (a sample says its keys hardly repeat), the key table
        Launcher.launchBlocks(k.decide, 1, stream, table, p, KernelParams.int32(mode));
        if (mayGroup) {
            Launcher.launchBlocks(k.group, grid(c), stream, table, p);
        }
        profile.mark(stream);
        // SORT: of every operation, or of none when the batch runs ungrouped (the count it reads is 0)
        if (mayGroup) {
            sort.sort(stream, b.sortKeys.address(), b.sortVals.address(), b.altKeys.address(), b.altVals.address(), c,
                    b.counters.address() + KernelParams.PIPE_SORT_N * 8L, PipelineBuffers.tableBits(launch));
        }
        profile.mark(stream);
        // RESOLVE (groups from the sort, or identity groups: each kernel runs in its mode only)
        if (mayGroup) {
            Launcher.launchBlocks(k.heads, grid(c), stream, p);
        }
        Launcher.launchBlocks(k.identityGroups, grid(c), stream, table, p);
        Launcher.launchBlocks(k.resolve, probeGrid(c), stream, table, mirrorTable, p, cache);
        profile.mark(stream);
        // SEMANTICS (identity groups set the presence scan's result themselves; the value source
        // needs no scan either; a batch of reads needs neither)
        if (mayGroup && writes) {
            scan.inclusiveMax(stream, b.lastSet.address(), b.lastSet.address(), c);
            Launcher.launchBlocks(k.sourceInput, grid(c), stream, p);
            scan.inclusiveMax(stream, b.lastSrc.address(), b.lastSrc.address(), c);
            Launcher.launchBlocks(k.net, grid(c), stream, p);
        } else if (mayGroup) {
            // A batch without writes: no member sets presence or a value source, so both scans
            // would leave -1 everywhere and no group has a net effect (its action stays none); only
            // the value source's -1s are written. Skipping the scans and the net kernel saves GPU
            // time on every grouped batch of reads (docs/lab/2026-11-27-small-chunk-stages.md).
            Launcher.launchBlocks(k.sourceInput, grid(c), stream, p);
        } else if (writes) {
            Launcher.launchBlocks(k.sourceInput, grid(c), stream, p);
            Launcher.launchBlocks(k.net, grid(c), stream, p);
        }
        profile.mark(stream);
        // PLACE
        if (writes) {
            Launcher.launchBlocks(k.place, probeGrid(c), stream, table, mirrorTable, p);
        }
        Launcher.launchBlocks(k.outcome, grid(c), stream, p);
        profile.mark(stream);
        // READ
        if (reads) {
            zeroBins(stream, bins);
            Launcher.launchBlocks(k.readList, grid(c), stream, table, p);
            binStarts(stream, bins);
            Launcher.launchBlocks(k.binReads, grid(c), stream, p);
            Launcher.launchBlocks(k.gather, warpGrid(c), stream, table, p, cache);
            Launcher.launchBlocks(k.fanout, warpGrid(c), stream, table, p);
        }
        profile.mark(stream);
        if (writes) {
            // TAKE
            takeBlocks(stream, c, table, p, h, heap);
            profile.mark(stream);
            // WRITE_VALUES (phase V), binned slot list
            zeroBins(stream, bins);
            Launcher.launchBlocks(k.writeValues, warpGrid(c), stream, table, p, h);
            binStarts(stream, bins);
            Launcher.launchBlocks(k.binSlots, grid(c), stream, p);
            profile.mark(stream);
            // WRITE_KEYS (phase K), PUBLISH (phase M)
            Launcher.launchBlocks(k.writeKeys, grid(c * 4), stream, table, mirrorTable, p);
            profile.mark(stream);
            cuMemsetD8Async(b.lines.pointer(), (byte) 0, t * 8, stream);
            Launcher.launchBlocks(k.lineTable, grid(c), stream, table, mirrorTable, p);
            Launcher.launchBlocks(k.publishPool, grid(c * 4), stream, table, mirrorTable, p);
            Launcher.launchBlocks(k.publishMirror, grid(c), stream, table, mirrorTable, p);
            profile.mark(stream);
            if (cacheOn) {
                Launcher.launchBlocks(k.cacheMirror, warpGrid(c), stream, table, mirrorTable, p, cache);
            }
            profile.mark(stream);
            Launcher.launchBlocks(k.retire, grid(c), stream, table, p, h);
            checkHeap(stream, h, heap, 4);
            profile.mark(stream);
        }
    }

    /** Where batches are logged: format 3's heap checked after its take ({@code at} 0) and after the retire (4). */
    private void checkHeap(CUstream stream, byte[] h, DeviceHeap heap, int at) {
        if (logBatches && heap instanceof DeviceSegmentHeap s) {
            Launcher.launchBlocks(k.heapCheck, grid(heap.segments()), stream, h, KernelParams.longs(s.checkCounts(at)));
        }
    }

    /** Empties the bins' counts and fill levels (only bin 0's when everything goes into it). */
    private void zeroBins(CUstream stream, int bins) {
        cuMemsetD8Async(b.bins.pointer(), (byte) 0, bins * 4L, stream);
        cuMemsetD8Async(b.binFill.pointer(), (byte) 0, bins * 4L, stream);
    }

    /** Each bin's first position in the sorted list: a scan of the counts, or 0 for the one bin. */
    private void binStarts(CUstream stream, int bins) {
        if (bins == 1) {
            cuMemsetD8Async(b.binStart.pointer(), (byte) 0, 4, stream);
        } else {
            scan.exclusiveSum(stream, b.bins.address(), b.binStart.address(), bins);
        }
    }

    /**
     * Address bins of a run's pool accesses: one up to {@link GpuTuning#oneBinMax()} operations (order
     * buys nothing), {@link #FEW_BINS} for capacity classes up to {@link #FEW_BINS_MAX} (a few
     * thousand accesses need no finer order, and clearing and scanning 2^16 bins was a fixed cost of
     * every such run), else {@link KernelParams#ADDRESS_BINS}.
     */
    static int addressBins(long n, long capacity, int oneBinMax) {
        return n <= oneBinMax ? 1 : capacity <= FEW_BINS_MAX ? FEW_BINS : KernelParams.ADDRESS_BINS;
    }

    /**
     * The blocks of a run's value writes. Format 2's bitmap: a run of a large class takes the lowest
     * free blocks (a count and scan over the whole bitmap, so the heap stays compact); one of at most
     * {@link #NEXT_FIT_MAX} operations takes the next free ones from a cursor in one block, since
     * scanning the whole bitmap was most of a small writing batch's GPU time. Format 3's segments:
     * the three steps of pipeline/heap_segments.cuh, from the segment the last take ended in, at
     * every size (no scan: a held segment's room is counted beside it).
     */
    private void takeBlocks(CUstream stream, long capacity, byte[] table, byte[] p, byte[] h, DeviceHeap heap) {
        if (heap.segmented()) {
            // A warp looks at 32 segments a step (a lane each), as many warps as a sixteenth of the
            // run (at least a block's worth, at most one per 32 segments), and the held step stops at
            // the first segments that hold the want.
            long warps = Math.max(Launcher.BLOCK / 32, Math.min((heap.segments() + 31) / 32, capacity / 16));
            Launcher.launchBlocks(k.valueClasses, grid(capacity), stream, table, p, h);
            Launcher.launchBlocks(k.takeWantPlan, 1, stream, p, h);
            Launcher.launchBlocks(k.takeHeld, grid(warps * 32), stream, p, h);
            Launcher.launchBlocks(k.takePlan, 1, stream, p, h);
            Launcher.launchBlocks(k.takeFresh, grid(capacity + KernelParams.SEGMENT_WORDS), stream, p, h);
            checkHeap(stream, h, heap, 0);
            return;
        }
        if (capacity <= NEXT_FIT_MAX) {
            Launcher.launchBlocks(k.takeNextFit, 1, stream, p, h);
            return;
        }
        Launcher.launchBlocks(k.heapFreeCounts, grid(heap.words()), stream, h);
        scan.exclusiveSum(stream, heap.freePrefixAddress(), heap.freePrefixAddress(), heap.words());
        Launcher.launchBlocks(k.take, grid(heap.words()), stream, p, h);
    }

    /** Blocks of Launcher.BLOCK threads for one thread per item, at most MAX_BLOCKS (kernels stride). */
    private static int grid(long items) {
        return (int) Math.max(1, Math.min(MAX_BLOCKS, (items + Launcher.BLOCK - 1) / Launcher.BLOCK));
    }

    /** For the probes: one thread per key, or one warp where the geometry's buckets do not suit tag rows. */
    private int probeGrid(long items) {
        return threadProbe ? grid(items) : warpGrid(items);
    }

    /** The same for one warp per item. */
    private static int warpGrid(long items) {
        return grid(items * 32);
    }

    @Override
    public void close() {
        graphs.close();
        profile.close();
        b.close();
        scan.close();
        sort.close();
        hostDescriptor.close();
        hostCounters.close();
        kindCount.close();
        smallWriteStamps.close();
        smallWriteGraphs.close();
        for (int i = 0; i < SLOTS; i++) {
            cuEventDestroy(begin[i]);
            cuEventDestroy(end[i]);
        }
    }
}
