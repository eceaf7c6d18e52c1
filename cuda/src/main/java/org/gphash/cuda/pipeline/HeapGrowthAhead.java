package org.gphash.cuda.pipeline;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.gphash.cuda.runtime.CudaRuntime;
import org.gphash.table.PoolLog;
import org.gphash.table.PoolTable;

/**
 * Prepares the value heap's next growth on a thread of its own while batches run: when the free
 * blocks fall under an eighth of the heap (half of what a growth adds), the pool file is extended
 * in place by the next growth's size and its new pages registered with CUDA
 * ({@link PoolTable#prepareHeapGrowth()}). The growth itself, on the batch path, then only tags and
 * commits the chunk. Most of a growth's cost is this part
 * (docs/lab/2026-11-23-issue-15-coalescing-and-small-batches.md). Nothing moves, so kernels and the engine's thread go on meanwhile;
 * where the file would have to be remapped the preparation does nothing and the growth does it all,
 * as before.
 *
 * <p>On by default ({@link org.gphash.GpuTuning#growHeapAhead()}): it sped up the DLRM replay on
 * device-resident batches, with identical outcome digests, and left host batches unchanged
 * (docs/PERFORMANCE.md); {@code HeapGrowthAheadTest} and the GPU suites pass with it.
 */
final class HeapGrowthAhead implements AutoCloseable {

    private final PoolTable pool;
    private final CudaRuntime cuda;
    private final ExecutorService thread;
    private Future<?> running;
    private volatile long prepared;  // written by the one preparing thread

    HeapGrowthAhead(PoolTable pool, CudaRuntime cuda, boolean enabled) {
        this.pool = pool;
        this.cuda = cuda;
        this.thread = enabled ? Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "gphash-heap-growth-ahead");
            t.setDaemon(true);
            return t;
        }) : null;
    }

    /** {@return whether this engine prepares growths ahead} */
    boolean active() {
        return thread != null;
    }

    /** After a batch: starts a preparation when the heap runs low and none is under way. Engine thread only. */
    void afterBatch(long freeBlocks, long totalBlocks) {
        if (thread == null || freeBlocks * 8 >= totalBlocks || (running != null && !running.isDone())) {
            return;
        }
        running = thread.submit(() -> {
            try {
                cuda.bind();
                long start = System.nanoTime();
                if (pool.prepareHeapGrowth()) {
                    prepared++;
                    if (PoolLog.LOG.isLoggable(System.Logger.Level.DEBUG)) {
                        PoolLog.LOG.log(System.Logger.Level.DEBUG, "gphash: prepared the next heap growth of {0} "
                                + "ahead in {1} ms", pool.file().path(), (System.nanoTime() - start) / 1e6);
                    }
                }
            } catch (RuntimeException e) {
                // The growth on the batch path does the work, and reports what went wrong.
                PoolLog.LOG.log(System.Logger.Level.DEBUG, "gphash: preparing a heap growth ahead failed: {0}", e.toString());
            }
        });
    }

    /** Waits for a preparation under way (before the pool closes). */
    void await() {
        Future<?> f = running;
        if (f == null) {
            return;
        }
        try {
            f.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException e) {
            // logged by the task
        }
    }

    /** {@return preparations that extended the file} */
    long prepared() {
        return prepared;
    }

    @Override
    public void close() {
        if (thread != null) {
            await();
            thread.shutdown();
            try {
                thread.awaitTermination(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
