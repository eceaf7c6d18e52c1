package org.gphash.cuda.pipeline;

import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;
import static jcuda.driver.JCudaDriver.cuStreamCreate;
import static jcuda.driver.JCudaDriver.cuStreamDestroy;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;

import jcuda.Pointer;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.GpuTuning;
import org.gphash.IndexStats;
import org.gphash.OpKind;
import org.gphash.cuda.path.BatchPath;
import org.gphash.cuda.path.EngineParts;
import org.gphash.cuda.path.ReadSlot;
import org.gphash.cuda.cache.BucketCache;
import org.gphash.cuda.routing.ChunkKinds;
import org.gphash.cuda.routing.DistinctKeys;
import org.gphash.cuda.routing.KindCounts;
import org.gphash.cuda.routing.RerunPlan;
import org.gphash.cuda.routing.Router;
import org.gphash.cuda.runtime.DeviceBuffer;
import org.gphash.cuda.runtime.DevicePointer;
import org.gphash.cuda.runtime.KernelParams;
import org.gphash.cuda.staging.BatchInFlight;
import org.gphash.cuda.staging.BatchPinning;
import org.gphash.cuda.staging.ChunkTimeline;
import org.gphash.cuda.staging.HostColumns;
import org.gphash.cuda.staging.HostLane;
import org.gphash.cuda.staging.PipelineTicket;
import org.gphash.cuda.staging.HostStageTimes;
import org.gphash.cuda.staging.PreparedBatch;
import org.gphash.Geometry;
import org.gphash.spi.SubmittedBatch;
import org.gphash.index.PoolTable;

/**
 * Batches run by the v2 pipeline ({@link BatchPipeline}) over the HBM index mirror: probes read GPU
 * memory, pool accesses are values and slot words only, each stage's issued in address order, and
 * operations on one key are combined (batch order within the key, one net write).
 *
 * <p>The engine is the pool's only writer while it is open, so slots are claimed in the mirror and
 * the pool receives the slot protocol's states by plain stores, phase by phase (DESIGN.md). The value
 * heap's bitmap lives in GPU memory ({@link DeviceHeap}); the host sizes the heap before a batch so
 * that every value write finds a block, and takes the bitmap back before it grows the heap or resizes.
 * Batches larger than {@link #MAX_SLICE} run in slices of it, one after another.
 *
 * <p>Why this class is long: it is one batch's life on the mirror (prepared outside the lock, its
 * chunks queued, harvested and finished, the heap sized around it, and the one-launch small batches
 * that share its buffers), whose steps share state that splitting would pass around; the stages
 * themselves are {@link BatchPipeline}'s, staging is the staging package's.
 */
public final class MirrorPath implements BatchPath {

    /** Operations per pipeline run; larger batches run as successive slices. */
    static final int MAX_SLICE = 1 << 20;

    private final EngineParts parts;
    private final PipelineKernels kernels;
    private final Geometry geometry;
    private final DeviceIndexMirror mirror;
    private final DeviceHeap heap = new DeviceHeap();
    private final BatchPipeline pipeline;
    private final CUstream stream = new CUstream();
    private final HostLane[] lanes;
    /** The GPU's side of host batches, chunk by chunk, when a benchmark turns it on ({@link #timeChunks}). */
    private final ChunkTimeline timeline = new ChunkTimeline();
    private final DeviceBuffer rerun = new DeviceBuffer();
    private final SmallReads small;
    private final SmallWrites smallWrites;
    private final HeapGrowthAhead ahead;
    /** Chooses how each chunk is grouped and where its values read go. */
    private final Router router;
    /** Host time per stage of host batches (the engine's: it adds its lock waits and totals). */
    private final HostStageTimes times;
    /** Runs that wrote without grouping, their keys being distinct (for tests and stats). */
    private long distinctWriteRuns;

    public MirrorPath(EngineParts parts, PipelineKernels kernels, Router router, HostStageTimes times) {
        this.parts = parts;
        this.kernels = kernels;
        this.geometry = parts.geometry();
        this.router = router;
        this.times = times;
        GpuTuning tuning = router.tuning();
        this.pipeline = new BatchPipeline(kernels, geometry, tuning);
        this.mirror = new DeviceIndexMirror(kernels);
        this.small = new SmallReads(kernels.smallReads, geometry.keySize(), geometry.valueSize(), tuning.smallReadSlots());
        this.smallWrites = new SmallWrites(tuning.smallWritesMax(), geometry.keySize(), geometry.valueSize());
        this.ahead = new HeapGrowthAhead(parts.pool(), parts.cuda(), tuning.growHeapAhead());
        this.lanes = new HostLane[LANES];
        for (int i = 0; i < LANES; i++) {
            lanes[i] = new HostLane(geometry.keySize(), geometry.valueSize(), timeline);
        }
        try {
            cuStreamCreate(stream, CUstream_flags.CU_STREAM_NON_BLOCKING);
            heap.push(parts.pool());
            loadMirror();
        } catch (RuntimeException e) {
            closeQuietly();
            throw e;
        }
    }

    /** GPU memory the mirror of this pool and the buffers of a full slice take. */
    public static long bytesNeeded(PoolTable pool) {
        int vs = pool.geometry().valueSize();
        int ks = pool.geometry().keySize();
        long staging = (long) LANES * hostChunk(MAX_SLICE) * (2 + ks + 2L * vs);  // the lanes of a slice's chunks
        return DeviceIndexMirror.bytesFor(pool.layout(), pool.geometry().slotsPerBucket()) + PipelineBuffers.bytesFor(PipelineBuffers.capacityFor(MAX_SLICE), vs)
                + staging;
    }

    @Override
    public ReadSlot claimRead(Batch batch) {
        BucketCache cache = parts.cache();
        byte[] table = parts.tableParams();
        SmallReads.Slot slot = small.claim(table, mirrorTableParams(), cache.params(), cache.lastClock());
        if (slot != null) {
            try {
                cache.operationsRan(batch.size(), table);
            } catch (RuntimeException e) {
                small.release(slot);
                throw e;
            }
        }
        return slot;
    }

    @Override
    public SubmittedBatch issueRead(ReadSlot slot, Batch batch, BatchResult result) {
        return small.issue((SmallReads.Slot) slot, stream, batch, result);  // a slot this path's claimRead gave
    }

    @Override
    public void drainReads() {
        small.drain();
    }

    @Override
    public void abandonReads(RuntimeException why) {
        small.abandon(why);
    }

    /**
     * Runs a batch of gets on another set of small-read slots than the engine's, outside the
     * engine's lock (for SmallReadsThreadsProbe, which measures the driver with several threads
     * queueing at once; nothing may write meanwhile).
     */
    public SubmittedBatch readOn(SmallReads reads, Batch batch, BatchResult result) {
        SmallReads.Slot slot = reads.claim(parts.tableParams(), mirrorTableParams(),
                parts.cache().params(), parts.cache().lastClock());
        if (slot == null) {
            throw new IllegalStateException("no free slot");
        }
        return reads.issue(slot, stream, batch, result);
    }

    /** A set of small-read slots of its own, on the engine's kernel (for SmallReadsThreadsProbe). */
    public SmallReads newSmallReads() {
        return small.sibling();
    }

    /**
     * A host batch, run to the end under the engine's lock ({@link #start}, then {@link #finish}): the
     * segments of a conditional batch, which must see each other's writes.
     */
    @Override
    public void execute(Batch batch, BatchResult result, PreparedBatch prepared) {
        finish(start(batch, result, prepared));
    }

    /**
     * Queues a host batch in chunks, each on the next of {@link #LANES} lanes taken in a ring: while
     * the GPU runs one chunk, the next one is copied in and the previous one's results out, each on its
     * lane's own streams ({@link HostLane}). Chunks' kernels run on one stream, in the order queued,
     * whichever thread's batch they belong to, so the host never writes the pool while a kernel may
     * (the heap grows only with nothing in flight). A lane still in flight is harvested by whoever
     * needs it next ({@link #harvestOldest}): the engine's lock is held for queueing, not for the GPU's
     * run, and the caller waits for its last chunk outside it ({@link #awaitOutsideLock}), then
     * {@link #finish}es under it. Operations that found every candidate bucket full run again after a
     * resize, in {@link #finish}.
     */
    @Override
    public BatchInFlight start(Batch batch, BatchResult result, PreparedBatch prepared) {
        boolean part = prepared != null && prepared.positions != null;
        int n = part ? prepared.partSize : batch.size();
        int chunk = part ? partChunk(batch.size(), n) : hostChunk(n);
        ChunkKinds counted = prepared != null ? prepared.kinds : lockedKinds.prepare(batch.kinds(), n, chunk);
        // Columns to copy from directly: prepared before the lock, or the batch's own if pinned.
        HostColumns direct = prepared != null ? prepared.columns
                : batch.memory().pinned() ? HostColumns.of(batch) : null;
        // Pinned (or not) by pinOutsideLock, before the engine's lock was taken.
        boolean resultPinned = result.memory().pinned();
        BatchInFlight owner = part ? new BatchInFlight(batch, result, prepared.positions, n) : new BatchInFlight(batch, result);
        try {
            for (int first = 0; first < n; first += chunk) {
                queueChunk(owner, counted, direct, resultPinned, first, Math.min(chunk, n - first));
            }
        } catch (RuntimeException | Error e) {
            drainBatches();  // nothing of the batch may still be running when its caller hears of the failure
            throw e;
        }
        return owner;
    }

    /** Plans, stages and queues operations first..first+m of {@code owner}'s batch on the next lane. */
    private void queueChunk(BatchInFlight owner, ChunkKinds counted, HostColumns direct, boolean resultPinned, int first,
                            int m) {
        Batch batch = owner.batch;
        BatchResult result = owner.result;
        if (lanesInFlight == LANES) {
            harvestOldest();
        }
        long plan0 = System.nanoTime();
        counted.chunk(first, kindCounts);
        long deletes = kindCounts[KindCounts.DELETES];
        long valueWrites = m - kindCounts[KindCounts.GETS] - deletes;  // every other kind carries a value
        boolean reads = kindCounts[KindCounts.GETS] + kindCounts[KindCounts.RMWS] > 0;
        boolean writes = valueWrites + deletes > 0;
        MemorySegment part = owner.positions;
        // A part's operations are not contiguous in the batch: grouped by key, as every batch may be.
        boolean distinctKeys = writes && part == null && router.checksDistinct(m) && DistinctKeys.test(batch, first, m);
        Router.Grouping grouping = Router.grouping(writes, distinctKeys, readKeysRepeat);
        times.add(HostStageTimes.Stage.PLAN, System.nanoTime() - plan0);
        if (!pipeline.fits(m)) {
            drainBatches();  // the pipeline's buffers grow: chunks queued on the old ones must be done
        }
        if (heap.freeBlocks() - inFlightWrites < valueWrites) {
            drainBatches();  // growth remaps the pool: nothing may be in flight
            long g = System.nanoTime();
            ensureFreeBlocks(valueWrites);
            times.add(HostStageTimes.Stage.HEAP_GROWTH, System.nanoTime() - g);
        }
        HostLane l = lanes[nextLane];
        // In place, the read stage writes each value through the mapping as it reads it from the
        // pool, PCIe carrying both directions at once, and no copy follows the kernels; otherwise
        // into the lane's device buffer, copied out behind the next chunk (Router.valuesInPlace).
        // A part's values in place go to their positions in the result (the lane's positions on the
        // GPU say where); a part's chunk staged and run is what a batch's chunk is, its outcomes (and
        // values not in place) scattered to their positions after it (HostLane.stagePart).
        boolean valuesInPlace = Router.valuesInPlace(resultPinned, reads, writes, readKeysRepeat);
        long s0 = System.nanoTime();
        HostLane before = lanes[Math.floorMod(nextLane - 1, LANES)];
        if (part != null) {
            l.stagePart(stream, batch, part, first, m, valueWrites > 0, reads && !valuesInPlace, kernels.partGather, before);
        } else {
            l.stage(stream, batch, first, m, valueWrites > 0, reads && !valuesInPlace, direct, before);
        }
        long s1 = System.nanoTime();
        times.add(HostStageTimes.Stage.STAGE_IN, s1 - s0);
        long out = !reads ? 0 : !valuesInPlace ? l.out.deviceAddress()
                : part != null ? result.values().address() : result.values().address() + (long) first * geometry.valueSize();
        long outAt = reads && valuesInPlace && part != null ? l.positions.deviceAddress() : 0;
        l.ticket = enqueue(m, l.kinds.deviceAddress(), l.keys.deviceAddress(), valueWrites > 0 ? l.values.deviceAddress() : 0,
                l.codes.deviceAddress(), out, outAt, 0, reads, writes, grouping);
        l.valueWrites = valueWrites;
        l.owner = owner;
        l.queued = chunksQueued++;
        inFlightWrites += valueWrites;
        opsInFlight += m;
        lanesInFlight++;
        nextLane = (nextLane + 1) % LANES;
        owner.lastChunk = l.queued;
        owner.lastLane = l;
        if (owner.chunksInFlight++ == 0) {
            mostBatchesInFlight = Math.max(mostBatchesInFlight, ++batchesInFlight);
        }
        if (part != null) {
            l.queueResultsScattered(stream, result, kernels.partScatter);
        } else if (resultPinned) {
            l.queueResultsInto(stream, result);
        } else {
            l.queueResults(stream);
        }
        times.add(HostStageTimes.Stage.ENQUEUE, System.nanoTime() - s1);
    }

    /**
     * Outside the engine's lock: waits until the GPU is done with {@code owner}'s last chunk (or
     * somebody harvested it), so that {@link #finish} under the lock finds its results ready.
     */
    @Override
    public void awaitOutsideLock(BatchInFlight owner) {
        HostLane last = owner.lastLane;
        if (last != null && !harvested(owner)) {
            long w0 = System.nanoTime();
            // If the lane was harvested and took a later chunk meanwhile, this waits for that one too.
            last.awaitResultsAsleep();
            times.add(HostStageTimes.Stage.AWAIT_UNLOCKED, System.nanoTime() - w0);
        }
    }

    /**
     * Under the engine's lock: harvests what is left of {@code owner}'s chunks (and the older chunks of
     * other batches before them), runs its operations that need a resize, and throws what harvesting
     * any of its chunks threw.
     */
    @Override
    public void finish(BatchInFlight owner) {
        while (!harvested(owner)) {
            harvestOldest();
        }
        if (owner.failure != null) {
            throw owner.failure;
        }
        long a0 = System.nanoTime();
        if (owner.rerun.length > 0) {
            drainBatches();  // a resize moves the table under every chunk
            rerunAfterResize(owner.batch, owner.result, owner.rerun);
        }
        ahead.afterBatch(heap.freeBlocks(), heap.totalBlocks());
        times.add(HostStageTimes.Stage.AFTER, System.nanoTime() - a0);
    }

    /** Harvests every chunk in flight, whoever's: before anything that needs the GPU idle and the pool still. */
    @Override
    public void drainBatches() {
        while (lanesInFlight > 0) {
            harvestOldest();
        }
    }

    @Override
    public boolean harvested(BatchInFlight owner) {
        return chunksHarvested > owner.lastChunk;
    }

    @Override
    public boolean batchesInFlight() {
        return lanesInFlight > 0;
    }

    @Override
    public long opsInFlight() {
        return opsInFlight;
    }

    /**
     * Waits for the oldest chunk in flight and puts its results into its batch's result; a failure
     * goes to that batch (its owner throws it), not to the thread that happened to harvest it.
     */
    private void harvestOldest() {
        HostLane l = lanes[Math.floorMod(nextLane - lanesInFlight, LANES)];
        BatchInFlight owner = l.owner;
        try {
            owner.rerun = harvest(l, owner.result, owner.rerun);
        } catch (RuntimeException e) {
            owner.failed(e);
        } finally {
            if (l.ticket != null) {  // harvest failed before it took the chunk off
                inFlightWrites -= l.valueWrites;
                l.ticket = null;
            }
            opsInFlight -= l.n;
            if (--owner.chunksInFlight == 0) {
                batchesInFlight--;
            }
            l.owner = null;
            lanesInFlight--;
            chunksHarvested++;
        }
    }

    /**
     * The operations of {@code batch} listed in {@code deferred} (their groups found every candidate
     * bucket full) after a resize, packed, until all have run, with the later chunks' operations on
     * their keys ({@link RerunPlan}); their results go to their places.
     */
    private void rerunAfterResize(Batch batch, BatchResult result, int[] deferred) {
        if (deferred.length == 0) {
            return;
        }
        RerunPlan plan = RerunPlan.of(batch, result, deferred);
        int[] rerun = plan.ops();
        resize();
        HostLane l = lanes[0];
        if (plan.deleteFirst().length > 0) {
            deleteKeysOf(batch, plan.deleteFirst(), l);
        }
        l.stagePacked(stream, batch, rerun);
        runSlice(rerun.length, l.kinds.deviceAddress(), l.keys.deviceAddress(), l.values.deviceAddress(),
                l.codes.deviceAddress(), l.out.deviceAddress(), rerun.length, true, true);
        l.queueResults(stream);
        l.awaitResults();
        l.scatterResults(result, rerun);
    }

    /** Deletes the keys of {@code batch} at {@code positions} (distinct keys), on lane {@code l}; the outcomes are dropped. */
    private void deleteKeysOf(Batch batch, int[] positions, HostLane l) {
        Batch deletes = Batch.create(geometry.keySize(), geometry.valueSize(), positions.length);
        for (int p : positions) {
            deletes.add(OpKind.DELETE, batch.key(p), null);
        }
        int[] all = new int[positions.length];
        Arrays.setAll(all, i -> i);
        l.stagePacked(stream, deletes, all);
        runSlice(all.length, l.kinds.deviceAddress(), l.keys.deviceAddress(), l.values.deviceAddress(),
                l.codes.deviceAddress(), l.out.deviceAddress(), 0, true, true);
        l.queueResults(stream);
        l.awaitResults();
    }

    /**
     * A small batch that writes, in one copy in, one launch and one copy out ({@link SmallWrites});
     * grouped by key on the GPU unless the host finds its keys distinct.
     */
    @Override
    public void executeSmallWrites(Batch batch, BatchResult result) {
        int n = batch.size();
        KindCounts.count(batch.kinds(), 0, n, kindCounts);
        long deletes = kindCounts[KindCounts.DELETES];
        long valueWrites = n - kindCounts[KindCounts.GETS] - deletes;
        boolean reads = kindCounts[KindCounts.GETS] + kindCounts[KindCounts.RMWS] > 0;
        ensureFreeBlocks(valueWrites);
        BucketCache cache = parts.cache();
        cache.operationsRan(n, parts.tableParams());
        byte[] cacheParams = cache.params();
        smallWrites.stage(batch, reads, cache.lastClock());
        boolean grouped = !DistinctKeys.test(batch, 0, n);
        if (!grouped) {
            distinctWriteRuns++;
        }
        long[] c = pipeline.runSmallWrites(stream, smallWrites, n, parts.tableParams(),
                mirrorTableParams(), cacheParams, cache.enabled(), heap, reads, grouped);
        account(c, cache);
        smallWrites.copyResults(result);
        if (c[KernelParams.PIPE_NEED_RESIZE] != 0) {
            int[] again = new int[(int) c[KernelParams.PIPE_NEED_RESIZE]];
            int k = 0;
            for (int i = 0; i < n && k < again.length; i++) {
                if ((smallWrites.code(i) & KernelParams.CODE_MASK) == KernelParams.NEED_RESIZE_CODE) {
                    again[k++] = i;
                }
            }
            rerunAfterResize(batch, result, Arrays.copyOf(again, k));
        }
        ahead.afterBatch(heap.freeBlocks(), heap.totalBlocks());
    }

    /**
     * Pins what the chunk path will move directly ({@link BatchPinning}): the batch when its run moves
     * enough of it (kinds and keys, and the values when an operation carries one: a batch of gets,
     * read once, is not worth registering whole), and the result only when the batch reads (the
     * results of writes are a byte an operation: 5 ms of registration a load batch of 2^20 saved).
     * The engine calls it for batches routed to the pipeline only (small batches of gets and writes
     * run their own staging, {@link SmallReads} and {@link SmallWrites}). Outside the engine's lock:
     * 16 threads' fresh batches of 2^18 spent 358 of 772 ms of locked host time registering (H200,
     * YCSB-A). What the batch does is judged by its first chunk's kinds ({@link ChunkKinds}); the
     * other chunks are counted under the lock, behind the GPU's work on the chunk before.
     */
    @Override
    public PreparedBatch pinOutsideLock(Batch batch, BatchResult result) {
        int n = batch.size();
        long p0 = System.nanoTime();
        int chunk = hostChunk(n);
        PreparedBatch prepared = freePrepared.poll();
        if (prepared == null) {
            prepared = newPrepared();
        }
        ChunkKinds counted = prepared.kinds.prepare(batch.kinds(), n, chunk);
        // The first chunk stands for the batch: pinning is a choice of speed, never of results.
        long[] counts = new long[3];
        counted.chunk(0, counts);
        int first = Math.min(n, chunk);
        long gets = counts[KindCounts.GETS];
        boolean carriesValues = first - gets - counts[KindCounts.DELETES] > 0;
        boolean reads = gets + counts[KindCounts.RMWS] > 0;
        long bytesMoved = (long) n * (1 + geometry.keySize()) + (carriesValues ? (long) n * geometry.valueSize() : 0);
        boolean pinned = BatchPinning.pinnedForRun(batch.memory(), parts.cuda(), bytesMoved, BatchPinning.PIN_AT_ONCE_BYTES);
        // Not pinned: its kinds and keys (and values, if the first chunk carries any) go to a pinned
        // copy now, made by the calling thread outside the lock (CallerStaging).
        prepared.columns = pinned ? HostColumns.of(batch) : prepared.staging.fill(batch, carriesValues);
        if (reads) {
            BatchPinning.pinnedForRun(result.memory(), parts.cuda(), (long) n * (1 + geometry.valueSize()),
                    BatchPinning.RESULT_PIN_AT_ONCE_BYTES);
        }
        times.add(HostStageTimes.Stage.PIN, System.nanoTime() - p0);
        return prepared;
    }

    /**
     * Pins a caller's batch and result for a shard's part of it ({@code Engine.executeInPlace}): both
     * whole, for every GPU (a batch is split among shards on several), by the same rule as a batch of
     * the pipeline's, and counts the part's first chunk's kinds; null when either stays unpinned (the
     * caller then copies the part out). The part's positions are copied into the prepared batch's
     * pinned staging, from where its chunks copy them to the GPU.
     */
    @Override
    public PreparedBatch pinPartOutsideLock(Batch batch, BatchResult result, MemorySegment positions, int count) {
        long p0 = System.nanoTime();
        PreparedBatch prepared = freePrepared.poll();
        if (prepared == null) {
            prepared = newPrepared();
        }
        // The part's first chunk stands for the batch, as in pinOutsideLock.
        long[] counts = new long[3];
        int chunk = partChunk(batch.size(), count);
        prepared.kinds.preparePart(batch.kinds(), positions, count, chunk, batch.size()).chunk(0, counts);
        int first = Math.min(count, chunk);
        boolean carriesValues = first - counts[KindCounts.GETS] - counts[KindCounts.DELETES] > 0;
        int n = batch.size();
        long bytesMoved = (long) n * (1 + geometry.keySize()) + (carriesValues ? (long) n * geometry.valueSize() : 0);
        boolean pinned = BatchPinning.pinnedForRun(batch.memory(), parts.cuda(), bytesMoved, BatchPinning.PIN_AT_ONCE_BYTES)
                && BatchPinning.pinnedForRun(result.memory(), parts.cuda(), (long) n * (1 + geometry.valueSize()),
                        BatchPinning.RESULT_PIN_AT_ONCE_BYTES);
        if (!pinned) {
            times.add(HostStageTimes.Stage.PIN, System.nanoTime() - p0);
            release(prepared);
            return null;
        }
        prepared.columns = HostColumns.of(batch);
        // Outside the lock, by the calling thread: the positions copied where the lanes copy them to
        // the GPU from, and every chunk's kinds counted (a byte read per position, or none for a
        // batch of one kind); under the lock, which every caller queues on, the counting held the
        // others back (2x H200, docs/lab/2026-11-27-parts-in-place.md). The chunks are counted from
        // the caller's positions, as the first was above, all of them now: the whole batch's kinds
        // were counted once more when they were counted from the pinned copy (0.8 ms a batch of 2^20).
        prepared.positions = prepared.staging.fillPositions(positions, count);
        prepared.partSize = count;
        for (int at = 0; at < count; at += chunk) {
            prepared.kinds.chunk(at, counts);
        }
        times.add(HostStageTimes.Stage.PIN, System.nanoTime() - p0);
        return prepared;
    }

    /**
     * Chunks of a host batch: whole up to 2^16 operations, else two, between 2^16 and a slice. Two, not
     * four: a chunk's kernels take less time per operation the larger it is (more repeated keys
     * grouped, longer sorted runs over the pool), and two chunks still overlap one's copies with the
     * other's kernels. The GPU's timeline of one thread's batches of 2^20 (H200): kernels per 2^20 in
     * chunks of 2^18 / 2^19 / 2^20, update 7.4 / 6.0 / 5.4 ms, YCSB-C zipf 4.5 / 2.6 / 1.8 ms; whole
     * batches lost the overlap. Two against four, alternating: one thread C zipf 1.17x, update 1.08x,
     * positive search 1.02x; 16 threads' batches of 2^18, C 1.08x, A 1.24x
     * (docs/lab/2026-11-27-host-batch-timeline.md).
     */
    static int hostChunk(int n) {
        if (n <= 1 << 16) {
            return Math.max(1, n);
        }
        return Math.min(MAX_SLICE, Math.max(1 << 16, (n + 1) / 2));
    }

    /**
     * Chunks of a shard's part of a batch of {@code batchSize} operations ({@code count} of them): as
     * large as the whole batch's would be, so that a part keeps as much work queued on the GPU per lane
     * as an unsplit batch.
     */
    static int partChunk(int batchSize, int count) {
        return Math.max(1, Math.min(count, hostChunk(batchSize)));
    }

    /** The counts of gets, deletes and read-modify-writes of the chunk (or small batch) being planned ({@link KindCounts}). */
    private final long[] kindCounts = new long[3];
    /** Each thread's batch prepared outside the lock (kinds counted, columns pinned or copied), read back under it in the same call. */
    private final ConcurrentLinkedQueue<PreparedBatch> freePrepared =
            new ConcurrentLinkedQueue<>();
    /** Every thread's prepared batch, for close (their staging memory is registered with CUDA). */
    private final ConcurrentLinkedQueue<PreparedBatch> allPrepared =
            new ConcurrentLinkedQueue<>();
    /** A batch counted under the lock (one not counted outside it: a segment of a conditional batch). */
    private final ChunkKinds lockedKinds = new ChunkKinds();

    /** Value writes of the chunks queued and not yet harvested: blocks they may take. */
    private long inFlightWrites;
    /** Operations of the chunks queued and not yet harvested (the header's in-flight bound covers them). */
    private long opsInFlight;
    /**
     * Lanes of host-batch chunks, taken in a ring: one chunk in flight each. Four keep the GPU fed
     * while the lock holder stages the next batch (several threads' batches of one chunk each, or
     * two batches' two chunks each); each costs its chunk's buffers in GPU and pinned memory. Fewer
     * or more ran slower: 16 threads' batches of 2^18 under bench ycsb (H200, coalescer off), YCSB-C
     * with 2 / 3 / 4 / 8 lanes 136-141 / 151-153 / 146-155 / 125-130 Mops/s, YCSB-A 102-103 /
     * 111-115 / 111-119 / 101-110 (docs/lab/2026-11-27-chunks-and-lanes-from-16-threads.md).
     */
    static final int LANES = 4;
    /** The lane the next chunk takes; the oldest chunk in flight is {@link #lanesInFlight} lanes back. */
    private int nextLane;
    private int lanesInFlight;
    /** Chunks queued since open: a chunk's place in the queue ({@link HostLane#queued}). */
    private long chunksQueued;
    /**
     * Chunks harvested since open, oldest first: a chunk is done once this passes its place. Read
     * outside the lock by a thread waiting for its batch.
     */
    private volatile long chunksHarvested;
    /** Batches with a chunk in flight now, and the most at once since open (for tests and stats). */
    private int batchesInFlight;
    private int mostBatchesInFlight;

    /**
     * Waits for a lane's chunk, accounts for it and copies its results into {@code result}; returns
     * the rerun list grown by the chunk's operations that need a resize first.
     */
    private int[] harvest(HostLane l, BatchResult result, int[] rerun) {
        long w0 = System.nanoTime();
        l.awaitResults();
        l.addToTimeline();
        long[] c = pipeline.await(l.ticket);
        long w1 = System.nanoTime();
        times.add(HostStageTimes.Stage.AWAIT_GPU, w1 - w0);
        observe(l.ticket, c);
        l.ticket = null;
        inFlightWrites -= l.valueWrites;
        account(c, parts.cache());
        l.copyResults(result);
        times.add(HostStageTimes.Stage.COPY_OUT, System.nanoTime() - w1);
        if (c[KernelParams.PIPE_NEED_RESIZE] == 0) {
            return rerun;
        }
        int[] out = Arrays.copyOf(rerun, rerun.length + (int) c[KernelParams.PIPE_NEED_RESIZE]);
        int k = rerun.length;
        for (int i = 0; i < l.n; i++) {
            if ((l.code(i) & KernelParams.CODE_MASK) == KernelParams.NEED_RESIZE_CODE) {
                out[k++] = l.operation(i);
            }
        }
        return Arrays.copyOf(out, k);
    }

    @Override
    public void executeOnDevice(long n, long kindsAt, long keysAt, long valuesAt, long codesAt, long outAt) {
        int ks = geometry.keySize();
        int vs = geometry.valueSize();
        for (long first = 0; first < n; first += MAX_SLICE) {
            long m = Math.min(MAX_SLICE, n - first);
            long k = kindsAt + first;
            long key = keysAt + first * ks;
            long val = valuesAt == 0 ? 0 : valuesAt + first * vs;
            long code = codesAt + first;
            long o = outAt == 0 ? 0 : outAt + first * vs;
            long[] counts = pipeline.countKinds(stream, new BatchPipeline.DeviceOps(m, k, key, val, code, o, 0, 0, 0));
            if (counts[0] > 0 && val == 0) {
                throw new IllegalArgumentException("a device batch with writes needs its values buffer");
            }
            if (counts[1] > 0 && o == 0) {
                throw new IllegalArgumentException("a device batch with reads needs its out buffer");
            }
            if (router.runsDeviceGetsInOneLaunch(m, counts[0] == 0 && counts[2] == 0 && counts[1] == m)) {
                BucketCache cache = parts.cache();
                byte[] table = parts.tableParams();
                cache.operationsRan(m, table);
                pipeline.runGetsInOneLaunch(stream, small, m, key, o, code, table, mirrorTableParams(), cache.params(),
                        cache.lastClock());
                continue;
            }
            runSlice(m, k, key, val, code, o, counts[0], counts[1] > 0, counts[0] + counts[2] > 0);
        }
        ahead.afterBatch(heap.freeBlocks(), heap.totalBlocks());
    }

    /**
     * Runs one slice through the pipeline, again for the operations of groups that found every
     * candidate bucket full, after a resize, until none is left.
     */
    private void runSlice(long n, long kindsAt, long keysAt, long valuesAt, long codesAt, long outAt, long valueWrites,
                          boolean reads, boolean writes) {
        BucketCache cache = parts.cache();
        long opsAt = 0;
        long count = n;
        for (;;) {
            ensureFreeBlocks(valueWrites);
            PipelineTicket ticket = enqueue(count, kindsAt, keysAt, valuesAt, codesAt, outAt, 0, opsAt, reads, writes,
                    Router.grouping(writes, false, readKeysRepeat));
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
    private PipelineTicket enqueue(long n, long kindsAt, long keysAt, long valuesAt, long codesAt, long outAt,
                                         long outPositionsAt, long opsAt, boolean reads, boolean writes,
                                         Router.Grouping grouping) {
        BucketCache cache = parts.cache();
        cache.operationsRan(n, parts.tableParams());
        byte[] cacheParams = cache.params();
        boolean ungrouped = grouping == Router.Grouping.NONE;
        if (writes && ungrouped) {
            distinctWriteRuns++;
        }
        return pipeline.enqueue(stream,
                new BatchPipeline.DeviceOps(n, kindsAt, keysAt, valuesAt, codesAt, outAt, opsAt, cache.lastClock(), outPositionsAt),
                parts.tableParams(), mirrorTableParams(), cacheParams,
                cache.enabled(), heap, parts.pool().file().mappedSize(), reads, writes, ungrouped);
    }

    /**
     * Whether the keys of the last batch of reads repeated, by the GPU's sample of it (pipe_decide):
     * what {@link Router#grouping} decides the next batch of reads by. Reads are correct either way:
     * grouping only saves pool reads of repeated keys.
     */
    private boolean readKeysRepeat = true;

    /** Learns from a finished run whether its keys repeated (batches of reads only). */
    private void observe(PipelineTicket ticket, long[] c) {
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

    private void account(long[] c, BucketCache cache) {
        if (c[KernelParams.PIPE_HEAP_SHORT] != 0 || c[KernelParams.PIPE_FREE_ERRORS] != 0) {
            throw new IllegalStateException("the pipeline's value heap went wrong: " + c[KernelParams.PIPE_HEAP_SHORT]
                    + " writes found no block, " + c[KernelParams.PIPE_FREE_ERRORS] + " unlinked blocks were not in use");
        }
        parts.pool().addToSize(c[KernelParams.PIPE_ITEMS_ADDED] - c[KernelParams.PIPE_ITEMS_REMOVED]);
        heap.account(c[KernelParams.PIPE_BLOCKS_TAKEN], c[KernelParams.PIPE_BLOCKS_FREED]);
        if (cache.enabled()) {
            cache.addPipelineCounts(c[KernelParams.PIPE_CACHE_HITS], c[KernelParams.PIPE_CACHE_MISSES]);
        }
    }

    /** Grows the heap, with nothing in flight, until a batch's writes all find a block. */
    private void ensureFreeBlocks(long blocks) {
        if (heap.freeBlocks() >= blocks) {
            return;
        }
        parts.cache().awaitLoad();  // growth remaps the pool, which a load reads
        heap.pull(parts.pool());
        parts.pool().ensureFreeBlocks(blocks);
        heap.push(parts.pool());
    }

    /** Grows the table; the heap's bitmap goes to the host and back, the mirror is loaded anew. */
    private void resize() {
        heap.pull(parts.pool());
        parts.resize();
        heap.push(parts.pool());
        loadMirror();
    }

    /** TableParams over the mirror as the kernels receive them. */
    byte[] mirrorTableParams() {
        PoolTable pool = parts.pool();
        return mirror.tableParams(pool.layout(), geometry, pool.seeds());
    }

    /** Slots whose HBM mirror copy or tag differs from the pool (DeviceIndexMirror.staleSlots); nothing in flight. */
    public long staleMirrorSlots() {
        PoolTable pool = parts.pool();
        return mirror.staleSlots(pool.layout(), geometry, pool.mapping());
    }

    private void loadMirror() {
        PoolTable pool = parts.pool();
        mirror.load(pool.layout(), geometry, pool.seeds(), parts.kernels().registration());
    }

    @Override
    public void syncHost() {
        heap.pull(parts.pool());
    }

    @Override
    public IndexStats stats(IndexStats pool) {
        return pool.withEngineState(heap.totalBlocks(), heap.freeBlocks(),
                "HBM mirror (" + (mirror.bytes() >> 20) + " MiB, loaded in " + mirror.lastLoadNanos() / 1_000_000 + " ms; "
                        + small.batches() + " small batches of gets in one launch, " + distinctWriteRuns + " writing runs of distinct "
                        + "keys ungrouped, " + pipeline.smallWriteBatches() + " of them in one launch)");
    }

    /** {@return how long the last load of the HBM mirror took (at open, or after a resize)} */
    public long mirrorLoadNanos() {
        return mirror.lastLoadNanos();
    }

    @Override
    public long lastBatchGpuNanos() {
        return pipeline.lastGpuNanos();
    }

    public long smallReadBatches() {
        return small.batches();
    }

    public int smallReadsMostInFlight() {
        return small.mostInFlight();
    }

    public long distinctWriteRuns() {
        return distinctWriteRuns;
    }

    /** The most host batches (of any threads) with chunks on the GPU at once since open. */
    public int mostBatchesInFlight() {
        return mostBatchesInFlight;
    }

    /** The router this path's chunks are planned by (the engine routes its calls by it too). */
    public Router router() {
        return router;
    }

    /** The pipeline, for the profile of its stages (benchmarks and tests). */
    public BatchPipeline pipeline() {
        return pipeline;
    }

    /** {@return heap growths whose file space was prepared ahead, off the batch path} */
    public long growthsPreparedAhead() {
        return ahead.prepared();
    }

    /** {@return whether heap growths are prepared ahead ({@link HeapGrowthAhead}, opt-in)} */
    public boolean preparesGrowthsAhead() {
        return ahead.active();
    }

    public Map<StageProfile.Stage, Long> stageNanos() {
        return pipeline.stageNanos();
    }

    /**
     * Under the engine's lock: turns the chunk timeline on (clearing it) or off, with no chunk in
     * flight (a chunk queued untimed is never summed, one queued timed always is).
     */
    public void timeChunks(boolean on) {
        drainBatches();
        timeline.enable(on, stream);
    }

    /** Under the engine's lock: the chunk timeline's sums ({@link ChunkTimeline#snapshot}), empty while it is off; reset after reading if asked. */
    public Map<String, Long> chunkTimeline(boolean reset) {
        if (!timeline.on()) {
            return Map.of();
        }
        Map<String, Long> out = timeline.snapshot();
        if (reset) {
            timeline.reset();
        }
        return out;
    }

    /**
     * Takes back what {@link #pinOutsideLock} prepared, once its batch is done (its staging memory is
     * reused by the next batch of any thread: a thread of its own each would pin memory for every
     * thread that ever ran a batch, until close).
     */
    @Override
    public void release(PreparedBatch prepared) {
        prepared.positions = null;
        prepared.columns = null;
        freePrepared.add(prepared);
    }

    private PreparedBatch newPrepared() {
        PreparedBatch p = new PreparedBatch();
        allPrepared.add(p);
        return p;
    }

    private void closeQuietly() {
        for (PreparedBatch p : allPrepared) {
            p.staging.close();
        }
        List<AutoCloseable> all = new ArrayList<>(List.of(ahead, mirror, heap, pipeline, rerun,
                small, smallWrites, timeline));
        for (HostLane l : lanes) {
            if (l != null) {
                all.add(l);
            }
        }
        for (AutoCloseable c : all) {
            try {
                c.close();
            } catch (Exception ignored) {
                // closing what was allocated; the first failure is the one reported
            }
        }
    }

    @Override
    public void close() {
        cuStreamSynchronize(stream);
        closeQuietly();
        cuStreamDestroy(stream);
    }
}
