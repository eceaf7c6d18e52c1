package org.gphash.cuda;

import static jcuda.driver.JCudaDriver.cuCtxSynchronize;
import static jcuda.driver.JCudaDriver.cuMemGetInfo;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.LinkedHashMap;
import java.util.Map;

import jcuda.CudaException;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.spi.Engine;
import org.gphash.spi.SubmittedBatch;
import org.gphash.GPHashConfig;
import org.gphash.GpuFeatures;
import org.gphash.IndexMirror;
import org.gphash.IndexStats;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.PoolFullException;
import org.gphash.RecoveryReport;
import org.gphash.bktcache.BktCacheConfig;
import org.gphash.bktcache.BktCacheStats;
import org.gphash.format.Geometry;
import org.gphash.index.PoolTable;
import org.gphash.index.TableLayout;
import org.gphash.index.VerifyReport;

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
 * <p><b>One mutator at a time.</b> CPU and GPU atomics on one mapped word are not atomic with each
 * other, so the host never writes the pool while a kernel may run: every entry point is
 * synchronized, and the host-side steps that write the pool (header commits, zeroing a new level,
 * heap growth) run only after the batch's streams have drained.
 */
public final class GpuEngine implements Engine, GpuFeatures {

    /** Free GPU memory left over when choosing the mirror, for the cache, other users and fragmentation. */
    private static final long MIRROR_MARGIN = 512L << 20;

    private final CudaRuntime cuda;
    private final GpuTableKernels kernels;
    private final PoolTable pool;
    private final Geometry geometry;
    private BucketCache cache;
    private final BatchPath path;
    private final Batch single;
    private final BatchResult singleResult;
    private boolean closed;

    private GpuEngine(CudaRuntime cuda, GpuTableKernels kernels, PoolTable pool, GPHashConfig config) {
        this.cuda = cuda;
        this.kernels = kernels;
        this.pool = pool;
        this.geometry = pool.geometry();
        BucketCache c = null;
        BatchPath p = null;
        try {
            c = new BucketCache(cuda, geometry, config.bucketCache(), System::nanoTime);
            c.attach(pool.layout());
            this.cache = c;
            p = choosePath(config.indexMirror());
        } catch (RuntimeException e) {
            if (c != null) {
                c.close();
            }
            kernels.close();
            pool.close();
            throw e;
        }
        this.path = p;
        this.single = Batch.create(geometry.keySize(), geometry.valueSize(), 1);
        this.singleResult = new BatchResult(geometry.valueSize(), 1);
    }

    /** The mirror when asked and the GPU has the memory for it, else the pool path, saying why. */
    private BatchPath choosePath(IndexMirror configured) {
        EngineParts parts = new EngineParts(cuda, kernels, pool, geometry, this);
        IndexMirror mode = MirrorChoice.effective(configured);
        long[] free = new long[1];
        long[] total = new long[1];
        cuMemGetInfo(free, total);
        MirrorChoice choice = MirrorChoice.decide(mode, MirrorPath.bytesNeeded(pool), free[0], MIRROR_MARGIN);
        if (!choice.mirror()) {
            return new PoolPath(parts, choice.reason());
        }
        try {
            return new MirrorPath(parts, new PipelineKernels(cuda));
        } catch (CudaException e) {
            if (mode == IndexMirror.REQUIRED) {
                throw new IllegalStateException("IndexMirror.REQUIRED, but allocating the mirror failed: " + e.getMessage(), e);
            }
            return new PoolPath(parts, "index mirror off: allocating it failed: " + e.getMessage());
        }
    }

    /** Creates a pool on a registrable file system (tmpfs, hugetlbfs) and runs it on the GPU. */
    public static GpuEngine create(GPHashConfig config) {
        if (config.itemChecksums()) {
            throw new IllegalArgumentException("item checksums are kept and checked by the CPU engine only; the GPU "
                    + "engine does not compute them yet (create the pool without itemChecksums, or use the CPU backend)");
        }
        PoolRegistration.checkLocation(config.path());
        return GpuFailure.during(config.path(), "create", () -> {
            CudaRuntime cuda = CudaRuntime.get();
            cuda.bind();
            GpuTableKernels kernels = new GpuTableKernels(cuda);
            return new GpuEngine(cuda, kernels, PoolTable.create(config, kernels), config);
        });
    }

    /** Opens a pool (any engine may have written it), recovering it with kernels. */
    public static GpuEngine open(GPHashConfig config) {
        PoolRegistration.checkLocation(config.path());
        return GpuFailure.during(config.path(), "open", () -> {
            CudaRuntime cuda = CudaRuntime.get();
            cuda.bind();
            GpuTableKernels kernels = new GpuTableKernels(cuda);
            return new GpuEngine(cuda, kernels, PoolTable.open(config, kernels), config);
        });
    }

    /** {@return whether this machine has what the GPU engine needs (a CUDA driver, a Hopper-or-newer GPU, the kernels)} */
    public static boolean available() {
        return CudaRuntime.available();
    }

    /** {@return the GPU's name, as the driver reports it} */
    public String deviceName() {
        return cuda.deviceName;
    }

    @Override
    public Geometry geometry() {
        return geometry;
    }

    // ------------------------------------------------------------------ single operations

    private synchronized Outcome runSingle(OpKind kind, MemorySegment key, MemorySegment value, MemorySegment out) {
        single.clear();
        byte[] k = key.toArray(ValueLayout.JAVA_BYTE);
        byte[] v = value == null ? null : value.toArray(ValueLayout.JAVA_BYTE);
        single.add(kind, k, v);
        execute(single, singleResult);
        Outcome o = singleResult.outcome(0);
        if (out != null && (o == Outcome.FOUND || o == Outcome.REPLACED)) {
            MemorySegment.copy(singleResult.values(), 0, out, 0, geometry.valueSize());
        }
        return o;
    }

    @Override
    public Outcome get(MemorySegment key, MemorySegment valueOut) {
        return runSingle(OpKind.GET, key, null, valueOut);
    }

    @Override
    public Outcome put(MemorySegment key, MemorySegment value) {
        return runSingle(OpKind.PUT, key, value, null);
    }

    @Override
    public Outcome insert(MemorySegment key, MemorySegment value) {
        return runSingle(OpKind.INSERT, key, value, null);
    }

    @Override
    public Outcome update(MemorySegment key, MemorySegment value) {
        return runSingle(OpKind.UPDATE, key, value, null);
    }

    @Override
    public Outcome delete(MemorySegment key) {
        return runSingle(OpKind.DELETE, key, null, null);
    }

    // ------------------------------------------------------------------ batches

    @Override
    public synchronized void execute(Batch batch, BatchResult result) {
        ensureOpen();
        cuda.bind();
        int n = batch.size();
        result.reset(n);
        if (n == 0) {
            return;
        }
        pool.admitOpsInFlight(n);
        try {
            path.execute(batch, result);
        } catch (CudaException e) {
            throw GpuFailure.of(pool.file().path(), "a batch of " + n + " operations", e);
        } catch (PoolFullException e) {
            throw new PoolFullException(e.getMessage() + "; " + markNotApplied(result)
                    + " operations of the batch were not applied (NOT_APPLIED in the result), the others were", result, e);
        }
    }

    /**
     * Queues a small batch of gets without waiting where the path can ({@link BatchPath#queues}: the
     * mirror path's one-launch gets), so that a caller (the coalescer) gathers its next batch while
     * the GPU runs this one; any other batch runs at once, as {@link #execute}. A queued batch starts
     * after what is on the engine's stream, on a stream of its own, and its results are harvested in
     * queue order; every other entry point harvests them first, so they never overlap what the host
     * does to the pool. They only read, so none of them can need a resize.
     */
    @Override
    public synchronized SubmittedBatch submit(Batch batch, BatchResult result) {
        if (closed || !path.queues(batch)) {
            execute(batch, result);
            return SubmittedBatch.DONE;
        }
        int n = batch.size();
        result.reset(n);
        pool.admitOpsInFlight(n);
        long ticket;
        try {
            cuda.bind();
            ticket = path.queue(batch, result);
        } catch (CudaException e) {
            throw GpuFailure.of(pool.file().path(), "a batch of " + n + " gets", e);
        }
        return () -> awaitQueued(ticket);
    }

    private synchronized void awaitQueued(long ticket) {
        harvestQueued(ticket);
    }

    /**
     * After a batch failed part way: every operation whose code is not an outcome (it waited for a
     * resize that failed, or its chunk never ran) becomes NOT_APPLIED, and flags the kernels set
     * come off the others. Returns how many did not run.
     */
    static int markNotApplied(BatchResult result) {
        MemorySegment codes = result.outcomeCodes();
        int notApplied = 0;
        for (int i = 0; i < result.size(); i++) {
            int code = codes.get(ValueLayout.JAVA_BYTE, i) & KernelParams.CODE_MASK;
            if (code < Outcome.FOUND.code() || code > Outcome.REPLACED.code()) {
                codes.set(ValueLayout.JAVA_BYTE, i, Outcome.NOT_APPLIED.code());
                notApplied++;
            } else {
                codes.set(ValueLayout.JAVA_BYTE, i, (byte) code);
            }
        }
        return notApplied;
    }

    /**
     * The next live entries, read from the pool on the host between batches (the engine's lock keeps
     * kernels from writing meanwhile; the pool is complete after every batch, the mirror and the
     * cache being copies).
     */
    @Override
    public synchronized void readEntries(org.gphash.index.EntryScan.State state, org.gphash.EntryChunk chunk) {
        ensureOpen();
        pool.readEntries(state, chunk);
    }

    /** A consistent copy of the pool, taken between batches. */
    @Override
    public synchronized void snapshot(java.nio.file.Path target) {
        ensureOpen();
        pool.snapshot(target);
    }

    @Override
    public synchronized void executeOnDevice(long n, long kinds, long keys, long values, long codes, long out) {
        ensureOpen();
        cuda.bind();
        if (n <= 0) {
            return;
        }
        if (kinds == 0 || keys == 0 || codes == 0) {
            throw new IllegalArgumentException("a device batch needs its kinds, keys and codes columns (addresses 0 given: kinds "
                    + kinds + ", keys " + keys + ", codes " + codes + ")");
        }
        pool.admitOpsInFlight(n);
        try {
            path.executeOnDevice(n, kinds, keys, values, codes, out);
        } catch (CudaException e) {
            throw GpuFailure.of(pool.file().path(), "a device batch of " + n + " operations", e);
        }
    }

    /**
     * As {@link #executeOnDevice(long, long, long, long, long, long)}, with JCuda device pointers
     * (null for an unused column): for this module's tests and benchmarks.
     */
    synchronized void executeOnDevice(long n, CUdeviceptr kinds, CUdeviceptr keys, CUdeviceptr values,
                                      CUdeviceptr codes, CUdeviceptr out) {
        executeOnDevice(n, address(kinds), address(keys), address(values), address(codes), address(out));
    }

    /** Runs a {@link DeviceBatch} (see {@link #executeOnDevice(long, long, long, long, long, long)}). */
    public void executeOnDevice(DeviceBatch batch) {
        executeOnDevice(batch.size(), batch.kinds(), batch.keys(), batch.values(), batch.codes(), batch.out());
    }

    /** The address of a device pointer the caller allocated (0 for null). */
    static long address(CUdeviceptr p) {
        if (p == null) {
            return 0;
        }
        long[] a = new long[1];
        jcuda.driver.JCudaDriver.cuPointerGetAttribute(Pointer.to(a),
                jcuda.driver.CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_POINTER, p);
        return a[0];
    }

    /** {@return heap growths whose file space was prepared ahead, off the batch path (0 on the pool path)} */
    synchronized long growthsPreparedAhead() {
        return path instanceof MirrorPath m ? m.growthsPreparedAhead() : 0;
    }

    /** {@return whether this engine prepares heap growths ahead (opt-in, on the mirror path only)} */
    synchronized boolean preparesGrowthsAhead() {
        return path instanceof MirrorPath m && m.preparesGrowthsAhead();
    }

    /** {@return whether batches run on the v2 pipeline over the HBM index mirror ({@link IndexStats#indexPlacement()} says why not)} */
    public synchronized boolean usesIndexMirror() {
        return path instanceof MirrorPath;
    }

    /** {@return true on the index mirror, whose pipeline keeps batch order per key; the pool path does not} */
    @Override
    public boolean ordersOperationsOnAKey() {
        return usesIndexMirror();
    }

    /** Batches run as small batches of gets in one launch ({@link SmallReads}) since open. */
    synchronized long smallReadBatches() {
        return path instanceof MirrorPath m ? m.smallReadBatches() : 0;
    }

    /** Writing batches of distinct keys run as one launch (pipe_small_writes.cuh) since open. */
    synchronized long smallWriteBatches() {
        return path instanceof MirrorPath m ? m.pipeline().smallWriteBatches() : 0;
    }

    /** Runs of a batch that wrote without grouping, their keys being distinct ({@link DistinctKeys}), since open. */
    synchronized long distinctWriteRuns() {
        return path instanceof MirrorPath m ? m.distinctWriteRuns() : 0;
    }

    /**
     * GPU time of the last batch, from the first of its kernels to the last (CUDA events; 0 on the
     * pool path): what the GPHash artifact reports as kernel time.
     */
    public synchronized long lastBatchGpuNanos() {
        return path.lastBatchGpuNanos();
    }

    /**
     * Turns on timing of each stage of the v2 pipeline with GPU events (a diagnostic for benchmarks)
     * and clears what was timed; returns false on the pool path.
     */
    public synchronized boolean profileStages(boolean on) {
        if (path instanceof MirrorPath m) {
            m.pipeline().profile(on);
            return true;
        }
        return false;
    }

    /** {@return GPU time per pipeline stage since {@link #profileStages} turned timing on, in nanoseconds} */
    public synchronized Map<String, Long> stageNanos() {
        Map<String, Long> out = new LinkedHashMap<>();
        if (path instanceof MirrorPath m) {
            m.stageNanos().forEach((stage, nanos) -> out.put(stage.name().toLowerCase(java.util.Locale.ROOT), nanos));
        }
        return out;
    }

    // ------------------------------------------------------------------ the rest

    @Override
    public synchronized IndexStats stats() {
        return path.stats(pool.stats(Backend.GPU)).withBucketCache(cache.stats());
    }

    /** {@return BktCache's figures: hit rate since open, loads and their times} */
    public synchronized BktCacheStats bucketCacheStats() {
        ensureOpen();
        return cache.stats();
    }

    /**
     * Loads BktCache now, on its own stream, instead of waiting for the configured period. With
     * {@code wait} false this returns at once and batches run while the load fetches; a load already
     * running is waited for first. Returns false when the cache is off.
     */
    @Override
    public synchronized boolean reloadBucketCache(boolean wait) {
        ensureOpen();
        cuda.bind();
        if (!cache.enabled()) {
            return false;
        }
        GpuFailure.during(pool.file().path(), "a BktCache load", () -> cache.load(kernels.tableParams(pool.layout()), wait));
        return true;
    }

    /**
     * Replaces BktCache with one of another configuration (the old one's contents and counters are
     * dropped; the new one starts empty). For sensitivity studies on one loaded pool.
     */
    public synchronized void configureBucketCache(BktCacheConfig config) {
        ensureOpen();
        cuda.bind();
        BucketCache fresh = GpuFailure.during(pool.file().path(), "allocating BktCache",
                () -> new BucketCache(cuda, geometry, config, System::nanoTime));
        try {
            cache.close();
            fresh.attach(pool.layout());
        } catch (RuntimeException e) {
            fresh.close();
            throw e;
        }
        cache = fresh;
    }

    /** {@return whether a BktCache load is running (for tests and the reload benchmark)} */
    public synchronized boolean bucketCacheLoading() {
        return cache.loading();
    }

    /** The cache, for tests in this package. */
    BucketCache bucketCache() {
        return cache;
    }

    /** {@return the CPU engine's whole-table verification, run while no kernel is in flight} */
    public synchronized VerifyReport verify() {
        ensureOpen();
        GpuFailure.during(pool.file().path(), "fetching the heap for verify", () -> {
            cuda.bind();
            path.syncHost();
        });
        return pool.verify();
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
     * Throws if closed; otherwise first runs out the batches {@link #submit} queued, so that whatever
     * the caller does next comes after them (every entry point but submit's own queueing calls it).
     */
    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("the GPU engine for " + pool.file().path() + " is closed");
        }
        if (path.hasQueued()) {
            harvestQueued(Long.MAX_VALUE);
        }
    }

    /** Puts the results of the batches queued up to {@code ticket} in place (MAX_VALUE: all), waiting for them. */
    private void harvestQueued(long ticket) {
        try {
            cuda.bind();
            path.harvest(ticket);
        } catch (CudaException e) {
            throw GpuFailure.of(pool.file().path(), "a queued batch of gets", e);
        }
    }

    private void releaseGpu() {
        cuda.bind();
        cache.close();
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
                cuda.bind();
                path.harvest(Long.MAX_VALUE);
                cuCtxSynchronize();
                path.syncHost();
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
        path.dropQueued(new IllegalStateException("the GPU engine for " + pool.file().path()
                + " was abandoned with this batch queued"));
        try {
            releaseGpu();
        } finally {
            pool.abandon();
        }
    }
}
