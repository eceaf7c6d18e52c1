package org.gphash.cuda.cache;

import static jcuda.driver.JCudaDriver.cuEventCreate;
import static jcuda.driver.JCudaDriver.cuEventDestroy;
import static jcuda.driver.JCudaDriver.cuEventElapsedTime;
import static jcuda.driver.JCudaDriver.cuEventQuery;
import static jcuda.driver.JCudaDriver.cuEventRecord;
import static jcuda.driver.JCudaDriver.cuMemGetInfo;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoDAsync;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuMemsetD8;
import static jcuda.driver.JCudaDriver.cuMemsetD8Async;
import static jcuda.driver.JCudaDriver.cuStreamCreate;
import static jcuda.driver.JCudaDriver.cuStreamDestroy;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;

import java.util.function.LongSupplier;

import jcuda.CudaException;
import jcuda.Pointer;
import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;
import jcuda.driver.CUresult;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;
import org.gphash.Geometry;
import org.gphash.bktcache.BktCacheConfig;
import org.gphash.bktcache.BktCacheStats;
import org.gphash.bktcache.CachePolicy;
import org.gphash.bktcache.loading.ReloadSchedule;
import org.gphash.cuda.runtime.CudaRuntime;
import org.gphash.cuda.runtime.DeviceBuffer;
import org.gphash.cuda.runtime.KernelParams;
import org.gphash.cuda.runtime.Launcher;
import org.gphash.table.PoolLog;
import org.gphash.table.TableLayout;

/**
 * BktCache's host side (GPHash §3.3): the cache's device memory, and loads queued on the cache's
 * own stream so that they run while batches go on (cuda/src/main/cuda/gphash/cache/cache_load.cuh).
 * Nothing here is persistent: the cache starts empty at every open, so a crash during a load loses
 * nothing, and it is emptied when a resize renumbers the buckets.
 *
 * <p>Used by {@link org.gphash.cuda.GpuEngine} under its lock. The engine calls {@link #awaitLoad()} before any
 * host-side step that remaps or restructures the pool, since a load's kernels read the pool.
 */
public final class BucketCache implements AutoCloseable {

    /** Copies of one bucket a load makes before leaving it out because writers keep changing it. */
    private static final int FETCH_TRIES = 4;
    /** Blocks of the load's strided kernels: enough to fill a Hopper GPU once, few enough to share it with batches. */
    private static final int LOAD_BLOCKS = 132;

    private final CudaRuntime cuda;
    private final Geometry geometry;
    private final BktCacheConfig config;
    private final ReloadSchedule schedule;
    private final long slotSize;

    private final CUstream stream = new CUstream();
    private final CUevent started = new CUevent();
    private final CUevent finished = new CUevent();

    private final DeviceBuffer f = new DeviceBuffer();
    private final DeviceBuffer g = new DeviceBuffer();
    private final DeviceBuffer refs = new DeviceBuffer();
    private final DeviceBuffer entries = new DeviceBuffer();
    private final DeviceBuffer scores = new DeviceBuffer();
    private final DeviceBuffer stats = new DeviceBuffer();
    private final DeviceBuffer assign = new DeviceBuffer();
    private final DeviceBuffer keep = new DeviceBuffer();
    private final DeviceBuffer incoming = new DeviceBuffer();
    private final DeviceBuffer prevHot = new DeviceBuffer();
    private final DeviceBuffer snapshot = new DeviceBuffer();
    private final DeviceBuffer state = new DeviceBuffer();
    private final DeviceBuffer hist = new DeviceBuffer();

    private long totalBuckets;
    private long capacity;
    /** GPU memory free when the cache was first sized, -1 before: the base of its default byte bound. */
    private long freeAtFirstSizing = -1;
    private long topLog2 = -1;
    private int levelCount = -1;
    private long clock = 1;
    private long sequence;
    private boolean loading;

    private long pipelineHits;
    private long pipelineMisses;
    private long reloads;
    private long lastReloadNanos;
    private long totalReloadNanos;
    private long abandoned;
    private long cached;

    public BucketCache(CudaRuntime cuda, Geometry geometry, BktCacheConfig config, LongSupplier nanoClock) {
        this.cuda = cuda;
        this.geometry = geometry;
        this.config = config;
        this.schedule = new ReloadSchedule(config, nanoClock);
        this.slotSize = (8L + geometry.keyStride() + geometry.valueSize() + 15) & ~15L;
        cuStreamCreate(stream, CUstream_flags.CU_STREAM_NON_BLOCKING);
        cuEventCreate(started, CUevent_flags.CU_EVENT_DEFAULT);
        cuEventCreate(finished, CUevent_flags.CU_EVENT_DEFAULT);
        stats.ensure(KernelParams.CACHE_STATS * 8L);
        cuMemsetD8(stats.pointer(), (byte) 0, KernelParams.CACHE_STATS * 8L);
    }

    BktCacheConfig config() {
        return config;
    }

    public boolean enabled() {
        return config.enabled();
    }

    /**
     * Sizes the cache for the table's current layout. When the bucket numbering changed (first call,
     * or a resize), the cache is emptied and its counters forgotten. Nothing may be in flight.
     */
    public void attach(TableLayout layout) {
        if (!config.enabled() || (layout.topLog2() == topLog2 && layout.levelCount() == levelCount)) {
            return;
        }
        awaitLoad();
        topLog2 = layout.topLog2();
        levelCount = layout.levelCount();
        totalBuckets = layout.totalBuckets();
        if (freeAtFirstSizing < 0) {
            long[] free = new long[1];
            long[] total = new long[1];
            cuMemGetInfo(free, total);
            freeAtFirstSizing = free[0];
        }
        // A bucket's copy holds its values at the pool's value size: the share alone would ask a pool of
        // large values for more memory than the GPU has (BktCacheConfig.maxBytes).
        capacity = config.capacityFor(totalBuckets, geometry.slotsPerBucket() * slotSize, freeAtFirstSizing);
        if (capacity > KernelParams.MAX_CACHE_ENTRIES) {
            capacity = KernelParams.MAX_CACHE_ENTRIES;
        }
        long entryBytes = capacity * geometry.slotsPerBucket() * slotSize;
        try {
            f.ensure(totalBuckets * 4);
            scores.ensure(totalBuckets * 4);
            snapshot.ensure(totalBuckets * 4);
            prevHot.ensure(totalBuckets);
            g.ensure(capacity * 4);
            refs.ensure(capacity * 4);
            assign.ensure(capacity * 4);
            keep.ensure(capacity);
            incoming.ensure(capacity * 4);
            entries.ensure(entryBytes);
            state.ensure(KernelParams.LOAD_STATE * 8L);
            hist.ensure(256 * 8L);
        } catch (CudaException e) {
            throw new IllegalStateException("BktCache of " + capacity + " buckets (" + config.share() * 100
                    + "% of " + totalBuckets + ") needs " + (entryBytes >> 20) + " MiB of GPU memory more than the "
                    + "GPU has free: configure a smaller share or maxBytes (" + e.getMessage() + ")", e);
        }
        cuMemsetD8(f.pointer(), (byte) 0xFF, totalBuckets * 4);
        cuMemsetD8(scores.pointer(), (byte) 0, totalBuckets * 4);
        cuMemsetD8(prevHot.pointer(), (byte) 0, totalBuckets);
        if (capacity > 0) {
            cuMemsetD8(g.pointer(), (byte) 0xFF, capacity * 4);
            cuMemsetD8(refs.pointer(), (byte) 0, capacity * 4);
        }
        cached = 0;
    }

    /** CacheParams for a batch launch; each launch gets the next clock value (the LRU stamp). */
    public byte[] params() {
        if (!config.enabled() || capacity == 0) {
            return KernelParams.noCache();
        }
        lastClock = clock++ & 0xFFFF_FFFFL;
        return KernelParams.cache(capacity, f.address(), g.address(), refs.address(), entries.address(), slotSize,
                scores.address(), totalBuckets, config.policy().ordinal(), (1L << config.counterSampleShift()) - 1,
                lastClock, stats.address());
    }

    /** The clock value the last {@link #params()} handed out (the v2 pipeline passes it in its batch descriptor). */
    public long lastClock() {
        return lastClock;
    }

    private long lastClock;

    /** Counts a batch's operations; starts a load when one is due and none is running. */
    public void operationsRan(long n, byte[] table) {
        if (!config.enabled()) {
            return;
        }
        poll();
        schedule.operationsRan(n);
        if (!loading && schedule.due()) {
            load(table, !config.concurrentFetch());
        }
    }

    /** Starts a load now (the API's on-demand reload); with {@code wait}, returns when it is done. */
    public void load(byte[] table, boolean wait) {
        if (!config.enabled() || capacity == 0) {
            return;
        }
        if (loading) {
            awaitLoad();
        }
        schedule.loaded();
        sequence++;
        long k = capacity;
        byte[] cacheParams = params();
        byte[] load = KernelParams.load(assign.address(), keep.address(), incoming.address(), prevHot.address(),
                snapshot.address(), state.address(), hist.address(), k, config.scanGuard(), sequence, FETCH_TRIES);
        cuEventRecord(started, stream);
        if (config.policy() != CachePolicy.RANDOM) {
            cuMemcpyDtoDAsync(snapshot.pointer(), scores.pointer(), totalBuckets * 4, stream);
        }
        cuMemsetD8Async(state.pointer(), (byte) 0, KernelParams.LOAD_STATE * 8L, stream);
        cuMemsetD8Async(hist.pointer(), (byte) 0, 256 * 8L, stream);
        cuMemsetD8Async(keep.pointer(), (byte) 0, capacity, stream);
        cuMemsetD8Async(assign.pointer(), (byte) 0xFF, capacity * 4, stream);
        int blocks = (int) Math.min(LOAD_BLOCKS * 8L, (totalBuckets + Launcher.BLOCK - 1) / Launcher.BLOCK);
        for (int shift = 24; shift >= 0; shift -= 8) {
            byte[] s = KernelParams.int32(shift);
            Launcher.launchBlocks(cuda.cacheHistogram, blocks, stream, table, cacheParams, load, s);
            Launcher.launchBlocks(cuda.cachePickDigit, 1, stream, load, s);
        }
        Launcher.launchBlocks(cuda.cacheSelect, blocks, stream, table, cacheParams, load);
        int planBlocks = (int) Math.min(LOAD_BLOCKS * 8L, (capacity + Launcher.BLOCK - 1) / Launcher.BLOCK);
        Launcher.launchBlocks(cuda.cachePlan, planBlocks, stream, cacheParams, load, KernelParams.int32(0));
        Launcher.launchBlocks(cuda.cachePlan, planBlocks, stream, cacheParams, load, KernelParams.int32(1));
        Launcher.launchBlocks(cuda.cacheFetch, LOAD_BLOCKS, stream, table, cacheParams, load);
        cuEventRecord(finished, stream);
        loading = true;
        if (wait) {
            awaitLoad();
        }
    }

    /** Whether a load is queued or running. */
    public boolean loading() {
        poll();
        return loading;
    }

    /** Collects a finished load's figures, if one has finished. */
    private void poll() {
        if (loading && done(finished)) {
            finish();
        }
    }

    /** Whether the event has completed; JCuda reports "not yet" as an exception when exceptions are on. */
    private static boolean done(CUevent event) {
        try {
            return cuEventQuery(event) == CUresult.CUDA_SUCCESS;
        } catch (CudaException e) {
            if (e.getMessage() != null && e.getMessage().contains(CUresult.stringFor(CUresult.CUDA_ERROR_NOT_READY))) {
                return false;
            }
            throw e;
        }
    }

    /** Waits for the load in flight, if any. */
    public void awaitLoad() {
        if (loading) {
            cuStreamSynchronize(stream);
            finish();
        }
    }

    private void finish() {
        float[] ms = new float[1];
        cuEventElapsedTime(ms, started, finished);
        long[] st = new long[KernelParams.LOAD_STATE];
        cuMemcpyDtoH(Pointer.to(st), state.pointer(), st.length * 8L);
        lastReloadNanos = (long) (ms[0] * 1e6);
        totalReloadNanos += lastReloadNanos;
        reloads++;
        abandoned += st[KernelParams.LOAD_ABANDONED];
        cached = countCached();
        loading = false;
        if (PoolLog.LOG.isLoggable(System.Logger.Level.DEBUG)) {
            PoolLog.LOG.log(System.Logger.Level.DEBUG, "gphash: BktCache load {0} done in {1} us: {2} of {3} entries hold "
                    + "a bucket, {4} fetches abandoned", reloads, lastReloadNanos / 1000, cached, capacity,
                    st[KernelParams.LOAD_ABANDONED]);
        }
    }

    /** Entries that hold a bucket (G(y) set), counted on the host from G: capacity x 4 bytes. */
    private long countCached() {
        int[] gy = new int[(int) capacity];
        cuMemcpyDtoH(Pointer.to(gy), g.pointer(), capacity * 4);
        long n = 0;
        for (int v : gy) {
            if (v != -1) {
                n++;
            }
        }
        return n;
    }

    /**
     * Adds what a v2 pipeline batch counted: pool values served from the cache (hits) and read across
     * PCIe (misses). On that path the cache holds values for the reads; probes read the index mirror.
     */
    public void addPipelineCounts(long hits, long misses) {
        pipelineHits += hits;
        pipelineMisses += misses;
    }

    /** Hits and misses since the engine opened (device counters), and the loads' figures. */
    public BktCacheStats stats() {
        if (!config.enabled()) {
            return BktCacheStats.disabled();
        }
        poll();
        long[] s = new long[KernelParams.CACHE_STATS];
        cuMemcpyDtoH(Pointer.to(s), stats.pointer(), s.length * 8L);
        return new BktCacheStats(config.policy(), config.share(), capacity, cached, s[KernelParams.CACHE_HITS] + pipelineHits,
                s[KernelParams.CACHE_MISSES] + pipelineMisses, reloads, lastReloadNanos, totalReloadNanos, abandoned);
    }

    /** The pool buckets cached now (G), for tests: -1 for an empty entry. */
    int[] cachedBuckets() {
        awaitLoad();
        int[] gy = new int[(int) capacity];
        if (capacity > 0) {
            cuMemcpyDtoH(Pointer.to(gy), g.pointer(), capacity * 4);
        }
        return gy;
    }

    /** The access scores now (LFU counters or LRU stamps), for tests. */
    int[] scores() {
        int[] s = new int[(int) totalBuckets];
        if (totalBuckets > 0) {
            cuMemcpyDtoH(Pointer.to(s), scores.pointer(), totalBuckets * 4);
        }
        return s;
    }

    @Override
    public void close() {
        try {
            awaitLoad();
        } finally {
            for (DeviceBuffer b : new DeviceBuffer[] {f, g, refs, entries, scores, stats, assign, keep, incoming, prevHot,
                    snapshot, state, hist}) {
                b.close();
            }
            cuEventDestroy(started);
            cuEventDestroy(finished);
            cuStreamDestroy(stream);
        }
    }
}
