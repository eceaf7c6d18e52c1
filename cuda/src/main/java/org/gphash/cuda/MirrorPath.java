package org.gphash.cuda;

import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoHAsync;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoDAsync;
import static jcuda.driver.JCudaDriver.cuStreamCreate;
import static jcuda.driver.JCudaDriver.cuStreamDestroy;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.Map;

import jcuda.Pointer;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.IndexStats;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.index.Geometry;
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
 */
final class MirrorPath implements BatchPath {

    /** Operations per pipeline run; larger batches run as successive slices. */
    static final int MAX_SLICE = 1 << 20;

    private final EngineParts parts;
    private final Geometry geometry;
    private final DeviceIndexMirror mirror = new DeviceIndexMirror();
    private final DeviceHeap heap = new DeviceHeap();
    private final BatchPipeline pipeline;
    private final CUstream stream = new CUstream();
    private final PinnedBuffer hostKinds = new PinnedBuffer();
    private final PinnedBuffer hostKeys = new PinnedBuffer();
    private final PinnedBuffer hostValues = new PinnedBuffer();
    private final PinnedBuffer hostCodes = new PinnedBuffer();
    private final PinnedBuffer hostOut = new PinnedBuffer();
    private final DeviceBuffer kinds = new DeviceBuffer();
    private final DeviceBuffer keys = new DeviceBuffer();
    private final DeviceBuffer values = new DeviceBuffer();
    private final DeviceBuffer codes = new DeviceBuffer();
    private final DeviceBuffer out = new DeviceBuffer();
    private final DeviceBuffer rerun = new DeviceBuffer();
    private long resizes;

    MirrorPath(EngineParts parts, PipelineKernels kernels) {
        this.parts = parts;
        this.geometry = parts.geometry();
        this.pipeline = new BatchPipeline(kernels, geometry);
        try {
            cuStreamCreate(stream, CUstream_flags.CU_STREAM_NON_BLOCKING);
            heap.push(parts.pool());
            mirror.load(parts.pool().layout(), parts.kernels().poolAddress());
        } catch (RuntimeException e) {
            closeQuietly();
            throw e;
        }
    }

    /** GPU memory the mirror of this pool and the buffers of a full slice take. */
    static long bytesNeeded(PoolTable pool) {
        int vs = pool.geometry().valueSize();
        int ks = pool.geometry().keySize();
        long staging = (long) MAX_SLICE * (2 + ks + 2L * vs);
        return DeviceIndexMirror.bytesFor(pool.layout()) + BatchPipeline.bytesFor(BatchPipeline.capacityFor(MAX_SLICE), vs)
                + staging;
    }

    @Override
    public void execute(Batch batch, BatchResult result) {
        int n = batch.size();
        int ks = geometry.keySize();
        int vs = geometry.valueSize();
        MemorySegment batchKinds = batch.kinds();
        for (int first = 0; first < n; first += MAX_SLICE) {
            long t0 = System.nanoTime();
            int m = Math.min(MAX_SLICE, n - first);
            long valueWrites = 0;
            long deletes = 0;
            boolean reads = false;
            for (int i = first; i < first + m; i++) {
                OpKind kind = OpKind.ofOrdinal(batchKinds.get(ValueLayout.JAVA_BYTE, i));
                if (kind.hasValue()) {
                    valueWrites++;
                }
                if (kind == OpKind.DELETE) {
                    deletes++;
                }
                reads |= kind == OpKind.GET || kind == OpKind.READ_MODIFY_WRITE;
            }
            long t1 = System.nanoTime();
            stage(batch, first, m, valueWrites > 0);
            long t2 = System.nanoTime();
            runSlice(m, kinds.address(), keys.address(), valueWrites > 0 ? values.address() : 0, codes.address(),
                    reads ? out.address() : 0, valueWrites, reads, valueWrites + deletes > 0);
            cuMemcpyDtoHAsync(hostCodes.pointer(), codes.pointer(), m, stream);
            if (reads) {
                cuMemcpyDtoHAsync(hostOut.pointer(), out.pointer(), (long) m * vs, stream);
            }
            long t3 = System.nanoTime();
            cuStreamSynchronize(stream);
            long t4 = System.nanoTime();
            MemorySegment c = hostCodes.segment();
            for (int i = 0; i < m; i++) {
                int code = c.get(ValueLayout.JAVA_BYTE, i);
                if (code < Outcome.FOUND.code() || code > Outcome.REPLACED.code()) {
                    throw new IllegalStateException("the pipeline returned code " + code + " for operation " + (first + i));
                }
            }
            MemorySegment.copy(c, 0, result.outcomeCodes(), first, m);
            if (reads) {
                ParallelCopy.copy(hostOut.segment(), 0, result.values(), (long) first * vs, (long) m * vs);
            }
            if (BatchPipeline.DEBUG) {
                System.err.printf("gphash host batch of %d: kinds %.2f ms, staging %.2f ms, pipeline %.2f ms, copies out "
                        + "%.2f ms, results %.2f ms%n", m, (t1 - t0) / 1e6, (t2 - t1) / 1e6, (t3 - t2) / 1e6, (t4 - t3) / 1e6,
                        (System.nanoTime() - t4) / 1e6);
            }
        }
    }

    /** Copies operations first..first+m of a host batch into pinned memory and on to the GPU. */
    private void stage(Batch batch, int first, int m, boolean withValues) {
        int ks = geometry.keySize();
        int vs = geometry.valueSize();
        hostKinds.ensure(m);
        hostKeys.ensure((long) m * ks);
        hostCodes.ensure(m);
        hostOut.ensure((long) m * vs);
        kinds.ensure(m);
        keys.ensure((long) m * ks);
        codes.ensure(m);
        out.ensure((long) m * vs);
        MemorySegment.copy(batch.kinds(), first, hostKinds.segment(), 0, m);
        ParallelCopy.copy(batch.keys(), (long) first * ks, hostKeys.segment(), 0, (long) m * ks);
        cuMemcpyHtoDAsync(kinds.pointer(), hostKinds.pointer(), m, stream);
        cuMemcpyHtoDAsync(keys.pointer(), hostKeys.pointer(), (long) m * ks, stream);
        if (withValues) {
            hostValues.ensure((long) m * vs);
            values.ensure((long) m * vs);
            ParallelCopy.copy(batch.values(), (long) first * vs, hostValues.segment(), 0, (long) m * vs);
            cuMemcpyHtoDAsync(values.pointer(), hostValues.pointer(), (long) m * vs, stream);
        }
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
            long[] counts = pipeline.countKinds(stream, new BatchPipeline.DeviceOps(m, k, key, val, code, o, 0));
            if (counts[0] > 0 && val == 0) {
                throw new IllegalArgumentException("a device batch with writes needs its values buffer");
            }
            if (counts[1] > 0 && o == 0) {
                throw new IllegalArgumentException("a device batch with reads needs its out buffer");
            }
            runSlice(m, k, key, val, code, o, counts[0], counts[1] > 0, counts[0] + counts[2] > 0);
        }
    }

    /**
     * Runs one slice through the pipeline, again for the operations of groups that found every
     * candidate bucket full, after a resize, until none is left.
     */
    private void runSlice(long n, long kindsAt, long keysAt, long valuesAt, long codesAt, long outAt, long valueWrites,
                          boolean reads, boolean writes) {
        BucketCache cache = parts.cache();
        cache.operationsRan(n, parts.tableParams());
        long opsAt = 0;
        long count = n;
        for (;;) {
            ensureFreeBlocks(valueWrites);
            PoolTable pool = parts.pool();
            long[] c = pipeline.run(stream, new BatchPipeline.DeviceOps(count, kindsAt, keysAt, valuesAt, codesAt, outAt, opsAt),
                    parts.tableParams(), mirror.tableParams(pool.layout(), geometry, pool.seeds()), cache.params(),
                    cache.enabled(), heap, pool.file().mappedSize(), reads, writes);
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

    /** The operations of the last run whose code says NEED_RESIZE. */
    private int[] needResize(long n, long codesAt, long opsAt, long count) {
        byte[] c = new byte[Math.toIntExact(n)];
        cuMemcpyDtoH(Pointer.to(c), devicePointer(codesAt), n);
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

    /**
     * A JCuda device pointer to a raw device address (the caller's buffers arrive as addresses): JCuda
     * passes a pointer's native address plus its byte offset, so an empty pointer offset by the address.
     */
    static jcuda.driver.CUdeviceptr devicePointer(long address) {
        return new jcuda.driver.CUdeviceptr().withByteOffset(address);
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
        mirror.load(parts.pool().layout(), parts.kernels().poolAddress());
        resizes++;
    }

    @Override
    public void syncHost() {
        heap.pull(parts.pool());
    }

    @Override
    public IndexStats stats(IndexStats pool) {
        return pool.withEngineState(heap.totalBlocks(), heap.freeBlocks(),
                "HBM mirror (" + (mirror.bytes() >> 20) + " MiB, loaded in " + mirror.lastLoadNanos() / 1_000_000 + " ms)");
    }

    @Override
    public long lastBatchGpuNanos() {
        return pipeline.lastGpuNanos();
    }

    /** The pipeline, for the profile of its stages (benchmarks and tests). */
    BatchPipeline pipeline() {
        return pipeline;
    }

    Map<BatchPipeline.Stage, Long> stageNanos() {
        return pipeline.stageNanos();
    }

    private void closeQuietly() {
        for (AutoCloseable c : new AutoCloseable[] {mirror, heap, pipeline, hostKinds, hostKeys, hostValues, hostCodes,
                hostOut, kinds, keys, values, codes, out, rerun}) {
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
