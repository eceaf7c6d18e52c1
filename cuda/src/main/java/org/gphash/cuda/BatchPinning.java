package org.gphash.cuda;

import static jcuda.driver.JCudaDriver.cuMemHostRegister;
import static jcuda.driver.JCudaDriver.cuMemHostUnregister;

import jcuda.CudaException;
import org.gphash.index.PoolLog;
import org.gphash.spi.HostMemory;

/**
 * Decides whether a batch's or a result's own memory is pinned, so that its chunks go to the GPU and
 * back with no staging copy. A small block is pinned the second time it is run: a batch that is
 * reused pays the registration once and saves a copy each way on every later run, while a small
 * batch run once would pay about a copy's worth for nothing. A large block ({@link
 * #PIN_AT_ONCE_BYTES} or more) is pinned on its first run: registering costs about 40 microseconds
 * a MiB, where the staging copy it saves costs more (issue 25: a load of 16M keys in fresh batches
 * of 2^20 spent 43% of its host time copying into staging). A block CUDA refuses (a locked-memory
 * limit) stays staged.
 * {@code -Dgphash.pinBatches=false} stages every batch, the way of earlier builds.
 */
final class BatchPinning {

    static final boolean ENABLED = !"false".equals(System.getProperty("gphash.pinBatches"));

    /** Blocks at least this large are pinned on their first run. */
    static final long PIN_AT_ONCE_BYTES = 32L << 20;

    private BatchPinning() {
    }

    /**
     * Counts one run of {@code memory} and says whether it is pinned now, pinning it on its second
     * run. The caller holds the engine's context.
     */
    static boolean pinnedForRun(HostMemory memory, CudaRuntime cuda) {
        if (!ENABLED || memory.pinRefused()) {
            return false;
        }
        if (memory.pinned()) {
            return true;
        }
        if (memory.noteUse() < 2 && memory.segment().byteSize() < PIN_AT_ONCE_BYTES) {
            return false;
        }
        long address = memory.segment().address();
        long size = memory.segment().byteSize();
        try {
            cuMemHostRegister(new HostPointer(address), size, 0);
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
