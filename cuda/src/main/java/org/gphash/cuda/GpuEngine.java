package org.gphash.cuda;

import static jcuda.driver.JCudaDriver.cuCtxSynchronize;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;
import static jcuda.driver.JCudaDriver.cuMemsetD8;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;

import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.Engine;
import org.gphash.GPHashConfig;
import org.gphash.IndexStats;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.RecoveryReport;
import org.gphash.bktcache.BktCacheConfig;
import org.gphash.bktcache.BktCacheStats;
import org.gphash.index.Geometry;
import org.gphash.index.PoolTable;
import org.gphash.index.TableLayout;
import org.gphash.index.VerifyReport;

/**
 * The GPU engine: the pool's mapping registered with CUDA, and operations run as warp-cooperative
 * kernels on it (cuda/src/main/cuda). Pools are created, opened, recovered and resized by the same
 * {@link PoolTable} code as the CPU engine's, with recovery's scans and resize's rehash run as
 * kernels ({@link GpuTableKernels}).
 *
 * <p><b>One mutator at a time.</b> CPU and GPU atomics on one mapped word are not atomic with each
 * other, so the host never writes the pool while a kernel may run: every entry point is
 * synchronized, and the host-side steps that write the pool (header commits, zeroing a new level,
 * heap growth) run only after both streams have drained.
 *
 * <p><b>Batches</b> are cut into chunks that alternate between two streams: a chunk's copies overlap
 * the other stream's kernel. Operations of a batch run in parallel; several on one key run in an
 * order this engine does not promise (see {@link Batch}). Value blocks a batch unlinks are freed when
 * the batch has finished, so no kernel ever reads a block that was reused under it.
 */
public final class GpuEngine implements Engine {

    /** Smallest and largest chunk a batch is cut into; a batch is cut into about four chunks between them. */
    static final int MIN_CHUNK = 2048;
    static final int MAX_CHUNK = 1 << 18;

    private final CudaRuntime cuda;
    private final GpuTableKernels kernels;
    private final PoolTable pool;
    private final Geometry geometry;
    private final StreamLane[] lanes = {new StreamLane(), new StreamLane()};
    private final DeviceResident device = new DeviceResident();
    private BucketCache cache;
    private long[] pendingFree = new long[1024];
    private int pendingFreeCount;
    private boolean rebuildFreeSpace;
    private final Batch single;
    private final BatchResult singleResult;
    private boolean closed;

    private GpuEngine(CudaRuntime cuda, GpuTableKernels kernels, PoolTable pool, BktCacheConfig cacheConfig) {
        this.cuda = cuda;
        this.kernels = kernels;
        this.pool = pool;
        this.geometry = pool.geometry();
        BucketCache c = null;
        try {
            c = new BucketCache(cuda, geometry, cacheConfig, System::nanoTime);
            c.attach(pool.layout());
        } catch (RuntimeException e) {
            if (c != null) {
                c.close();
            }
            pool.close();
            throw e;
        }
        this.cache = c;
        this.single = Batch.create(geometry.keySize(), geometry.valueSize(), 1);
        this.singleResult = new BatchResult(geometry.valueSize(), 1);
    }

    /** Creates a pool on a registrable file system (tmpfs, hugetlbfs) and runs it on the GPU. */
    public static GpuEngine create(GPHashConfig config) {
        PoolRegistration.checkLocation(config.path());
        CudaRuntime cuda = CudaRuntime.get();
        cuda.bind();
        GpuTableKernels kernels = new GpuTableKernels(cuda);
        return new GpuEngine(cuda, kernels, PoolTable.create(config, kernels), config.bucketCache());
    }

    /** Opens a pool (any engine may have written it), recovering it with kernels. */
    public static GpuEngine open(GPHashConfig config) {
        PoolRegistration.checkLocation(config.path());
        CudaRuntime cuda = CudaRuntime.get();
        cuda.bind();
        GpuTableKernels kernels = new GpuTableKernels(cuda);
        return new GpuEngine(cuda, kernels, PoolTable.open(config, kernels), config.bucketCache());
    }

    /** Whether this machine has what the GPU engine needs (a CUDA driver, a Hopper-or-newer GPU, the kernels). */
    public static boolean available() {
        return CudaRuntime.available();
    }

    /** The GPU's name, as the driver reports it. */
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

    // ------------------------------------------------------------------ batches through pinned buffers

    @Override
    public synchronized void execute(Batch batch, BatchResult result) {
        ensureOpen();
        cuda.bind();
        int n = batch.size();
        result.reset(n);
        if (n == 0) {
            return;
        }
        cache.operationsRan(n, kernels.tableParams(pool.layout()));
        int chunk = Math.clamp((n + 3) / 4, MIN_CHUNK, MAX_CHUNK);
        int[] retry = runChunks(batch, result, null, n, chunk);
        while (retry.length > 0) {
            // Every candidate bucket of these keys was full: grow the table (nothing is in flight), go again.
            resize();
            retry = runChunks(batch, result, retry, retry.length, chunk);
        }
        finishBatch();
    }

    /**
     * Runs operations {@code ops} (or 0..n when null) in chunks over both lanes; returns the ones to
     * run again after a resize.
     */
    private int[] runChunks(Batch batch, BatchResult result, int[] ops, int n, int chunkSize) {
        int[] retry = new int[0];
        int lane = 0;
        for (int first = 0; first < n; first += chunkSize) {
            int count = Math.min(chunkSize, n - first);
            StreamLane l = lanes[lane];
            if (l.chunk != null) {
                retry = harvest(l, result, retry);
            }
            int[] chunkOps = ops == null ? null : Arrays.copyOfRange(ops, first, first + count);
            int writes = 0;
            boolean reads = false;
            MemorySegment kinds = batch.kinds();
            for (int i = 0; i < count; i++) {
                byte kind = kinds.get(ValueLayout.JAVA_BYTE, chunkOps == null ? first + i : chunkOps[i]);
                if (StreamLane.writesValue(kind)) {
                    writes++;
                }
                reads |= StreamLane.readsValue(kind);
            }
            long[] blocks = new long[writes];
            if (writes > 0) {
                if (pool.freeBlocks() < writes) {
                    // Reserving may grow the heap, which remaps the pool: nothing may be in flight.
                    retry = drain(result, retry);
                    cache.awaitLoad();
                }
                pool.reserveBlocks(blocks, writes);
            }
            l.stage(new StreamLane.Chunk(batch, first, chunkOps, count, writes, reads, blocks),
                    geometry.keySize(), geometry.valueSize());
            l.launch(cuda, kernels.tableParams(pool.layout()), cache.params(), geometry.keySize(), geometry.valueSize());
            lane ^= 1;
        }
        return drain(result, retry);
    }

    private int[] drain(BatchResult result, int[] retry) {
        for (StreamLane l : lanes) {
            if (l.chunk != null) {
                retry = harvest(l, result, retry);
            }
        }
        return retry;
    }

    /** Waits for a lane's chunk and moves its results into {@code result}; returns the retry list grown. */
    private int[] harvest(StreamLane l, BatchResult result, int[] retry) {
        l.await();
        StreamLane.Chunk c = l.chunk;
        MemorySegment codes = l.hostCodes.segment();
        MemorySegment kinds = l.hostKinds.segment();
        MemorySegment resultCodes = result.outcomeCodes();
        MemorySegment resultValues = result.values();
        int vs = geometry.valueSize();
        int block = 0;
        boolean bulkValues = c.ops() == null && c.reads();
        if (bulkValues) {
            // One copy for the whole chunk: entries of operations without a value are never read.
            MemorySegment.copy(l.hostOut.segment(), 0, resultValues, (long) c.first() * vs, (long) c.n() * vs);
        }
        int[] again = retry;
        int againCount = retry.length;
        for (int i = 0; i < c.n(); i++) {
            int op = c.op(i);
            int raw = codes.get(ValueLayout.JAVA_BYTE, i) & 0xff;
            int code = raw & KernelParams.CODE_MASK;
            byte kind = kinds.get(ValueLayout.JAVA_BYTE, i);
            if (StreamLane.writesValue(kind)) {
                long b = c.reservedBlocks()[block++];
                if ((raw & KernelParams.CONSUMED_FLAG) == 0) {
                    pool.freeBlock(b);  // never published: nothing can read it
                }
            }
            if (code == KernelParams.NEED_RESIZE_CODE) {
                if (againCount == again.length) {
                    again = Arrays.copyOf(again, Math.max(16, againCount * 2));
                }
                again[againCount++] = op;
                continue;
            }
            if (code < Outcome.FOUND.code() || code > Outcome.REPLACED.code()) {
                throw new IllegalStateException("the batch kernel returned code " + code + " for operation " + op);
            }
            resultCodes.set(ValueLayout.JAVA_BYTE, op, (byte) code);
            if (!bulkValues && (code == Outcome.FOUND.code() || code == Outcome.REPLACED.code())) {
                MemorySegment.copy(l.hostOut.segment(), (long) i * vs, resultValues, (long) op * vs, vs);
            }
        }
        pool.addToSize(l.counter(KernelParams.ITEMS_ADDED) - l.counter(KernelParams.ITEMS_REMOVED));
        retireLater(l.retiredBlocks());
        rebuildFreeSpace |= l.retiredOverflowed();
        l.chunk = null;
        return againCount == again.length ? again : Arrays.copyOf(again, againCount);
    }

    private void retireLater(long[] blocks) {
        if (pendingFreeCount + blocks.length > pendingFree.length) {
            pendingFree = Arrays.copyOf(pendingFree, Math.max(pendingFree.length * 2, pendingFreeCount + blocks.length));
        }
        System.arraycopy(blocks, 0, pendingFree, pendingFreeCount, blocks.length);
        pendingFreeCount += blocks.length;
    }

    /** Grows the table, with nothing in flight: the cache's loads read the pool, and its bucket numbers change. */
    private void resize() {
        cache.awaitLoad();
        pool.resize(pool.layout());
        cache.attach(pool.layout());
    }

    /** With every kernel of the batch finished, unlinked blocks can be reused. */
    private void finishBatch() {
        for (int i = 0; i < pendingFreeCount; i++) {
            pool.reclaimBlock(pendingFree[i]);
        }
        pendingFreeCount = 0;
        if (rebuildFreeSpace) {
            rebuildFreeSpace = false;
            pool.rebuildFreeSpace();
        }
    }

    // ------------------------------------------------------------------ device-resident batches

    /**
     * Runs a batch whose operations already live in GPU memory and whose results stay there (the
     * DLRM case: no host round trip for keys or values). {@code kinds}: n bytes of
     * {@link OpKind} ordinals; {@code keys}: n x keySize bytes; {@code values}: n x valueSize bytes
     * (read for writes; may be null for a batch of GETs and DELETEs); {@code codes}: n bytes of
     * {@link Outcome} codes written; {@code out}: n x valueSize bytes, the values found by GET and
     * replaced by READ_MODIFY_WRITE (may be null for a batch without them). Returns when done.
     */
    public synchronized void executeOnDevice(long n, CUdeviceptr kinds, CUdeviceptr keys, CUdeviceptr values,
                                             CUdeviceptr codes, CUdeviceptr out) {
        ensureOpen();
        cuda.bind();
        if (n <= 0) {
            return;
        }
        cache.operationsRan(n, kernels.tableParams(pool.layout()));
        device.run(n, kinds, keys, values, codes, out);
        finishBatch();
    }

    /** Runs a {@link DeviceBatch} (see {@link #executeOnDevice(long, CUdeviceptr, CUdeviceptr, CUdeviceptr, CUdeviceptr, CUdeviceptr)}). */
    public void executeOnDevice(DeviceBatch batch) {
        executeOnDevice(batch.size(), batch.kinds(), batch.keys(), batch.values(), batch.codes(), batch.out());
    }

    /** The steps of {@link #executeOnDevice}: count writes, reserve and assign blocks, run, resize and rerun, finish. */
    private final class DeviceResident {
        private final DeviceBuffer blocks = new DeviceBuffer();
        private final DeviceBuffer reserved = new DeviceBuffer();
        private final DeviceBuffer retired = new DeviceBuffer();
        private final DeviceBuffer counters = new DeviceBuffer();
        private final GroupBuffers groups = new GroupBuffers();

        private long retiredCapacity;

        void run(long n, CUdeviceptr kinds, CUdeviceptr keys, CUdeviceptr values, CUdeviceptr codes, CUdeviceptr out) {
            counters.ensure(KernelParams.COUNTERS * 8L);
            blocks.ensure(n * 8);
            retiredCapacity = KernelParams.retiredCapacity(n);
            retired.ensure(retiredCapacity * 8);
            // The caller's buffers, resolved once: the same for every kernel of this batch.
            long[] at = {address(kinds), address(keys), address(values), address(codes), address(out)};
            long[] c = launchCounted(cuda.countWrites, n, params(n, at, false));
            int writes = Math.toIntExact(c[0]);
            if (writes > 0) {
                long[] b = new long[writes];
                if (pool.freeBlocks() < writes) {
                    cache.awaitLoad();  // the heap grows: the pool is remapped
                }
                pool.reserveBlocks(b, writes);
                reserved.ensure(writes * 8L);
                cuMemcpyHtoD(reserved.pointer(), Pointer.to(b), writes * 8L);
                launchCounted(cuda.assignBlocks, n, params(n, at, false), KernelParams.longs(reserved.address()));
            }
            boolean retryOnly = false;
            for (;;) {
                groups.reset(n, null);
                byte[] p = params(n, at, retryOnly);
                byte[] table = kernels.tableParams(pool.layout());
                Launcher.launch(cuda.groupBatch, n, null, table, p);
                c = launchCounted(cuda.batch, n, table, p, cache.params());
                collect(c);
                if (c[KernelParams.NEED_RESIZE] == 0) {
                    break;
                }
                resize();
                retryOnly = true;
            }
            collect(launchCounted(cuda.finishDeviceBatch, n, params(n, at, false)));
        }

        /** BatchParams over the caller's buffers {@code at} (kinds, keys, values, codes, out) and ours. */
        private byte[] params(long n, long[] at, boolean retryOnly) {
            return KernelParams.batch(n, at[0], at[1], at[2], blocks.address(), at[3], at[4], retired.address(),
                    retiredCapacity, counters.address(), retryOnly, groups.fields());
        }

        private void collect(long[] c) {
            pool.addToSize(c[KernelParams.ITEMS_ADDED] - c[KernelParams.ITEMS_REMOVED]);
            long count = c[KernelParams.RETIRED_COUNT];
            int k = (int) Math.min(count, retiredCapacity);
            long[] b = new long[k];
            if (k > 0) {
                cuMemcpyDtoH(Pointer.to(b), retired.pointer(), k * 8L);
            }
            retireLater(b);
            rebuildFreeSpace |= count > retiredCapacity;
        }

        private long[] launchCounted(jcuda.driver.CUfunction f, long n, byte[]... structs) {
            cuMemsetD8(counters.pointer(), (byte) 0, KernelParams.COUNTERS * 8L);
            Launcher.launch(f, n, null, structs);
            cuStreamSynchronize(null);  // not the context: a cache load on its own stream runs on
            long[] c = new long[KernelParams.COUNTERS];
            cuMemcpyDtoH(Pointer.to(c), counters.pointer(), c.length * 8L);
            return c;
        }

        void close() {
            blocks.close();
            groups.close();
            reserved.close();
            retired.close();
            counters.close();
        }
    }

    /** The address of a device pointer the caller allocated (0 for null). */
    private static long address(CUdeviceptr p) {
        if (p == null) {
            return 0;
        }
        long[] a = new long[1];
        jcuda.driver.JCudaDriver.cuPointerGetAttribute(Pointer.to(a),
                jcuda.driver.CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_POINTER, p);
        return a[0];
    }

    // ------------------------------------------------------------------ the rest

    @Override
    public synchronized IndexStats stats() {
        return pool.stats(Backend.GPU).withBucketCache(cache.stats());
    }

    /** BktCache's figures: hit rate since open, loads and their times. */
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
        cache.load(kernels.tableParams(pool.layout()), wait);
        return true;
    }

    /**
     * Replaces BktCache with one of another configuration (the old one's contents and counters are
     * dropped; the new one starts empty). For sensitivity studies on one loaded pool.
     */
    public synchronized void configureBucketCache(BktCacheConfig config) {
        ensureOpen();
        cuda.bind();
        BucketCache fresh = new BucketCache(cuda, geometry, config, System::nanoTime);
        try {
            cache.close();
            fresh.attach(pool.layout());
        } catch (RuntimeException e) {
            fresh.close();
            throw e;
        }
        cache = fresh;
    }

    /** Whether a BktCache load is running (for tests and the reload benchmark). */
    public synchronized boolean bucketCacheLoading() {
        return cache.loading();
    }

    /** The cache, for tests in this package. */
    BucketCache bucketCache() {
        return cache;
    }

    /** The CPU engine's whole-table verification, run while no kernel is in flight. */
    public synchronized VerifyReport verify() {
        ensureOpen();
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

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("the GPU engine for " + pool.file().path() + " is closed");
        }
    }

    private void releaseGpu() {
        cuda.bind();
        cache.close();
        for (StreamLane l : lanes) {
            l.close();
        }
        device.close();
        kernels.close();
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            cuda.bind();
            cuCtxSynchronize();
            releaseGpu();
        } finally {
            pool.close();  // unregisters the mapping before it is unmapped (PoolRegistration)
        }
    }

    @Override
    public synchronized void abandon() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            releaseGpu();
        } finally {
            pool.abandon();
        }
    }
}
