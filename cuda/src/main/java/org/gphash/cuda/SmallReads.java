package org.gphash.cuda;

import static jcuda.driver.JCudaDriver.cuMemcpyDtoHAsync;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoDAsync;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import jcuda.driver.CUfunction;
import jcuda.driver.CUstream;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.OpKind;

/**
 * Small batches of gets in one launch (pipeline/pipe_small_reads.cuh): one copy in (the keys), one
 * kernel (probe the mirror, copy the value from the pool), one copy out (values and codes), one
 * wait. The pipeline's few dozen launches cost a batch tens of microseconds whatever its size, which
 * is what a coalesced batch of a handful of single-key gets would otherwise wait for; below
 * {@link #MAX_OPS} operations its ordering of pool reads by address buys less than that.
 *
 * <p>{@code -Dgphash.smallReads=N} sets the largest batch taken this way (0: never), for
 * measurements. Not thread-safe (the engine runs one batch at a time).
 */
final class SmallReads implements AutoCloseable {

    /** Largest batch of gets run in one launch. */
    static final int MAX_OPS = Integer.getInteger("gphash.smallReads", 1024);
    /** Fields of SmallReadsArgs (pipe_small_reads.cuh). */
    static final int ARGS_FIELDS = 4;

    private static final byte GET = (byte) OpKind.GET.ordinal();

    private final CUfunction kernel;
    private final int keySize;
    private final int valueSize;
    private final PinnedBuffer hostKeys = new PinnedBuffer();
    private final PinnedBuffer hostOut = new PinnedBuffer();
    private final DeviceBuffer keys = new DeviceBuffer();
    private final DeviceBuffer out = new DeviceBuffer();
    private long batches;

    SmallReads(CUfunction kernel, int keySize, int valueSize) {
        this.kernel = kernel;
        this.keySize = keySize;
        this.valueSize = valueSize;
    }

    /** Whether {@code batch} runs here: at most {@link #MAX_OPS} operations, every one a get. */
    static boolean accepts(Batch batch) {
        int n = batch.size();
        if (n == 0 || n > MAX_OPS) {
            return false;
        }
        MemorySegment kinds = batch.kinds();
        for (int i = 0; i < n; i++) {
            if (kinds.get(ValueLayout.JAVA_BYTE, i) != GET) {
                return false;
            }
        }
        return true;
    }

    /**
     * Runs {@code batch} (accepted by {@link #accepts}) on {@code stream}, after what is queued there,
     * and waits; outcomes and values go into {@code result}. {@code table}, {@code mirrorTable},
     * {@code cache}: the pool's, the mirror's and the cache's parameters; {@code clock}: the cache's.
     */
    void run(CUstream stream, Batch batch, BatchResult result, byte[] table, byte[] mirrorTable, byte[] cache,
             long clock) {
        int n = batch.size();
        long keyBytes = (long) n * keySize;
        long outBytes = (long) n * valueSize + n;
        hostKeys.ensure(keyBytes);
        hostOut.ensure(outBytes);
        keys.ensure(keyBytes);
        out.ensure(outBytes);
        MemorySegment.copy(batch.keys(), 0, hostKeys.segment(), 0, keyBytes);
        cuMemcpyHtoDAsync(keys.pointer(), hostKeys.pointer(), keyBytes, stream);
        byte[] args = KernelParams.longs(n, keys.address(), out.address(), clock);
        // One sub-group of lanes (a bucket's slots, at least 4) or one warp per get: enough blocks for all.
        Launcher.launch(kernel, (long) n * 32, stream, table, mirrorTable, cache, args);
        cuMemcpyDtoHAsync(hostOut.pointer(), out.pointer(), outBytes, stream);
        cuStreamSynchronize(stream);
        batches++;
        MemorySegment o = hostOut.segment();
        MemorySegment.copy(o, (long) n * valueSize, result.outcomeCodes(), 0, n);
        MemorySegment.copy(o, 0, result.values(), 0, (long) n * valueSize);
    }

    /** Batches run here so far. */
    long batches() {
        return batches;
    }

    @Override
    public void close() {
        hostKeys.close();
        hostOut.close();
        keys.close();
        out.close();
    }
}
