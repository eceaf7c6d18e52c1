package org.gphash.cuda;

import static jcuda.driver.JCudaDriver.cuEventCreate;
import static jcuda.driver.JCudaDriver.cuEventDestroy;
import static jcuda.driver.JCudaDriver.cuEventElapsedTime;
import static jcuda.driver.JCudaDriver.cuEventRecord;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoHAsync;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoDAsync;
import static jcuda.driver.JCudaDriver.cuMemsetD8Async;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;

import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;
import jcuda.driver.CUfunction;
import jcuda.driver.CUstream;
import org.gphash.index.Geometry;

/**
 * The v2 batch pipeline's host side (cuda/src/main/cuda/gphash/pipeline/): its device buffers, sized
 * for a capacity class (a power of two of operations), and the queue of stage launches for one
 * batch on one stream. A batch's sizes and buffers are read by the kernels from device memory, so
 * the launches depend only on the capacity class.
 *
 * <p>Stages: group by key (hash table, stable radix sort) -> look keys up in the HBM mirror ->
 * outcomes and net effects (two max-scans) -> claim insert slots in the mirror -> read pool values in
 * address order -> take blocks, write values, keys and meta words in persist order and address order
 * -> BktCache and the heap follow. Not thread-safe.
 */
final class BatchPipeline implements AutoCloseable {

    /** -Dgphash.pipeline.debug=true prints every batch's counters (a diagnostic). */
    static final boolean DEBUG = Boolean.getBoolean("gphash.pipeline.debug");

    /** The smallest capacity class: a batch's buffers are sized for at least this many operations. */
    static final long MIN_CAPACITY = 1L << 12;
    /** Blocks of a strided kernel at most: enough warps to keep an H100's memory system busy. */
    private static final int MAX_BLOCKS = 4096;

    /** The stages, as the profile names them. */
    enum Stage { GROUP, SORT, RESOLVE, SEMANTICS, PLACE, READ, TAKE, WRITE_VALUES, WRITE_KEYS, PUBLISH, CACHE, RETIRE }

    /** One batch in device memory: the PipeBatch struct's fields. */
    record DeviceOps(long n, long kinds, long keys, long values, long codes, long out, long ops, long clock) {
    }

    private final PipelineKernels k;
    private final DeviceScan scan;
    private final RadixSort sort;
    private final Geometry geometry;

    private final DeviceBuffer descriptor = new DeviceBuffer();
    private final DeviceBuffer counters = new DeviceBuffer();
    private final DeviceBuffer sortKeys = new DeviceBuffer();
    private final DeviceBuffer sortVals = new DeviceBuffer();
    private final DeviceBuffer altKeys = new DeviceBuffer();
    private final DeviceBuffer altVals = new DeviceBuffer();
    private final DeviceBuffer lastSet = new DeviceBuffer();
    private final DeviceBuffer lastSrc = new DeviceBuffer();
    private final DeviceBuffer vsrc = new DeviceBuffer();
    private final DeviceBuffer owner = new DeviceBuffer();
    private final DeviceBuffer gStart = new DeviceBuffer();
    private final DeviceBuffer gEnd = new DeviceBuffer();
    private final DeviceBuffer gMeta = new DeviceBuffer();
    private final DeviceBuffer gSlot = new DeviceBuffer();
    private final DeviceBuffer gBucket = new DeviceBuffer();
    private final DeviceBuffer gFp = new DeviceBuffer();
    private final DeviceBuffer gHash = new DeviceBuffer();
    private final DeviceBuffer gAction = new DeviceBuffer();
    private final DeviceBuffer gSrc = new DeviceBuffer();
    private final DeviceBuffer gBlock = new DeviceBuffer();
    private final DeviceBuffer gRead = new DeviceBuffer();
    private final DeviceBuffer gNeed = new DeviceBuffer();
    private final DeviceBuffer groups = new DeviceBuffer();
    private final DeviceBuffer inserts = new DeviceBuffer();
    private final DeviceBuffer vwrites = new DeviceBuffer();
    private final DeviceBuffer deletes = new DeviceBuffer();
    private final DeviceBuffer unsortedOff = new DeviceBuffer();
    private final DeviceBuffer unsortedEnt = new DeviceBuffer();
    private final DeviceBuffer reads = new DeviceBuffer();
    private final DeviceBuffer slotWrites = new DeviceBuffer();
    private final DeviceBuffer bins = new DeviceBuffer();
    private final DeviceBuffer binStart = new DeviceBuffer();
    private final DeviceBuffer binFill = new DeviceBuffer();
    private final DeviceBuffer gather = new DeviceBuffer();
    private final DeviceBuffer blocks = new DeviceBuffer();
    private final DeviceBuffer kindCounts = new DeviceBuffer();
    /**
     * Batches queued and not yet awaited, at most: each has its own pinned descriptor, counters and
     * events, so a host thread can stage the next batch while the GPU runs this one.
     */
    static final int SLOTS = 4;
    private final PinnedBuffer hostDescriptor = new PinnedBuffer();
    private final PinnedBuffer hostCounters = new PinnedBuffer();
    private final List<DeviceBuffer> all = List.of(descriptor, counters, sortKeys, sortVals, altKeys, altVals, lastSet,
            lastSrc, vsrc, owner, gStart, gEnd, gMeta, gSlot, gBucket, gFp, gHash, gAction, gSrc, gBlock, gRead, gNeed, groups,
            inserts, vwrites, deletes, unsortedOff, unsortedEnt, reads, slotWrites, bins, binStart, binFill, gather, blocks,
            kindCounts);

    private long capacity;

    /**
     * The stage launches of a batch, captured once per shape and parameters as a CUDA graph and
     * replayed with one launch: a batch's launches depend only on its capacity class, what it does
     * and where things are (its sizes are read from device memory), and the host's launch overhead,
     * not the GPU, is what limits small batches. -Dgphash.pipeline.graphs=false launches every stage.
     */
    private static final boolean GRAPHS = !"false".equals(System.getProperty("gphash.pipeline.graphs"));
    private static final int MAX_GRAPHS = 32;

    private record GraphKey(long capacity, boolean reads, int mode, boolean cacheOn, java.nio.ByteBuffer params) {
    }

    private record Graph(jcuda.driver.CUgraph graph, jcuda.driver.CUgraphExec exec) {
    }

    private final Map<GraphKey, Graph> graphs = new java.util.HashMap<>();
    private long graphCaptures;

    /** Graphs captured since this pipeline was made (each a new shape or new buffers). */
    long graphCaptures() {
        return graphCaptures;
    }

    private void dropGraphs() {
        for (Graph g : graphs.values()) {
            jcuda.driver.JCudaDriver.cuGraphExecDestroy(g.exec());
            jcuda.driver.JCudaDriver.cuGraphDestroy(g.graph());
        }
        graphs.clear();
    }
    private final CUevent[] marks = new CUevent[Stage.values().length + 1];
    private final long[] stageNanos = new long[Stage.values().length];
    private boolean profile;
    private final CUevent[] begin = new CUevent[SLOTS];
    private final CUevent[] end = new CUevent[SLOTS];
    private int nextSlot;
    private long lastGpuNanos;
    private long totalGpuNanos;
    private long batches;

    BatchPipeline(PipelineKernels kernels, Geometry geometry) {
        this.k = kernels;
        this.geometry = geometry;
        this.scan = new DeviceScan(kernels);
        this.sort = new RadixSort(kernels, scan);
        for (int i = 0; i < SLOTS; i++) {
            begin[i] = new CUevent();
            end[i] = new CUevent();
            cuEventCreate(begin[i], CUevent_flags.CU_EVENT_DEFAULT);
            cuEventCreate(end[i], CUevent_flags.CU_EVENT_DEFAULT);
        }
        hostDescriptor.ensure(SLOTS * KernelParams.PIPE_BATCH_FIELDS * 8L);
        hostCounters.ensure(SLOTS * KernelParams.PIPE_COUNTERS * 8L);
    }

    /** The capacity class for n operations: a power of two, at least {@link #MIN_CAPACITY}. */
    static long capacityFor(long n) {
        long c = MIN_CAPACITY;
        while (c < n) {
            c <<= 1;
        }
        return c;
    }

    /** GPU memory the buffers of a capacity class take (for the mode decision at open). */
    static long bytesFor(long capacity, int valueSize) {
        long perOp = 4 * 4 + 3 * 4 + 4 * 5 + 12 + 8 + 8 + valueSize;   // sort, scans, lists, unsorted, blocks, gather
        long perEntry = 2 * (4 * 7 + 8 * 4 + 8 * KernelParams.MAX_HASHES);  // group table entries: twice the capacity
        return capacity * (perOp + perEntry) + 3L * KernelParams.ADDRESS_BINS * 4 + (64L << 20);  // + scan/sort scratch
    }

    /** Records the time of each stage with GPU events (a diagnostic: it adds a little per stage). */
    void profile(boolean on) {
        if (on && marks[0] == null) {
            for (int i = 0; i < marks.length; i++) {
                marks[i] = new CUevent();
                cuEventCreate(marks[i], CUevent_flags.CU_EVENT_DEFAULT);
            }
        }
        profile = on;
    }

    /** GPU time per stage since the last reset, in nanoseconds (profiling on). */
    Map<Stage, Long> stageNanos() {
        Map<Stage, Long> m = new LinkedHashMap<>();
        for (Stage s : Stage.values()) {
            m.put(s, stageNanos[s.ordinal()]);
        }
        return m;
    }

    void resetProfile() {
        java.util.Arrays.fill(stageNanos, 0);
        totalGpuNanos = 0;
        batches = 0;
    }

    /** GPU time of the last batch, first launch to last (events). */
    long lastGpuNanos() {
        return lastGpuNanos;
    }

    long totalGpuNanos() {
        return totalGpuNanos;
    }

    private void ensureCapacity(long n) {
        long c = capacityFor(n);
        if (c <= capacity) {
            return;
        }
        dropGraphs();  // they refer to the buffers about to be replaced
        int vs = geometry.valueSize();
        long t = 2 * c;
        descriptor.ensure(KernelParams.PIPE_BATCH_FIELDS * 8L);
        counters.ensure(KernelParams.PIPE_COUNTERS * 8L);
        kindCounts.ensure(4 * 8L);
        for (DeviceBuffer b : new DeviceBuffer[] {sortKeys, sortVals, altKeys, altVals, lastSet, lastSrc, vsrc, groups,
                inserts, vwrites, deletes, unsortedEnt, reads, slotWrites}) {
            b.ensure(c * 4);
        }
        unsortedOff.ensure(c * 8);
        blocks.ensure(c * 8);
        gather.ensure(c * vs);
        for (DeviceBuffer b : new DeviceBuffer[] {owner, gStart, gEnd, gFp, gAction, gSrc, gRead, gNeed}) {
            b.ensure(t * 4);
        }
        for (DeviceBuffer b : new DeviceBuffer[] {gMeta, gSlot, gBucket, gBlock}) {
            b.ensure(t * 8);
        }
        gHash.ensure(t * 8 * KernelParams.MAX_HASHES);
        for (DeviceBuffer b : new DeviceBuffer[] {bins, binStart, binFill}) {
            b.ensure(KernelParams.ADDRESS_BINS * 4L);
        }
        capacity = c;
    }

    /**
     * Counts a device-resident batch's kinds (value writes, reads, deletes) so the host can size the
     * heap and skip stages. Waits for the count.
     */
    long[] countKinds(CUstream stream, DeviceOps ops) {
        ensureCapacity(Math.max(1, ops.n()));
        int slot = takeSlot();
        upload(stream, ops, slot);
        cuMemsetD8Async(kindCounts.pointer(), (byte) 0, 4 * 8L, stream);
        Launcher.launchBlocks(k.countKinds, grid(ops.n()), stream, KernelParams.longs(descriptor.address()),
                KernelParams.longs(kindCounts.address()));
        long[] c = new long[4];
        long at = (long) slot * KernelParams.PIPE_COUNTERS * 8;
        cuMemcpyDtoHAsync(hostCounters.pointer().withByteOffset(at), kindCounts.pointer(), 4 * 8L, stream);
        cuStreamSynchronize(stream);
        for (int i = 0; i < 4; i++) {
            c[i] = hostCounters.segment().get(ValueLayout.JAVA_LONG, at + i * 8L);
        }
        return c;
    }

    /** The next slot (descriptor, counters, events); callers keep fewer than SLOTS batches in flight. */
    private int takeSlot() {
        int s = nextSlot;
        nextSlot = (nextSlot + 1) % SLOTS;
        return s;
    }

    private void upload(CUstream stream, DeviceOps ops, int slot) {
        long[] d = {ops.n(), ops.kinds(), ops.keys(), ops.values(), ops.codes(), ops.out(), ops.ops(), ops.clock()};
        long at = (long) slot * KernelParams.PIPE_BATCH_FIELDS * 8;
        for (int i = 0; i < d.length; i++) {
            hostDescriptor.segment().set(ValueLayout.JAVA_LONG, at + i * 8L, d[i]);
        }
        cuMemcpyHtoDAsync(descriptor.pointer(), hostDescriptor.pointer().withByteOffset(at), d.length * 8L, stream);
    }

    /** A batch queued by {@link #enqueue}: its slot and what {@link #await} reports. */
    record Ticket(int slot, long n, long capacity, boolean reads, boolean writes) {
    }

    /**
     * Runs one batch of at most 2^31 operations on {@code stream} and waits for it; returns its
     * counters (KernelParams.PIPE_*). {@code table}: TableParams of the pool; {@code mirrorTable}: of the
     * mirror; {@code cache}: CacheParams (capacity 0: none); {@code reads}/{@code writes}: whether any
     * operation reads or writes a value (stages for neither are skipped).
     */
    long[] run(CUstream stream, DeviceOps ops, byte[] table, byte[] mirrorTable, byte[] cache, boolean cacheOn,
               DeviceHeap heap, long poolLength, boolean reads, boolean writes) {
        long[] out = await(enqueue(stream, ops, table, mirrorTable, cache, cacheOn, heap, poolLength, reads, writes));
        if (DEBUG) {
            checkLists(out);  // only here: the lists are this batch's until the next is queued
        }
        return out;
    }

    /**
     * Queues one batch on {@code stream} without waiting (see {@link #run}); {@link #await} gives its
     * counters. Batches queued on one stream run one after another, in order; at most SLOTS - 1 may
     * be in flight, and the heap may not change (grow) while any is.
     */
    Ticket enqueue(CUstream stream, DeviceOps ops, byte[] table, byte[] mirrorTable, byte[] cache, boolean cacheOn,
                   DeviceHeap heap, long poolLength, boolean reads, boolean writes) {
        return enqueue(stream, ops, table, mirrorTable, cache, cacheOn, heap, poolLength, reads, writes, false);
    }

    /**
     * As above; with {@code ungrouped} (a batch of reads only) the batch is queued without grouping by
     * key at all (no key table, no sort: fewest launches), which is always correct for reads and pays
     * when their keys do not repeat. The caller predicts it from the last batch's sample
     * ({@link KernelParams#PIPE_REPEATS} in the counters); without it the GPU decides from this batch's.
     */
    Ticket enqueue(CUstream stream, DeviceOps ops, byte[] table, byte[] mirrorTable, byte[] cache, boolean cacheOn,
                   DeviceHeap heap, long poolLength, boolean reads, boolean writes, boolean ungrouped) {
        if (ungrouped && writes) {
            throw new IllegalArgumentException("only a batch of reads may run ungrouped");
        }
        int mode = writes ? 0 : ungrouped ? 2 : 1;
        long n = ops.n();
        ensureCapacity(n);
        long c = capacity;
        long t = 2 * c;
        int tableBits = Long.numberOfTrailingZeros(t);
        boolean inAlt = (RadixSort.passes(tableBits) & 1) == 1;
        int shift = Math.max(0, 64 - Long.numberOfLeadingZeros(Math.max(1, poolLength - 1)) - 16);
        byte[] p = KernelParams.longs(descriptor.address(), c, t, sortKeys.address(), sortVals.address(),
                inAlt ? altKeys.address() : sortKeys.address(), inAlt ? altVals.address() : sortVals.address(),
                lastSet.address(), lastSrc.address(), vsrc.address(), owner.address(), gStart.address(), gEnd.address(),
                gMeta.address(), gSlot.address(), gBucket.address(), gFp.address(), gHash.address(), gAction.address(), gSrc.address(),
                gBlock.address(), gRead.address(), gNeed.address(), groups.address(), inserts.address(), vwrites.address(),
                deletes.address(), unsortedOff.address(), unsortedEnt.address(), this.reads.address(),
                slotWrites.address(), bins.address(), binStart.address(), binFill.address(), gather.address(),
                blocks.address(), counters.address(), shift);
        byte[] h = heap.params();
        int stage = 0;
        // Scratch space for every scan and the sort of this batch, before anything is queued.
        if (sort.reserve(c) | scan.reserve(Math.max(Math.max(c, KernelParams.ADDRESS_BINS), heap.words()))) {
            dropGraphs();  // a scratch buffer moved
        }

        int slot = takeSlot();
        cuEventRecord(begin[slot], stream);
        upload(stream, ops, slot);
        if (GRAPHS && !profile) {
            GraphKey key = new GraphKey(c, reads, mode, cacheOn, graphParams(table, mirrorTable, cache, h, p));
            Graph g = graphs.get(key);
            if (g == null) {
                if (graphs.size() >= MAX_GRAPHS) {
                    dropGraphs();
                }
                jcuda.driver.JCudaDriver.cuStreamBeginCapture(stream,
                        jcuda.driver.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
                queueStages(stream, c, t, tableBits, table, mirrorTable, cache, cacheOn, h, p, heap, reads, writes, mode);
                jcuda.driver.CUgraph graph = new jcuda.driver.CUgraph();
                jcuda.driver.JCudaDriver.cuStreamEndCapture(stream, graph);
                jcuda.driver.CUgraphExec exec = new jcuda.driver.CUgraphExec();
                jcuda.driver.JCudaDriver.cuGraphInstantiate(exec, graph, 0);
                g = new Graph(graph, exec);
                graphs.put(key, g);
                graphCaptures++;
            }
            jcuda.driver.JCudaDriver.cuGraphLaunch(g.exec(), stream);
        } else {
            stage = queueStages(stream, c, t, tableBits, table, mirrorTable, cache, cacheOn, h, p, heap, reads, writes, mode);
        }
        long at = (long) slot * KernelParams.PIPE_COUNTERS * 8;
        cuMemcpyDtoHAsync(hostCounters.pointer().withByteOffset(at), counters.pointer(), KernelParams.PIPE_COUNTERS * 8L,
                stream);
        cuEventRecord(end[slot], stream);
        if (profile) {
            lastProfiledStages = stage;
        }
        return new Ticket(slot, n, c, reads, writes);
    }

    private int lastProfiledStages;

    /** Waits for a queued batch and returns its counters (KernelParams.PIPE_*). */
    long[] await(Ticket ticket) {
        int slot = ticket.slot();
        jcuda.driver.JCudaDriver.cuEventSynchronize(end[slot]);
        long n = ticket.n();
        long c = ticket.capacity();
        boolean reads = ticket.reads();
        boolean writes = ticket.writes();
        int stage = lastProfiledStages;
        float[] ms = new float[1];
        cuEventElapsedTime(ms, begin[slot], end[slot]);
        lastGpuNanos = (long) (ms[0] * 1e6);
        totalGpuNanos += lastGpuNanos;
        batches++;
        if (profile) {
            for (int s = 1; s < stage; s++) {
                cuEventElapsedTime(ms, marks[s - 1], marks[s]);
                stageNanos[s - 1] += (long) (ms[0] * 1e6);
            }
        }
        long[] out = new long[KernelParams.PIPE_COUNTERS];
        long at = (long) slot * KernelParams.PIPE_COUNTERS * 8;
        for (int i = 0; i < out.length; i++) {
            out[i] = hostCounters.segment().get(ValueLayout.JAVA_LONG, at + i * 8L);
        }
        if (DEBUG) {
            System.err.printf("gphash pipeline: n=%d capacity=%d reads=%b writes=%b counters=%s gpu=%.3f ms%n", n, c, reads,
                    writes, java.util.Arrays.toString(out), lastGpuNanos / 1e6);
        }
        return out;
    }

    /** A diagnostic (gphash.pipeline.debug): every list a batch built, checked against the others. */
    private void checkLists(long[] counters) {
        int groupCount = (int) counters[KernelParams.PIPE_GROUPS];
        int[] groupList = ints(groups, groupCount);
        int[] insertList = ints(inserts, (int) counters[KernelParams.PIPE_INSERTS]);
        int[] writeList = ints(vwrites, (int) counters[KernelParams.PIPE_VALUE_WRITES]);
        int[] action = ints(gAction, (int) (2 * capacity));
        int[] start = ints(gStart, (int) (2 * capacity));
        int[] end = ints(gEnd, (int) (2 * capacity));
        java.util.Set<Integer> g = new java.util.HashSet<>();
        for (int e : groupList) {
            if (!g.add(e)) {
                System.err.println("  duplicate group " + e + " start " + start[e] + " end " + end[e]);
            }
        }
        java.util.Set<Integer> ins = new java.util.HashSet<>();
        for (int e : insertList) {
            if (!ins.add(e)) {
                System.err.println("  duplicate insert group " + e);
            }
        }
        java.util.Set<Integer> w = new java.util.HashSet<>();
        for (int e : writeList) {
            if (!w.add(e)) {
                System.err.println("  duplicate value-write group " + e);
            }
        }
        int lost = 0;
        for (int e : ins) {
            if (!w.contains(e) && action[e] != 4) {
                if (lost++ < 5) {
                    System.err.println("  insert group " + e + " neither placed nor failed: action " + action[e] + " start "
                            + start[e] + " end " + end[e]);
                }
            }
        }
        System.err.printf("  lists: %d groups (%d distinct), %d inserts (%d distinct), %d value writes (%d distinct), %d "
                + "inserts lost%n", groupList.length, g.size(), insertList.length, ins.size(), writeList.length, w.size(), lost);
    }

    private static int[] ints(DeviceBuffer b, int n) {
        int[] out = new int[n];
        if (n > 0) {
            jcuda.driver.JCudaDriver.cuMemcpyDtoH(jcuda.Pointer.to(out), b.pointer(), n * 4L);
        }
        return out;
    }

    /** The kernels and memsets of one batch, queued on {@code stream}; returns the profiling marks recorded. */
    private int queueStages(CUstream stream, long c, long t, int tableBits, byte[] table, byte[] mirrorTable, byte[] cache,
                            boolean cacheOn, byte[] h, byte[] p, DeviceHeap heap, boolean reads, boolean writes, int mode) {
        int stage = 0;
        boolean mayGroup = mode != 2;
        cuMemsetD8Async(counters.pointer(), (byte) 0, KernelParams.PIPE_COUNTERS * 8L, stream);
        if (mayGroup) {
            cuMemsetD8Async(owner.pointer(), (byte) 0xFF, t * 4, stream);
        }
        mark(stream, stage++);
        // GROUP: whether a batch of reads runs ungrouped (a sample says its keys hardly repeat), the key table
        Launcher.launchBlocks(k.decide, 1, stream, table, p, KernelParams.int32(mode));
        if (mayGroup) {
            Launcher.launchBlocks(k.group, grid(c), stream, table, p);
        }
        mark(stream, stage++);
        // SORT: of every operation, or of none when the batch runs ungrouped (the count it reads is 0)
        if (mayGroup) {
            sort.sort(stream, sortKeys.address(), sortVals.address(), altKeys.address(), altVals.address(), c,
                    counters.address() + KernelParams.PIPE_SORT_N * 8L, tableBits);
        }
        mark(stream, stage++);
        // RESOLVE (groups from the sort, or identity groups: each kernel runs in its mode only)
        if (mayGroup) {
            Launcher.launchBlocks(k.heads, grid(c), stream, p);
        }
        Launcher.launchBlocks(k.identityGroups, grid(c), stream, table, p);
        Launcher.launchBlocks(k.resolve, warpGrid(c), stream, table, mirrorTable, p, cache);
        mark(stream, stage++);
        // SEMANTICS (identity groups of reads set the scans' results themselves)
        if (mayGroup) {
            scan.inclusiveMax(stream, lastSet.address(), lastSet.address(), c);
            Launcher.launchBlocks(k.sourceInput, grid(c), stream, p);
            scan.inclusiveMax(stream, lastSrc.address(), lastSrc.address(), c);
            Launcher.launchBlocks(k.net, grid(c), stream, p);
        }
        mark(stream, stage++);
        // PLACE
        if (writes) {
            Launcher.launchBlocks(k.place, warpGrid(c), stream, table, mirrorTable, p);
        }
        Launcher.launchBlocks(k.outcome, grid(c), stream, p);
        mark(stream, stage++);
        // READ
        if (reads) {
            zeroBins(stream);
            Launcher.launchBlocks(k.readList, grid(c), stream, p);
            scan.exclusiveSum(stream, bins.address(), binStart.address(), KernelParams.ADDRESS_BINS);
            Launcher.launchBlocks(k.binReads, grid(c), stream, p);
            Launcher.launchBlocks(k.gather, warpGrid(c), stream, table, p, cache);
            Launcher.launchBlocks(k.fanout, warpGrid(c), stream, table, p);
        }
        mark(stream, stage++);
        if (writes) {
            // TAKE
            Launcher.launchBlocks(k.heapFreeCounts, grid(heap.words()), stream, h);
            scan.exclusiveSum(stream, heap.freePrefixAddress(), heap.freePrefixAddress(), heap.words());
            Launcher.launchBlocks(k.take, grid(heap.words()), stream, p, h);
            mark(stream, stage++);
            // WRITE_VALUES (phase V), binned slot list
            zeroBins(stream);
            Launcher.launchBlocks(k.writeValues, warpGrid(c), stream, table, p);
            scan.exclusiveSum(stream, bins.address(), binStart.address(), KernelParams.ADDRESS_BINS);
            Launcher.launchBlocks(k.binSlots, grid(c), stream, p);
            mark(stream, stage++);
            // WRITE_KEYS (phase K), PUBLISH (phase M)
            Launcher.launchBlocks(k.writeKeys, grid(c), stream, table, p);
            mark(stream, stage++);
            Launcher.launchBlocks(k.publish, grid(c), stream, table, mirrorTable, p);
            mark(stream, stage++);
            if (cacheOn) {
                Launcher.launchBlocks(k.cacheMirror, warpGrid(c), stream, table, mirrorTable, p, cache);
            }
            mark(stream, stage++);
            Launcher.launchBlocks(k.retire, grid(c), stream, p, h);
            mark(stream, stage++);
        }
        return stage;
    }

    /** What a captured graph depends on besides its shape: every struct its launches were given (BktCache's clock aside). */
    private static java.nio.ByteBuffer graphParams(byte[] table, byte[] mirrorTable, byte[] cache, byte[] heap, byte[] pipe) {
        byte[] all = new byte[table.length + mirrorTable.length + cache.length + heap.length + pipe.length];
        int at = 0;
        for (byte[] b : new byte[][] {table, mirrorTable, cache, heap, pipe}) {
            System.arraycopy(b, 0, all, at, b.length);
            at += b.length;
        }
        // CacheParams.clock (field 10) changes every batch and the pipeline does not read it (PipeBatch.clock instead).
        int clock = table.length + mirrorTable.length + 10 * 8;
        java.util.Arrays.fill(all, clock, clock + 8, (byte) 0);
        return java.nio.ByteBuffer.wrap(all);
    }

    private void mark(CUstream stream, int index) {
        if (profile) {
            cuEventRecord(marks[index], stream);
        }
    }

    private void zeroBins(CUstream stream) {
        cuMemsetD8Async(bins.pointer(), (byte) 0, KernelParams.ADDRESS_BINS * 4L, stream);
        cuMemsetD8Async(binFill.pointer(), (byte) 0, KernelParams.ADDRESS_BINS * 4L, stream);
    }

    /** Blocks of Launcher.BLOCK threads for one thread per item, at most MAX_BLOCKS (kernels stride). */
    private static int grid(long items) {
        return (int) Math.max(1, Math.min(MAX_BLOCKS, (items + Launcher.BLOCK - 1) / Launcher.BLOCK));
    }

    /** The same for one warp per item. */
    private static int warpGrid(long items) {
        return grid(items * 32);
    }

    @Override
    public void close() {
        for (DeviceBuffer b : all) {
            b.close();
        }
        scan.close();
        sort.close();
        dropGraphs();
        hostDescriptor.close();
        hostCounters.close();
        for (int i = 0; i < SLOTS; i++) {
            cuEventDestroy(begin[i]);
            cuEventDestroy(end[i]);
        }
        for (CUevent e : marks) {
            if (e != null) {
                cuEventDestroy(e);
            }
        }
    }
}
