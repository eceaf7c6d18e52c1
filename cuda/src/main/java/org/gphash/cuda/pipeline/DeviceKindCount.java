package org.gphash.cuda.pipeline;

import static jcuda.driver.JCudaDriver.cuMemsetD8Async;
import static jcuda.driver.JCudaDriver.cuStreamQuery;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

import jcuda.driver.CUfunction;
import jcuda.driver.CUresult;
import jcuda.driver.CUstream;
import org.gphash.cuda.runtime.DeviceBuffer;
import org.gphash.cuda.runtime.KernelParams;
import org.gphash.cuda.runtime.Launcher;
import org.gphash.cuda.runtime.PinnedBuffer;
import org.gphash.format.ValueClasses;
import org.gphash.spi.IdleStrategy;

/**
 * The count of a device-resident batch's kinds (pipeline.cuh's pipe_count_kinds), which the host
 * waits for before it runs the batch: value writes, reads and deletes, so that it can size the heap and
 * skip stages, and where values have lengths of their own the writes over the value size, the bytes
 * the others' blocks take where they share segments, and the writes whose blocks take runs of segments,
 * by class too ({@link #COUNT_WORDS}). The kernel's last block writes the sums into
 * registered memory and then a sequence number the host spins on: no copy, no stream synchronisation.
 * Not thread-safe.
 */
final class DeviceKindCount implements AutoCloseable {

    /** The counts {@link #count} returns (pipeline.cuh's kCountWords). */
    static final int COUNT_WORDS = 7 + ValueClasses.COUNT;
    static final int COUNT_TOO_LONG = 3;
    /** Bytes of the blocks that share segments. */
    static final int COUNT_BLOCK_BYTES = 4;
    /** Writes whose blocks take runs of whole segments (over 8 KiB), and the segments those take. */
    static final int COUNT_RUN_WRITES = 5;
    static final int COUNT_RUN_SEGMENTS = 6;
    /** Then those writes by class, {@code ValueClasses.COUNT} words. */
    static final int COUNT_RUN_CLASSES = 7;

    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();

    private final CUfunction kernel;
    /** The kernel's sums in GPU memory, then the blocks done; zero between counts. */
    private final DeviceBuffer sums = new DeviceBuffer();
    /** The sums and the sequence number, written by the kernel. */
    private final PinnedBuffer host = new PinnedBuffer();
    private long sequence;
    /** Whether the sums in GPU memory are zero (the count's last block zeroes them; a failed count may not). */
    private boolean sumsZero;

    DeviceKindCount(CUfunction kernel) {
        this.kernel = kernel;
        sums.ensure((COUNT_WORDS + 1) * 8L);
        host.ensure((COUNT_WORDS + 1) * 8L);
    }

    /** Counts {@code ops} (its descriptor) with {@code blocks} blocks of the kernel; waits for the count. */
    long[] count(CUstream stream, BatchPipeline.DeviceOps ops, byte[] table, int blocks) {
        if (!sumsZero) {
            cuMemsetD8Async(sums.pointer(), (byte) 0, (COUNT_WORDS + 1) * 8L, stream);
        }
        long seq = ++sequence;
        sumsZero = false;  // until the count's last block has zeroed them again
        Launcher.launchBlocks(kernel, blocks, stream, table, ops.descriptor().bytes(), KernelParams.longs(sums.address()),
                KernelParams.longs(host.segment().address()), KernelParams.longs(seq));
        MemorySegment h = host.segment();
        for (int round = 1; (long) LONG.getAcquire(h, COUNT_WORDS * 8L) != seq; round++) {
            if ((round & 0xFFF) == 0 && streamIdle(stream) && (long) LONG.getAcquire(h, COUNT_WORDS * 8L) != seq) {
                throw new IllegalStateException("the count of a device batch's kinds ended without its sums");
            }
            IdleStrategy.BUSY_SPIN.idle(round);
        }
        sumsZero = true;
        long[] counts = new long[COUNT_WORDS];
        for (int i = 0; i < COUNT_WORDS; i++) {
            counts[i] = h.get(ValueLayout.JAVA_LONG, i * 8L);
        }
        return counts;
    }

    /** Whether everything queued on {@code stream} has run (a failure there is thrown). */
    private static boolean streamIdle(CUstream stream) {
        try {
            return cuStreamQuery(stream) == CUresult.CUDA_SUCCESS;
        } catch (jcuda.CudaException e) {
            if (e.getMessage() != null && e.getMessage().contains(CUresult.stringFor(CUresult.CUDA_ERROR_NOT_READY))) {
                return false;
            }
            throw e;
        }
    }

    @Override
    public void close() {
        sums.close();
        host.close();
    }
}
