package org.gphash.cuda.poolpath;

import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;
import static jcuda.driver.JCudaDriver.cuMemsetD8;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;

import jcuda.Pointer;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.IndexStats;
import org.gphash.Outcome;
import org.gphash.cuda.cache.BucketCache;
import org.gphash.cuda.path.BatchPath;
import org.gphash.cuda.path.EngineParts;
import org.gphash.cuda.path.OneLaunchBatches;
import org.gphash.cuda.path.QueuedBatches;
import org.gphash.cuda.runtime.CudaRuntime;
import org.gphash.cuda.runtime.DeviceBuffer;
import org.gphash.cuda.runtime.KernelParams;
import org.gphash.cuda.runtime.Launcher;
import org.gphash.cuda.staging.PreparedBatch;

/**
 * Batches run by per-operation kernels that probe the pool itself (table/batch_kernel.cuh), the GPHash
 * paper's design: one warp per operation, CAS on the pool's slots, BktCache over hot pool buckets.
 * The engine falls back to it when GPU memory cannot hold the index mirror, or when asked to
 * ({@link org.gphash.IndexMirror#OFF}).
 *
 * <p>A batch is cut into chunks that alternate between two streams: a chunk's copies overlap the other
 * stream's kernel. The host reserves a value block per writing operation before a launch and frees
 * those no slot took; blocks a batch unlinked are freed when the batch has finished, so no kernel
 * ever reads a block that was reused under it.
 */
public final class PoolPath implements BatchPath {

    /** Smallest and largest chunk a batch is cut into; a batch is cut into about four chunks between them. */
    static final int MIN_CHUNK = 2048;
    static final int MAX_CHUNK = 1 << 18;

    private final EngineParts parts;
    private final StreamLane[] lanes = {new StreamLane(), new StreamLane()};
    private final DeviceResident device = new DeviceResident();
    private long[] pendingFree = new long[1024];
    private int pendingFreeCount;
    private boolean rebuildFreeSpace;
    private final String reason;

    public PoolPath(EngineParts parts, String reason) {
        this.parts = parts;
        this.reason = reason;
    }

    @Override
    public void execute(Batch batch, BatchResult result, PreparedBatch prepared) {
        int n = batch.size();
        BucketCache cache = parts.cache();
        cache.operationsRan(n, parts.tableParams());
        int chunk = Math.clamp((n + 3) / 4, MIN_CHUNK, MAX_CHUNK);
        int[] retry = runChunks(batch, result, null, n, chunk);
        while (retry.length > 0) {
            // Every candidate bucket of these keys was full: grow the table (nothing is in flight), go again.
            parts.resize();
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
                if (parts.pool().freeBlocks() < writes) {
                    // Reserving may grow the heap, which remaps the pool: nothing may be in flight.
                    retry = drain(result, retry);
                    parts.cache().awaitLoad();
                }
                parts.pool().reserveBlocks(blocks, writes);
            }
            l.stage(new StreamLane.Chunk(batch, first, chunkOps, count, writes, reads, blocks),
                    parts.geometry().keySize(), parts.geometry().valueSize());
            l.launch(parts.cuda(), parts.tableParams(), parts.cache().params(), parts.geometry().keySize(),
                    parts.geometry().valueSize());
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
        MemorySegment codes = l.codes.host();
        MemorySegment kinds = l.kinds.host();
        MemorySegment resultCodes = result.outcomeCodes();
        MemorySegment resultValues = result.values();
        int vs = parts.geometry().valueSize();
        int block = 0;
        boolean bulkValues = c.ops() == null && c.reads();
        if (bulkValues) {
            // One copy for the whole chunk: entries of operations without a value are never read.
            MemorySegment.copy(l.out.host(), 0, resultValues, (long) c.first() * vs, (long) c.n() * vs);
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
                    parts.pool().freeBlock(b);  // never published: nothing can read it
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
                MemorySegment.copy(l.out.host(), (long) i * vs, resultValues, (long) op * vs, vs);
            }
        }
        parts.pool().addToSize(l.counter(KernelParams.ITEMS_ADDED) - l.counter(KernelParams.ITEMS_REMOVED));
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

    /** With every kernel of the batch finished, unlinked blocks can be reused. */
    private void finishBatch() {
        for (int i = 0; i < pendingFreeCount; i++) {
            parts.pool().reclaimBlock(pendingFree[i]);
        }
        pendingFreeCount = 0;
        if (rebuildFreeSpace) {
            rebuildFreeSpace = false;
            parts.pool().rebuildFreeSpace();
        }
    }

    @Override
    public void executeOnDevice(long n, long kinds, long keys, long values, long lengths, long codes, long out,
                                long outLengths) {
        if (lengths != 0 || outLengths != 0) {
            throw new IllegalStateException("the pool path's kernels take values of the value size only");
        }
        parts.cache().operationsRan(n, parts.tableParams());
        device.run(n, new long[] {kinds, keys, values, codes, out});
        finishBatch();
    }

    @Override
    public QueuedBatches queued() {
        return QueuedBatches.NONE;  // every batch runs to the end under the engine's lock
    }

    @Override
    public OneLaunchBatches oneLaunch() {
        return OneLaunchBatches.NONE;
    }

    @Override
    public void syncHost() {
        // The host heap is authoritative on this path.
    }

    @Override
    public void heapToDevice() {
        // The host heap is authoritative on this path.
    }

    @Override
    public byte[] mirrorTableParams() {
        return null;
    }

    @Override
    public IndexStats stats(IndexStats pool) {
        return pool.withEngineState(pool.valueBlocks(), pool.valueBlocksFree(), "pool (" + reason + ")");
    }

    @Override
    public long lastBatchGpuNanos() {
        return 0;
    }

    /** The steps of a device-resident batch: count writes, reserve and assign blocks, run, resize and rerun, finish. */
    private final class DeviceResident {
        private final DeviceBuffer blocks = new DeviceBuffer();
        private final DeviceBuffer reserved = new DeviceBuffer();
        private final DeviceBuffer retired = new DeviceBuffer();
        private final DeviceBuffer counters = new DeviceBuffer();
        private final GroupBuffers groups = new GroupBuffers();

        private long retiredCapacity;

        void run(long n, long[] at) {
            CudaRuntime cuda = parts.cuda();
            counters.ensure(KernelParams.COUNTERS * 8L);
            blocks.ensure(n * 8);
            retiredCapacity = KernelParams.retiredCapacity(n);
            retired.ensure(retiredCapacity * 8);
            long[] c = launchCounted(cuda.countWrites, n, params(n, at, false));
            int writes = Math.toIntExact(c[0]);
            if (writes > 0) {
                long[] b = new long[writes];
                if (parts.pool().freeBlocks() < writes) {
                    parts.cache().awaitLoad();  // the heap grows: the pool is remapped
                }
                parts.pool().reserveBlocks(b, writes);
                reserved.ensure(writes * 8L);
                cuMemcpyHtoD(reserved.pointer(), Pointer.to(b), writes * 8L);
                launchCounted(cuda.assignBlocks, n, params(n, at, false), KernelParams.longs(reserved.address()));
            }
            boolean retryOnly = false;
            for (;;) {
                groups.reset(n, null);
                byte[] p = params(n, at, retryOnly);
                byte[] table = parts.tableParams();
                Launcher.launch(cuda.groupBatch, n, null, table, p);
                c = launchCounted(cuda.batch, n, table, p, parts.cache().params());
                collect(c);
                if (c[KernelParams.NEED_RESIZE] == 0) {
                    break;
                }
                parts.resize();
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
            parts.pool().addToSize(c[KernelParams.ITEMS_ADDED] - c[KernelParams.ITEMS_REMOVED]);
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

    @Override
    public void close() {
        for (StreamLane l : lanes) {
            l.close();
        }
        device.close();
    }
}
