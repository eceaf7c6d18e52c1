package org.gphash.cuda.pipeline;


import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.Geometry;
import org.gphash.OpKind;
import org.gphash.cuda.path.QueuedBatches;
import org.gphash.cuda.routing.ChunkKinds;
import org.gphash.cuda.routing.DistinctKeys;
import org.gphash.cuda.routing.KindCounts;
import org.gphash.cuda.routing.RerunPlan;
import org.gphash.cuda.routing.Router;
import org.gphash.cuda.runtime.KernelParams;
import org.gphash.cuda.staging.BatchInFlight;
import org.gphash.cuda.staging.BatchPinning;
import org.gphash.cuda.staging.ChunkTimeline;
import org.gphash.cuda.staging.HostColumns;
import org.gphash.cuda.staging.HostLane;
import org.gphash.cuda.staging.HostStageTimes;
import org.gphash.cuda.staging.PreparedBatch;

/**
 * Host batches on the mirror: a batch prepared outside the engine's lock (pinned, or copied to pinned
 * staging by its caller, its kinds counted), queued in chunks on a ring of {@link BatchPipeline#LANES} lanes under
 * the lock, waited for outside it and finished under it again; the chunks of several threads' batches
 * run in the order queued on the engine's stream. The GPU's timeline of the chunks, when a benchmark
 * turns it on, is kept here.
 */
final class HostBatches implements QueuedBatches {

    private final MirrorRuns runs;
    private final Geometry geometry;

    HostBatches(MirrorRuns runs, HostStageTimes times) {
        this.runs = runs;
        this.geometry = runs.geometry;
        this.times = times;
        this.lanes = new HostLane[BatchPipeline.LANES];
        for (int i = 0; i < BatchPipeline.LANES; i++) {
            lanes[i] = new HostLane(geometry.keySize(), geometry.valueSize(), timeline);
        }
    }

    private final HostLane[] lanes;
    /** The batch each lane's chunk in flight belongs to (null: the lane is free). */
    private final BatchInFlight[] owners = new BatchInFlight[BatchPipeline.LANES];

    /** The GPU's side of host batches, chunk by chunk, when a benchmark turns it on ({@link #timeChunks}). */
    private final ChunkTimeline timeline = new ChunkTimeline();

    /** Host time per stage of host batches (the engine's: it adds its lock waits and totals). */
    private final HostStageTimes times;

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
     * A host batch, run to the end under the engine's lock ({@link #start}, then {@link #finish}): the
     * segments of a conditional batch, which must see each other's writes.
     */
    void execute(Batch batch, BatchResult result, PreparedBatch prepared) {
        finish(start(batch, result, prepared));
    }

    /**
     * Queues a host batch in chunks, each on the next of {@link BatchPipeline#LANES} lanes taken in a ring: while
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
        int slice = MirrorRuns.maxSlice(geometry.valueSize());
        int chunk = part ? partChunk(batch.size(), n, slice) : hostChunk(n, slice);
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
        if (lanesInFlight == BatchPipeline.LANES) {
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
        boolean distinctKeys = writes && part == null && runs.router.checksDistinct(m) && DistinctKeys.test(batch, first, m);
        Router.Grouping grouping = Router.grouping(writes, distinctKeys, runs.readKeysRepeat);
        times.add(HostStageTimes.Stage.PLAN, System.nanoTime() - plan0);
        if (!runs.pipeline.fits(m)) {
            drainBatches();  // the pipeline's buffers grow: chunks queued on the old ones must be done
        }
        if (runs.heap.freeBlocks() - inFlightWrites < valueWrites) {
            drainBatches();  // growth remaps the pool: nothing may be in flight
            long g = System.nanoTime();
            runs.ensureFreeBlocks(valueWrites);
            times.add(HostStageTimes.Stage.HEAP_GROWTH, System.nanoTime() - g);
        }
        HostLane l = lanes[nextLane];
        // In place, the read stage writes each value through the mapping as it reads it from the
        // pool, PCIe carrying both directions at once, and no copy follows the kernels; otherwise
        // into the lane's device buffer, copied out behind the next chunk (Router.valuesInPlace).
        // A part's values in place go to their positions in the result (the lane's positions on the
        // GPU say where); a part's chunk staged and run is what a batch's chunk is, its outcomes (and
        // values not in place) scattered to their positions after it (HostLane.stagePart).
        boolean valuesInPlace = Router.valuesInPlace(resultPinned, reads, writes, runs.readKeysRepeat);
        long s0 = System.nanoTime();
        HostLane before = lanes[Math.floorMod(nextLane - 1, BatchPipeline.LANES)];
        if (part != null) {
            l.stagePart(runs.stream, batch, part, first, m, valueWrites > 0, reads && !valuesInPlace, runs.kernels.partGather, before);
        } else {
            l.stage(runs.stream, batch, first, m, valueWrites > 0, reads && !valuesInPlace, direct, before);
        }
        long s1 = System.nanoTime();
        times.add(HostStageTimes.Stage.STAGE_IN, s1 - s0);
        long out = !reads ? 0 : !valuesInPlace ? l.out.deviceAddress()
                : part != null ? result.values().address() : result.values().address() + (long) first * geometry.valueSize();
        long outAt = reads && valuesInPlace && part != null ? l.positions.deviceAddress() : 0;
        l.ticket = runs.enqueue(m, l.kinds.deviceAddress(), l.keys.deviceAddress(), valueWrites > 0 ? l.values.deviceAddress() : 0,
                l.codes.deviceAddress(), out, outAt, 0, reads, writes, grouping);
        l.valueWrites = valueWrites;
        owners[nextLane] = owner;
        l.queued = chunksQueued++;
        inFlightWrites += valueWrites;
        opsInFlight += m;
        lanesInFlight++;
        nextLane = (nextLane + 1) % BatchPipeline.LANES;
        owner.lastChunk = l.queued;
        owner.lastLane = l;
        if (owner.chunksInFlight++ == 0) {
            mostBatchesInFlight = Math.max(mostBatchesInFlight, ++batchesInFlight);
        }
        if (part != null) {
            l.queueResultsScattered(runs.stream, result, runs.kernels.partScatter);
        } else if (resultPinned) {
            l.queueResultsInto(runs.stream, result);
        } else {
            l.queueResults(runs.stream);
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
        runs.afterBatch();
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
        int oldest = Math.floorMod(nextLane - lanesInFlight, BatchPipeline.LANES);
        HostLane l = lanes[oldest];
        BatchInFlight owner = owners[oldest];
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
            owners[oldest] = null;
            lanesInFlight--;
            chunksHarvested++;
        }
    }

    /**
     * Waits for a lane's chunk, accounts for it and copies its results into {@code result}; returns
     * the rerun list grown by the chunk's operations that need a resize first.
     */
    private int[] harvest(HostLane l, BatchResult result, int[] rerun) {
        long w0 = System.nanoTime();
        l.awaitResults();
        l.addToTimeline();
        long[] c = runs.pipeline.await(l.ticket);
        long w1 = System.nanoTime();
        times.add(HostStageTimes.Stage.AWAIT_GPU, w1 - w0);
        runs.observe(l.ticket, c);
        l.ticket = null;
        inFlightWrites -= l.valueWrites;
        runs.account(c, runs.parts.cache());
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

    /**
     * The operations of {@code batch} listed in {@code deferred} (their groups found every candidate
     * bucket full) after a resize, packed, until all have run, with the later chunks' operations on
     * their keys ({@link RerunPlan}); their results go to their places.
     */
    void rerunAfterResize(Batch batch, BatchResult result, int[] deferred) {
        if (deferred.length == 0) {
            return;
        }
        RerunPlan plan = RerunPlan.of(batch, result, deferred);
        int[] rerun = plan.ops();
        runs.resize();
        HostLane l = lanes[0];
        if (plan.deleteFirst().length > 0) {
            deleteKeysOf(batch, plan.deleteFirst(), l);
        }
        l.stagePacked(runs.stream, batch, rerun);
        runs.runSlice(rerun.length, l.kinds.deviceAddress(), l.keys.deviceAddress(), l.values.deviceAddress(),
                l.codes.deviceAddress(), l.out.deviceAddress(), rerun.length, true, true);
        l.queueResults(runs.stream);
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
        l.stagePacked(runs.stream, deletes, all);
        runs.runSlice(all.length, l.kinds.deviceAddress(), l.keys.deviceAddress(), l.values.deviceAddress(),
                l.codes.deviceAddress(), l.out.deviceAddress(), 0, true, true);
        l.queueResults(runs.stream);
        l.awaitResults();
    }

    /**
     * Pins what the chunk path will move directly ({@link BatchPinning}): the batch when its run moves
     * enough of it (kinds and keys, and the values when an operation carries one: a batch of gets,
     * read once, is not worth registering whole), and the result only when the batch reads (the
     * results of writes are a byte an operation, not worth a registration).
     * The engine calls it for batches routed to the pipeline only (small batches of gets and writes
     * run their own staging, {@link SmallReads} and {@link SmallWrites}). Outside the engine's lock:
     * under it, registering fresh batches was half of 16 threads' locked host time
     * (docs/lab/2026-11-27-cpu-engine-and-the-load.md). What the batch does is judged by its first chunk's kinds ({@link ChunkKinds}); the
     * other chunks are counted under the lock, behind the GPU's work on the chunk before.
     */
    @Override
    public PreparedBatch pinOutsideLock(Batch batch, BatchResult result) {
        int n = batch.size();
        long p0 = System.nanoTime();
        int chunk = hostChunk(n, MirrorRuns.maxSlice(geometry.valueSize()));
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
        boolean pinned = BatchPinning.pinnedForRun(batch.memory(), runs.parts.cuda(), bytesMoved, BatchPinning.PIN_AT_ONCE_BYTES);
        // Not pinned: its kinds and keys (and values, if the first chunk carries any) go to a pinned
        // copy now, made by the calling thread outside the lock (CallerStaging).
        prepared.columns = pinned ? HostColumns.of(batch) : prepared.staging.fill(batch, carriesValues);
        if (reads) {
            BatchPinning.pinnedForRun(result.memory(), runs.parts.cuda(), (long) n * (1 + geometry.valueSize()),
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
        int chunk = partChunk(batch.size(), count, MirrorRuns.maxSlice(geometry.valueSize()));
        prepared.kinds.preparePart(batch.kinds(), positions, count, chunk, batch.size()).chunk(0, counts);
        int first = Math.min(count, chunk);
        boolean carriesValues = first - counts[KindCounts.GETS] - counts[KindCounts.DELETES] > 0;
        int n = batch.size();
        long bytesMoved = (long) n * (1 + geometry.keySize()) + (carriesValues ? (long) n * geometry.valueSize() : 0);
        boolean pinned = BatchPinning.pinnedForRun(batch.memory(), runs.parts.cuda(), bytesMoved, BatchPinning.PIN_AT_ONCE_BYTES)
                && BatchPinning.pinnedForRun(result.memory(), runs.parts.cuda(), (long) n * (1 + geometry.valueSize()),
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
        // others back (docs/lab/2026-11-27-parts-in-place.md). The chunks are counted from the
        // caller's positions, as the first was above, all of them now: counted from the pinned copy,
        // the whole batch's kinds were counted once more.
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
     * other's kernels; whole batches lost the overlap, and two beat four from one thread and from 16
     * (the GPU's timeline of both: docs/lab/2026-11-27-host-batch-timeline.md).
     */
    static int hostChunk(int n) {
        return hostChunk(n, MirrorRuns.MAX_SLICE);
    }

    /** {@link #hostChunk(int)} where a slice holds {@code slice} operations ({@link MirrorRuns#maxSlice}: fewer for large values). */
    static int hostChunk(int n, int slice) {
        int whole = Math.min(1 << 16, slice);
        if (n <= whole) {
            return Math.max(1, n);
        }
        return Math.min(slice, Math.max(whole, (n + 1) / 2));
    }

    /**
     * Chunks of a shard's part of a batch of {@code batchSize} operations ({@code count} of them): as
     * large as the whole batch's would be, so that a part keeps as much work queued on the GPU per lane
     * as an unsplit batch.
     */
    static int partChunk(int batchSize, int count) {
        return partChunk(batchSize, count, MirrorRuns.MAX_SLICE);
    }

    static int partChunk(int batchSize, int count, int slice) {
        return Math.max(1, Math.min(count, hostChunk(batchSize, slice)));
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

    /** The most host batches (of any threads) with chunks on the GPU at once since open. */
    int mostBatchesInFlight() {
        return mostBatchesInFlight;
    }

    /**
     * Under the engine's lock: turns the chunk timeline on (clearing it) or off, with no chunk in
     * flight (a chunk queued untimed is never summed, one queued timed always is).
     */
    void timeChunks(boolean on) {
        drainBatches();
        timeline.enable(on, runs.stream);
    }

    /** Under the engine's lock: the chunk timeline's sums ({@link ChunkTimeline#snapshot}), empty while it is off; reset after reading if asked. */
    Map<String, Long> chunkTimeline(boolean reset) {
        if (!timeline.on()) {
            return Map.of();
        }
        Map<String, Long> out = timeline.snapshot();
        if (reset) {
            timeline.reset();
        }
        return out;
    }

    /** What this holds on the GPU and in pinned memory, for the path's close. */
    List<AutoCloseable> closeables() {
        for (PreparedBatch p : allPrepared) {
            p.staging.close();
        }
        List<AutoCloseable> all = new ArrayList<>(List.of(timeline));
        for (HostLane l : lanes) {
            if (l != null) {
                all.add(l);
            }
        }
        return all;
    }
}
