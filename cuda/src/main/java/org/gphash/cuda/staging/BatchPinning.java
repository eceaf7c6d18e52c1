package org.gphash.cuda.staging;

import static jcuda.driver.JCudaDriver.CU_MEMHOSTREGISTER_PORTABLE;
import static jcuda.driver.JCudaDriver.cuMemHostRegister;
import static jcuda.driver.JCudaDriver.cuMemHostUnregister;

import jcuda.CudaException;
import org.gphash.cuda.runtime.CudaRuntime;
import org.gphash.cuda.runtime.HostPointer;
import org.gphash.spi.HostMemory;
import org.gphash.table.PoolLog;

/**
 * Decides whether a batch's or a result's own memory is pinned, so that its chunks go to the GPU and
 * back with no staging copy. A small block is pinned the second time it is run: a batch that is
 * reused pays the registration once and saves a copy each way on every later run, while a small
 * batch run once would pay about a copy's worth for nothing. A block whose run moves {@link
 * #PIN_AT_ONCE_BYTES} or more is pinned on its first run: registering costs less than the staging
 * copy it saves (issue 25). What counts is what the run moves, not the block: a fresh batch of 2^18
 * gets moves a few MiB of kinds and keys, and registering its whole block of many times that was
 * half the locked host time of a YCSB-C run from 16 threads. A block CUDA refuses (a locked-memory
 * limit) stays staged. Pinned batches replayed the DLRM trace faster than staging every batch
 * (docs/lab/2026-11-23-issue-15-coalescing-and-small-batches.md), so there is no switch back.
 */
public final class BatchPinning {

    /**
     * Batches whose run moves at least this many bytes are pinned on their first run; smaller ones are
     * copied by their calling thread into pinned memory outside the engine's lock ({@link CallerStaging}).
     * A limit of 1 MiB was slower: the locked thread's launches and copies slowed while other threads
     * registered (docs/lab/2026-11-26-router-and-client.md); so was 32 MiB, which registered 16
     * threads' fresh batches of 2^18 writes (docs/lab/2026-11-26-batches-in-flight.md). A batch of
     * 2^20 writes from one thread is still registered, faster than copied by chunk under the lock or
     * whole by the caller (docs/lab/2026-11-27-cpu-engine-and-the-load.md).
     */
    public static final long PIN_AT_ONCE_BYTES = 64L << 20;

    /**
     * Results whose run moves at least this many bytes are pinned on their first run. Lower than for
     * batches: an unpinned result is copied out under the engine's lock (a batch is copied in before it).
     */
    public static final long RESULT_PIN_AT_ONCE_BYTES = 32L << 20;

    private BatchPinning() {
    }

    /**
     * Counts one run of {@code memory} and says whether it is pinned now, pinning it on its second
     * run, or on its first when the run moves {@code atOnceBytes} or more of it (what a staging copy
     * would copy: a batch of gets moves its kinds and keys, not its value column; {@link
     * #PIN_AT_ONCE_BYTES} for batches, {@link #RESULT_PIN_AT_ONCE_BYTES} for results). The caller holds
     * the engine's context.
     */
    public static boolean pinnedForRun(HostMemory memory, CudaRuntime cuda, long bytesMoved, long atOnceBytes) {
        // One block, one registration: the shards of a sharded index (several engines, one context
        // each) pin a caller's batch at once, and CUDA refuses a second registration of a block.
        synchronized (memory) {
            return pinnedForRunLocked(memory, cuda, bytesMoved, atOnceBytes);
        }
    }

    private static boolean pinnedForRunLocked(HostMemory memory, CudaRuntime cuda, long bytesMoved, long atOnceBytes) {
        if (memory.pinRefused()) {
            return false;
        }
        if (memory.pinned()) {
            return true;
        }
        if (memory.noteUse() < 2 && bytesMoved < atOnceBytes) {
            return false;
        }
        long address = memory.segment().address();
        long size = memory.segment().byteSize();
        try {
            // Portable: pinned for every context, so that the shards of a sharded index on other
            // GPUs gather from it and scatter into it too (Engine.executeInPlace).
            cuMemHostRegister(new HostPointer(address), size, CU_MEMHOSTREGISTER_PORTABLE);
        } catch (CudaException e) {
            memory.refusePin();
            PoolLog.LOG.log(System.Logger.Level.DEBUG, "gphash: a batch of {0} bytes stays staged: {1}", size, e.getMessage());
            return false;
        }
        memory.pin(() -> {
            cuda.bind();  // the cleaner's thread
            cuMemHostUnregister(new HostPointer(address));
        });
        return true;
    }
}
