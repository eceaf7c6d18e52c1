package org.gphash.cuda;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

import jcuda.CudaException;
import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.Geometry;
import org.gphash.GpuFeatures;
import org.gphash.GpuTuning;
import org.gphash.IndexMirror;
import org.gphash.IndexStats;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.RecoveryReport;
import org.gphash.cuda.cache.BucketCache;
import org.gphash.cuda.path.BatchPath;
import org.gphash.cuda.path.BucketRefresh;
import org.gphash.cuda.path.OneLaunchBatches;
import org.gphash.cuda.path.QueuedBatches;
import org.gphash.cuda.path.ReadSlot;
import org.gphash.cuda.pipeline.MirrorPath;
import org.gphash.cuda.pipeline.SmallReads;
import org.gphash.cuda.poolpath.PoolPath;
import org.gphash.cuda.routing.ConditionalBatches;
import org.gphash.cuda.routing.Router;
import org.gphash.cuda.runtime.CudaRuntime;
import org.gphash.cuda.runtime.GpuFailure;
import org.gphash.cuda.runtime.PoolRegistration;
import org.gphash.cuda.staging.BatchInFlight;
import org.gphash.cuda.staging.HostStageTimes;
import org.gphash.cuda.staging.PackedValueBatches;
import org.gphash.cuda.staging.PreparedBatch;
import org.gphash.cuda.table.GpuTableKernels;
import org.gphash.format.PoolHeader;
import org.gphash.spi.Engine;
import org.gphash.spi.ScanState;
import org.gphash.spi.SubmittedBatch;
import org.gphash.table.EntryScan;
import org.gphash.table.PoolTable;
import org.gphash.table.TableLayout;

/**
 * The GPU engine: the pool's mapping registered with CUDA, and operations run as kernels on it
 * (cuda/src/main/cuda). Pools are created, opened, recovered and resized by the same
 * {@link PoolTable} code as the CPU engine's, with recovery's scans and resize's rehash run as
 * kernels ({@link GpuTableKernels}).
 *
 * <p><b>Two ways to run batches</b>, chosen at open and reported by {@link IndexStats#indexPlacement()}:
 * {@link MirrorPath}, the v2 pipeline over a copy of the index in GPU memory (probes never cross
 * PCIe; pool accesses are grouped per key and issued in address order), when the GPU has the memory
 * for it; and {@link PoolPath}, per-operation kernels probing the pool (the GPHash paper's design),
 * otherwise or when asked ({@link IndexMirror#OFF}).
 *
 * <p><b>One router.</b> Every call (a batch, a single get, a get at once, a segment of a conditional
 * batch) takes the route the {@link Router} gives it, tuned by {@link GpuTuning}; this class only runs
 * the route ({@link #runRoute}, {@link #runLocked}).
 *
 * <p><b>One mutator at a time.</b> CPU and GPU atomics on one mapped word are not atomic with each
 * other, so the host never writes the pool while a kernel may run: every entry point but one is
 * synchronized, and the host-side steps that write the pool (header commits, zeroing a new level,
 * heap growth) run only after the batch's streams have drained. The exception is small batches of
 * gets on the index mirror (single gets among them), which only read: they take the lock just to
 * claim one of {@link SmallReads}'s slots, then run and are waited for outside it, alongside each
 * other; and the work host threads run on the mapped pool themselves with the CPU engine's code,
 * single calls and small batches ({@link HostOperations}, inside the {@link HostReadGate}; writes
 * only while the engine has lent the pool to the host). Every synchronized entry point that touches
 * the pool or the GPU first waits for those in flight and takes the pool back, the GPU's copies
 * refreshed from what host writes changed ({@link #ensureOpen}; docs/DESIGN-GPU.md, "Who runs what").
 *
 * <p><b>Host batches in flight together.</b> A host batch on the pipeline is queued under the lock
 * behind other threads' batches (their kernels run in order on one stream) and waited for outside
 * it; every other entry point first drains them ({@link QueuedBatches#drainBatches}), so the host still
 * writes the pool only with nothing in flight (docs/DESIGN-GPU.md, "Host batches of several threads in
 * flight").
 *
 * <p>The engine's lock, which calls take it, wait outside it or run between batches, is one
 * invariant kept here: every {@link Engine} entry point with its locking. Opening is
 * {@link GpuEngines}'; single calls {@link SingleCalls}'; what only the GPU offers, and the counters,
 * are views ({@link GpuEngineFeatures}, {@link GpuDiagnostics}); what each call then does is in the
 * packages by stage ({@code routing}, {@code path}, {@code staging}, {@code pipeline}, {@code poolpath}).
 */
public final class GpuEngine implements Engine {

    final CudaRuntime cuda;
    final GpuTableKernels kernels;
    final PoolTable pool;
    final Geometry geometry;
    /** BktCache, replaced whole by {@link #configureBucketCache}; the paths read the current one. */
    final AtomicReference<BucketCache> cache;
    final BatchPath path;
    /** The path's host batches queued under the lock and awaited outside it ({@link QueuedBatches#NONE} on the pool path). */
    final QueuedBatches queued;
    /** The path's one-launch batches ({@link OneLaunchBatches#NONE} on the pool path). */
    final OneLaunchBatches oneLaunch;
    /** Chooses every call's route. */
    final Router router;
    /** Runs a route for the router, taking the engine's lock for the routes under it. */
    private final Router.Routes routes = this::runRoute;
    /** Runs a route for the router with the lock already held (the segments of a conditional batch). */
    private final Router.Routes routesUnderLock = (route, batch, result) -> {
        runLocked(route, batch, result, null);
        return SubmittedBatch.DONE;
    };
    /** Host time per stage of host batches: the index mirror's path counts its own stages in it. */
    final HostStageTimes times;
    volatile boolean closed;
    /** Where the open went, stage by stage. */
    final OpenTimes openTimes;
    /** Host reads in progress, kept apart from everything done under the lock. */
    final HostReadGate hostReaders = new HostReadGate();
    /** Shards' parts of batches run where they lay since open ({@link #executeInPlace}). */
    final LongAdder partsInPlace = new LongAdder();
    /** Single calls: on the host, else as batches of one by the GPU routes. */
    final SingleCalls singles;
    /** Single calls and small batches run on the host, between the GPU's work. */
    final HostOperations hostOps;
    /** Batches of values of any length, staged as device columns ({@link Router.Route#PACKED}); under the lock. */
    private final PackedValueBatches packed;
    private final GpuDiagnostics diagnostics = new GpuDiagnostics(this);
    private final GpuEngineFeatures features = new GpuEngineFeatures(this);

    /** An engine over what {@link GpuEngines} opened; it owns all of it from here on. */
    GpuEngine(CudaRuntime cuda, GpuTableKernels kernels, PoolTable pool, AtomicReference<BucketCache> cache, BatchPath path,
              Router router, HostStageTimes times, OpenTimes openTimes) {
        this.cuda = cuda;
        this.kernels = kernels;
        this.pool = pool;
        this.geometry = pool.geometry();
        this.cache = cache;
        this.path = path;
        this.queued = path.queued();
        this.oneLaunch = path.oneLaunch();
        this.router = router;
        this.times = times;
        this.openTimes = openTimes;
        this.singles = new SingleCalls(this, geometry, router);
        this.hostOps = new HostOperations(this, new BucketRefresh(cuda), router.costs());
        this.packed = new PackedValueBatches(cuda, geometry.keySize(), geometry.valueSize(), times);
    }

    /** {@return what only the GPU engine offers: device-resident batches, BktCache's figures and control} */
    public GpuEngineFeatures features() {
        return features;
    }

    @Override
    public Optional<GpuFeatures> gpuFeatures() {
        return Optional.of(features);
    }

    /** Loads BktCache now ({@link GpuEngineFeatures#reloadBucketCache}). */
    @Override
    public boolean reloadBucketCache(boolean wait) {
        return features.reloadBucketCache(wait);
    }

    /** {@return what this engine did and where its time went (routes taken, stage profiles), for tests and benchmarks} */
    public GpuDiagnostics diagnostics() {
        return diagnostics;
    }

    @Override
    public Geometry geometry() {
        return geometry;
    }

    // ------------------------------------------------------------------ single operations: on the host ({@link SingleCalls})

    /** Single calls run on the host, between the GPU's work, unless every write runs on the GPU ({@code hostBatchesMax=0}). */
    @Override
    public boolean runsSingleCallsInPlace() {
        return router.writesOnHost();
    }

    /** A batch the router's measured costs now send to the host ({@link Router#prefersHost}). */
    @Override
    public boolean runsBatchInPlace(Batch batch) {
        return router.prefersHost(batch);
    }

    /**
     * A caller's batch merged by a coalescer ran on the GPU's routes: its wait is the GPU's cost for a
     * batch its size as the caller saw it (merged batches of 16 threads' 1024 writes took 360 µs a
     * merged batch on the GPU and 1.6 ms a caller's batch; by the first figure alone the host, at 1.3
     * ms, looked dearer, and the writes ran at half the CPU backend's rate: bench ycsb, issue 57).
     */
    @Override
    public void callerWaited(int operations, boolean writes, long nanos) {
        router.costs().gpuRan(operations, writes, nanos);
    }

    @Override
    public Outcome get(MemorySegment key, MemorySegment valueOut) {
        return singles.get(key, valueOut);
    }

    /** A get that gives the value's length: its own where {@link #valueLengths}, else the value size. */
    @Override
    public int read(MemorySegment key, MemorySegment valueOut) {
        return singles.read(key, valueOut);
    }

    /**
     * Whether values have lengths of their own: on a format 3 pool over the index mirror, where host
     * batches of them take {@link Router.Route#PACKED} (or the host) and single calls run on the host.
     */
    @Override
    public boolean valueLengths() {
        return router.valueLengths();
    }

    @Override
    public Outcome getAlongside(MemorySegment key, MemorySegment valueOut) {
        return singles.getAlongside(key, valueOut);
    }

    @Override
    public Outcome put(MemorySegment key, MemorySegment value) {
        return singles.write(OpKind.PUT, key, value);
    }

    @Override
    public Outcome insert(MemorySegment key, MemorySegment value) {
        return singles.write(OpKind.INSERT, key, value);
    }

    @Override
    public Outcome update(MemorySegment key, MemorySegment value) {
        return singles.write(OpKind.UPDATE, key, value);
    }

    @Override
    public Outcome delete(MemorySegment key) {
        return singles.write(OpKind.DELETE, key, null);
    }

    @Override
    public Outcome compareAndSet(MemorySegment key, MemorySegment expected, MemorySegment value) {
        return singles.compareAndSet(key, expected, value);
    }

    @Override
    public Outcome compareAndDelete(MemorySegment key, MemorySegment expected) {
        return singles.compareAndDelete(key, expected);
    }

    // ------------------------------------------------------------------ batches

    /** Runs {@code call} by the route the router gives it (for {@link SingleCalls}). */
    SubmittedBatch route(Router.Call call, Batch batch, BatchResult result) {
        return router.run(call, batch, result, routes);
    }

    /** Runs a batch, by the route the router gives it ({@link Router.Call#BATCH}). */
    @Override
    public void execute(Batch batch, BatchResult result) {
        router.run(Router.Call.BATCH, batch, result, routes).await();
    }

    /**
     * Starts a batch: a small batch of gets on the index mirror returns without waiting (it runs
     * alongside other threads' such batches, see {@link #startRead}), so that a caller (the
     * coalescer) gathers its next batch while the GPU runs this one; any other batch, or one that
     * finds no free slot, runs at once, as {@link #execute}. A batch started this way reads what the
     * batches before it wrote, and every later call that writes first waits for it.
     */
    @Override
    public SubmittedBatch submit(Batch batch, BatchResult result) {
        return router.run(Router.Call.BATCH, batch, result, routes);
    }

    /**
     * Runs a shard's part of a caller's batch where it lies, when the router says it may
     * ({@link Router#runsInPlace}) and both the batch and the result are pinned: the part's chunks are
     * gathered from the batch and scattered into the result on the GPU ({@link MirrorPath}), queued
     * with other threads' batches as any batch of the pipeline is.
     */
    @Override
    public boolean executeInPlace(Batch batch, BatchResult result, MemorySegment positions, int count) {
        if (closed || !router.runsInPlace(batch, count)) {
            return false;  // a closed engine fails in execute, with its usual message
        }
        long called = System.nanoTime();
        cuda.bind();
        PreparedBatch prepared = queued.pinPartOutsideLock(batch, result, positions, count);
        if (prepared == null) {
            return false;
        }
        try {
            BatchInFlight started = executeLocked(Router.Route.PIPELINE, batch, result, called, prepared);
            if (started != null) {
                awaitOutsideLock(started);
                finishLocked(started);
            }
        } finally {
            queued.release(prepared);
        }
        times.add(HostStageTimes.Stage.TOTAL, System.nanoTime() - called);
        partsInPlace.increment();
        return true;
    }

    /**
     * Runs {@code batch} by {@code route}: the routes outside the lock here (null when they decline),
     * the others under it, after the batch's memory is registered where the pipeline will use it.
     */
    private SubmittedBatch runRoute(Router.Route route, Batch batch, BatchResult result) {
        switch (route) {
            case HOST_READ:
                return singles.readOnHost(batch, result);
            case HOST:
                return hostOps.run(batch, result);
            case SMALL_READS:
                return startRead(batch, result);
            case PACKED: {
                // The host's share of a batch of values of any length before the lock and after it:
                // its layout, and the copy back of its last chunk's results.
                long called = System.nanoTime();
                cuda.bind();  // staging registers the thread's memory with the context
                packed.stage(batch);
                try {
                    executeLocked(route, batch, result, called, null);
                } finally {
                    finishPacked(batch, result);  // gives its result slot back, whatever happened
                }
                times.add(HostStageTimes.Stage.TOTAL, System.nanoTime() - called);
                return SubmittedBatch.DONE;
            }
            default:
                long called = System.nanoTime();
                PreparedBatch prepared = route == Router.Route.PIPELINE ? pinOutsideLock(batch, result) : null;
                BatchInFlight started = executeLocked(route, batch, result, called, prepared);
                if (started != null) {
                    awaitOutsideLock(started);
                    finishLocked(started);
                }
                if (prepared != null) {
                    queued.release(prepared);
                }
                times.add(HostStageTimes.Stage.TOTAL, System.nanoTime() - called);
                return SubmittedBatch.DONE;
        }
    }

    /** After the lock: a packed batch's last results copied back and moved into {@code result} ({@link PackedValueBatches#finish}). */
    private void finishPacked(Batch batch, BatchResult result) {
        try {
            packed.finish(batch, result);
        } catch (RuntimeException e) {
            throw BatchFailures.of(e, pool.file().path(), batch.size(), result, null);
        }
    }

    /** Registers the batch's and result's memory where the path wants it, before the lock ({@link QueuedBatches#pinOutsideLock}). */
    private PreparedBatch pinOutsideLock(Batch batch, BatchResult result) {
        if (closed || batch.size() == 0) {
            return null;  // a closed engine fails in executeLocked, with its usual message
        }
        cuda.bind();
        return queued.pinOutsideLock(batch, result);
    }

    /**
     * Runs {@code route} under the lock; returns the batch still in flight when the route is the
     * pipeline's, which leaves it queued behind other threads' batches for its caller to wait for
     * outside the lock, else null (done).
     */
    private synchronized BatchInFlight executeLocked(Router.Route route, Batch batch, BatchResult result, long called,
                                                     PreparedBatch prepared) {
        long locked = System.nanoTime();
        times.add(HostStageTimes.Stage.LOCK_WAIT, locked - called);
        boolean pipelined = route == Router.Route.PIPELINE;
        // A batch of gets allocates and frees nothing: the heap's free space stays where it is. Moved
        // to the GPU for every batch, a format 3 heap went there and back (73 ms and 114 ms of a phase
        // of YCSB C at batches of 4096) for one batch of gets that re-measured the GPU among host
        // batches (docs/lab/2026-12-02-route-costs-and-the-jit.md).
        ensureOpen(!pipelined, !batch.onlyGets());
        cuda.bind();
        boolean part = prepared != null && prepared.positions != null;
        int n = part ? prepared.partSize : batch.size();
        if (!part) {
            result.reset(n);  // a part's caller reset the whole result; other shards may be writing into it now
        }
        if (n == 0) {
            return null;
        }
        pool.admitOpsInFlight(queued.opsInFlight() + n);
        long started = System.nanoTime();
        times.add(HostStageTimes.Stage.ENTRY, started - locked);
        BatchInFlight inFlight = null;
        try {
            if (pipelined) {
                inFlight = queued.start(batch, result, prepared);
            } else {
                runLocked(route, batch, result, prepared);
            }
            times.add(HostStageTimes.Stage.PATH, System.nanoTime() - started);
        } catch (RuntimeException e) {
            throw BatchFailures.of(e, pool.file().path(), n, result, part ? prepared.positions : null);
        } finally {
            openHostReadsIfIdle();
        }
        return inFlight;
    }

    /** Waits for the GPU to be done with a batch in flight, outside the lock (other threads queue theirs meanwhile). */
    private void awaitOutsideLock(BatchInFlight inFlight) {
        try {
            queued.awaitOutsideLock(inFlight);
        } catch (CudaException e) {
            if (closed) {
                return;  // closed meanwhile: finishLocked says whether the close harvested the batch first
            }
            throw GpuFailure.of(pool.file().path(), "a batch of " + inFlight.batch.size() + " operations", e);
        }
    }

    /** Under the lock again: the rest of a batch {@link #executeLocked} left in flight. */
    private synchronized void finishLocked(BatchInFlight inFlight) {
        long locked = System.nanoTime();
        try {
            if (closed) {
                // Closing harvested every chunk in flight: the results are in place, unless some
                // operations waited for a resize, which a closed engine cannot run.
                if (inFlight.failure != null) {
                    throw inFlight.failure;
                }
                if (!queued.harvested(inFlight) || inFlight.rerun.length > 0) {  // abandoned, or a resize left to run
                    throw new org.gphash.IndexClosedException(pool.file().path());
                }
                return;
            }
            cuda.bind();
            if (queued.harvested(inFlight) && inFlight.rerun.length > 0) {
                // The rest of the batch (a resize, then a rerun) is GPU work: if a host write had the
                // pool lent after this batch was harvested, the GPU takes it back first.
                hostReaders.close();
                hostOps.takeBack(true);
            }
            queued.finish(inFlight);
        } catch (RuntimeException e) {
            throw BatchFailures.of(e, pool.file().path(), inFlight.size, inFlight.result, inFlight.positions);
        } finally {
            openHostReadsIfIdle();
            times.add(HostStageTimes.Stage.PATH, System.nanoTime() - locked);
        }
    }

    /** The batch has run (or failed) and nothing else is in flight: the pool is whole again. */
    void openHostReadsIfIdle() {
        if (!queued.batchesInFlight()) {
            hostReaders.open();
        }
    }

    /**
     * Runs a route under the lock, after the drain, into a result reset to the batch's size;
     * {@code prepared}: what was prepared for the batch before the lock, or null.
     */
    private void runLocked(Router.Route route, Batch batch, BatchResult result, PreparedBatch prepared) {
        switch (route) {
            case SMALL_READS_LOCKED -> {
                ReadSlot slot = oneLaunch.claimRead(batch);  // the drain freed every slot
                if (slot == null) {
                    throw new IllegalStateException("no small-read slot was free under the engine's lock, after the drain");
                }
                oneLaunch.issueRead(slot, batch, result).await();
            }
            case SMALL_WRITES -> oneLaunch.executeSmallWrites(batch, result);
            case PIPELINE, POOL_PATH -> path.execute(batch, result, prepared);
            case PACKED -> {
                if (!router.valueLengths()) {
                    throw new IllegalStateException("values of any length run on the GPU over the index mirror, which this "
                            + "engine does not use (IndexStats.indexPlacement says why); open the pool with the CPU backend");
                }
                packed.run(batch, result, path);
            }
            // Under this lock throughout: nothing writes between the compare and the write.
            case CONDITIONAL -> ConditionalBatches.execute(batch, result,
                    (plain, r) -> router.run(Router.Call.SEGMENT, plain, r, routesUnderLock));
            default -> throw new IllegalStateException(route + " does not run under the engine's lock");
        }
    }

    /**
     * Claims a slot under the lock, then issues the batch of gets outside it; null, having done
     * nothing, when no slot is free. The returned batch's await wraps a CUDA failure like every
     * other entry point.
     */
    private SubmittedBatch startRead(Batch batch, BatchResult result) {
        int n = batch.size();
        ReadSlot slot;
        SubmittedBatch read;
        result.reset(n);
        try {
            cuda.bind();  // claiming may start a BktCache load
            synchronized (this) {
                if (closed) {
                    throw new org.gphash.IndexClosedException(pool.file().path());
                }
                // Host writes stop while GPU reads run (the GPU reads blocks the host might reuse), and
                // what they changed reaches the mirror and the cache first.
                if (hostOps.needsTakeBack()) {
                    hostReaders.close();
                    hostOps.takeBack(false);
                }
                pool.admitOpsInFlight(n);
                slot = oneLaunch.claimRead(batch);
                hostReaders.open();  // under the lock, between batches: the pool is whole
            }
            if (slot == null) {
                return null;
            }
            read = oneLaunch.issueRead(slot, batch, result);
        } catch (CudaException e) {
            throw GpuFailure.of(pool.file().path(), "a batch of " + n + " gets", e);
        }
        return () -> {
            try {
                read.await();
            } catch (CudaException e) {
                throw GpuFailure.of(pool.file().path(), "a batch of " + n + " gets", e);
            }
        };
    }

    @Override
    public ScanState startScan() {
        return new EntryScan.State();
    }

    /**
     * The next live entries, read from the pool on the host between batches (the engine's lock keeps
     * kernels from writing meanwhile; the pool is complete after every batch, the mirror and the
     * cache being copies).
     */
    @Override
    public synchronized void readEntries(ScanState scan, org.gphash.EntryChunk chunk) {
        EntryScan.State state = EntryScan.State.of(scan);
        ensureOpen();
        pool.readEntries(state, chunk);
    }

    /** A consistent copy of the pool, taken between batches. */
    @Override
    public synchronized void snapshot(Path target) {
        ensureOpen();
        pool.snapshot(target);
    }

    /** The mirror path, or null on the pool path (for this package's probes and the stage profile). */
    MirrorPath mirrorPath() {
        return path instanceof MirrorPath m ? m : null;
    }

    /** {@return whether batches run on the v2 pipeline over the HBM index mirror ({@link IndexStats#indexPlacement()} says why not)} */
    public boolean usesIndexMirror() {
        return router.mirror();
    }

    /** {@return true on the index mirror, whose pipeline keeps batch order per key; the pool path does not} */
    @Override
    public boolean ordersOperationsOnAKey() {
        return usesIndexMirror();
    }

    @Override
    public long poolIdentity() {
        return pool.poolIdentity();
    }

    @Override
    public void commitShardMembership(long indexId, long seed, int shard, int shards, long epoch) {
        pool.commitShardMembership(new PoolHeader.ShardMembership(indexId, seed, shard, shards, epoch));
    }

    /** {@return the CUDA runtime of the GPU this engine runs on (device-resident batches must live there)} */
    public CudaRuntime cuda() {
        return cuda;
    }

    @Override
    public synchronized IndexStats stats() {
        ensureOpen();  // the heap's figures are the GPU's, and BktCache's counters are read from the device
        openHostReadsIfIdle();
        return path.stats(pool.stats(Backend.GPU)).withBucketCache(cache.get().stats());
    }

    /** Makes the engine's CUDA context the calling thread's (for probes in this package). */
    void bindContext() {
        cuda.bind();
    }

    /** How batches run, for probes in this package. */
    BatchPath path() {
        return path;
    }

    /** The current layout (for tests). */
    synchronized TableLayout layout() {
        return pool.layout();
    }

    @Override
    public RecoveryReport lastRecovery() {
        return pool.recovery();
    }

    /**
     * Throws if closed; otherwise first waits for the batches of gets running outside the lock and
     * puts their results in place, so that whatever the caller does next comes after them and
     * nothing reads the pool, the mirror or the cache while it changes them (every synchronized
     * entry point that touches the GPU calls it; while the lock is held no other such batch starts).
     */
    void ensureOpen() {
        ensureOpen(true, true);
    }

    /**
     * {@link #ensureOpen()}, leaving other threads' host batches in flight when {@code drainBatches} is
     * false (only a host batch on the pipeline may queue behind them: its kernels run after theirs),
     * and the heap's free space with the host when {@code heapToGpu} is false (before the engine lends
     * the pool to the host again, {@link HostOperations}); the GPU's copies take what host writes
     * changed either way.
     */
    void ensureOpen(boolean drainBatches, boolean heapToGpu) {
        if (closed) {
            throw new org.gphash.IndexClosedException(pool.file().path());
        }
        hostReaders.close();
        cuda.bind();
        oneLaunch.drainReads();
        if (drainBatches) {
            queued.drainBatches();
        }
        hostOps.takeBack(heapToGpu);
    }

    private void releaseGpu() {
        cuda.bind();
        hostOps.close();
        packed.close();
        cache.get().close();
        path.close();
        kernels.close();
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        // The close record (fast next open) is the host heap's bitmap: it must be the one the
        // batches left on the GPU, or the next open would hand out blocks that hold values. If it
        // cannot be fetched the pool is left as after a crash, and the next open scans.
        boolean heapOnHost = false;
        try {
            GpuFailure.during(pool.file().path(), "close", () -> {
                hostReaders.close();
                cuda.bind();
                oneLaunch.drainReads();
                queued.drainBatches();  // their callers find their results in place
                cuda.synchronizeContext();
                if (!hostOps.heapOnHost()) {
                    path.syncHost();  // else the host's heap is the current one
                }
            });
            heapOnHost = true;
        } finally {
            try {
                releaseGpu();
            } finally {
                if (heapOnHost) {
                    pool.close();  // unregisters the mapping before it is unmapped (PoolRegistration)
                } else {
                    pool.abandon();
                }
            }
        }
    }

    @Override
    public synchronized void abandon() {
        if (closed) {
            return;
        }
        closed = true;
        hostReaders.close();
        oneLaunch.abandonReads(new IllegalStateException("the GPU engine for " + pool.file().path()
                + " was abandoned with this batch of gets in flight"));
        try {
            releaseGpu();
        } finally {
            pool.abandon();
        }
    }
}
