package org.gphash.cuda.table;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import org.gphash.Geometry;
import org.gphash.cuda.runtime.CudaRuntime;
import org.gphash.persistence.PoolFile;
import org.gphash.table.TableKernels;
import org.gphash.table.TableLayout;

/**
 * The GPU's table kernels while the CUDA runtime starts on a thread of its own: the pool's open reads
 * and checks the pool on the host meanwhile (the mapping, the close record, every region's checksum),
 * and waits for the runtime only at its first kernel or before its first write ({@link #beforeWrites}),
 * so that an open the GPU refuses has still written nothing. Then {@link #started} gives the kernels
 * to the engine.
 *
 * <p>Why: the runtime's start (the context and the kernels' module) and the pool's open on the host
 * ran one after the other, and YCSB's client counts the open in every run, where the GPU backend's
 * open was two to three times the CPU backend's (docs/PERFORMANCE.md, "YCSB's own client"; issue 57).
 */
public final class StartingTableKernels implements TableKernels {

    private final CompletableFuture<CudaRuntime> runtime;
    private PoolFile file;
    private Geometry geometry;
    private long[] seeds;
    /** The kernels once the runtime has started; set by the opening thread before the engine exists. */
    private volatile GpuTableKernels kernels;
    /** How long the open waited for the runtime, past its own work on the host. */
    private long waitedNanos;

    private StartingTableKernels(CompletableFuture<CudaRuntime> runtime) {
        this.runtime = runtime;
    }

    /** Starts the runtime of GPU {@code device} on a new daemon thread. */
    public static StartingTableKernels start(int device) {
        CompletableFuture<CudaRuntime> f = new CompletableFuture<>();
        Thread.ofPlatform().daemon().name("gphash-cuda-start").start(() -> {
            try {
                f.complete(CudaRuntime.get(device));
            } catch (Throwable t) {
                f.completeExceptionally(t);
            }
        });
        return new StartingTableKernels(f);
    }

    /**
     * The kernels, attached to the pool if it was attached: waits for the runtime to start, and throws
     * what stopped it (a {@link org.gphash.BackendUnavailableException} where the GPU cannot run the engine).
     */
    public GpuTableKernels started() {
        GpuTableKernels k = kernels;
        if (k != null) {
            return k;
        }
        CudaRuntime cuda;
        long t0 = System.nanoTime();
        try {
            cuda = runtime.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            if (e.getCause() instanceof Error err) {
                throw err;
            }
            throw e;
        } finally {
            waitedNanos += System.nanoTime() - t0;
        }
        cuda.bind();
        k = new GpuTableKernels(cuda);
        if (file != null) {
            try {
                k.attach(file, geometry, seeds);
            } catch (RuntimeException | Error e) {
                k.close();
                throw e;
            }
        }
        kernels = k;
        return k;
    }

    /** {@return how long the open waited for the runtime to start, past its own work on the host} */
    public long waitedNanos() {
        return waitedNanos;
    }

    @Override
    public void attach(PoolFile file, Geometry geometry, long[] seeds) {
        GpuTableKernels k = kernels;
        if (k != null) {
            k.attach(file, geometry, seeds);
            return;
        }
        this.file = file;
        this.geometry = geometry;
        this.seeds = seeds.clone();
    }

    @Override
    public void beforeWrites() {
        started();
    }

    @Override
    public RecoveryCounts countBrokenAndDuplicates(TableLayout layout) {
        return started().countBrokenAndDuplicates(layout);
    }

    @Override
    public RecoveryCounts clearBrokenAndDuplicates(TableLayout layout) {
        return started().clearBrokenAndDuplicates(layout);
    }

    @Override
    public MarkedBlocks markValueBlocks(TableLayout layout, HeapLayout heap, boolean validItemsOnly) {
        return started().markValueBlocks(layout, heap, validItemsOnly);
    }

    @Override
    public RehashResult rehashBottom(TableLayout layout) {
        return started().rehashBottom(layout);
    }
}
