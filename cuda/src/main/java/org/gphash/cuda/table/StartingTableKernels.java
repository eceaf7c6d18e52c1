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
 *
 * <p>An open that serves calls on the host while the GPU starts ({@code HostFirstEngine}) waits before
 * its writes only for the checks that need no context ({@link #start(int, boolean)}: mostly the
 * driver's start, which took longer than the pool's open beside it: docs/lab/2026-11-30-host-first-open.md),
 * so an open of a GPU the engine cannot use still writes nothing; a pool the host writes
 * meanwhile is a CPU engine's pool. Only a recovery pass, which runs as kernels, waits for the runtime.
 */
public final class StartingTableKernels implements TableKernels {

    /** The GPU checked without its context ({@link CudaRuntime#checkUsable}): its memory in bytes. */
    private final CompletableFuture<Long> checked;
    private final CompletableFuture<CudaRuntime> runtime;
    /** Whether the pool's first write waits for the runtime ({@link #beforeWrites}), or only for the check. */
    private final boolean waitBeforeWrites;
    private PoolFile file;
    private Geometry geometry;
    private long[] seeds;
    private int formatVersion;
    /** The kernels once the runtime has started; set by the opening thread before the engine exists. */
    private volatile GpuTableKernels kernels;
    /** How long the open waited for the runtime, past its own work on the host. */
    private long waitedNanos;
    /** How long the open waited for the check, past its own work on the host. */
    private long checkWaitedNanos;
    /** How long the check took on its own thread. */
    private volatile long checkNanos;

    private StartingTableKernels(CompletableFuture<Long> checked, CompletableFuture<CudaRuntime> runtime,
                                 boolean waitBeforeWrites) {
        this.checked = checked;
        this.runtime = runtime;
        this.waitBeforeWrites = waitBeforeWrites;
    }

    /** Starts the runtime of GPU {@code device} on a new daemon thread; the pool's first write waits for it. */
    public static StartingTableKernels start(int device) {
        return start(device, true);
    }

    /**
     * Starts the runtime of GPU {@code device} on a new daemon thread: first the checks that need no
     * context ({@link CudaRuntime#checkUsable}: the driver's start, most of the time before a context
     * exists), then the context and the kernels.
     *
     * @param waitBeforeWrites whether the pool's first write waits for the runtime; false: only for the
     *                         checks, which refuse a GPU the engine cannot use before anything is written
     */
    public static StartingTableKernels start(int device, boolean waitBeforeWrites) {
        CompletableFuture<Long> c = new CompletableFuture<>();
        CompletableFuture<CudaRuntime> f = new CompletableFuture<>();
        StartingTableKernels k = new StartingTableKernels(c, f, waitBeforeWrites);
        Thread.ofPlatform().daemon().name("gphash-cuda-start").start(() -> {
            try {
                long t0 = System.nanoTime();
                long bytes = CudaRuntime.checkUsable(device);
                k.checkNanos = System.nanoTime() - t0;
                c.complete(bytes);
                f.complete(CudaRuntime.get(device));
            } catch (Throwable t) {
                c.completeExceptionally(t);  // no-op once the check completed
                f.completeExceptionally(t);
            }
        });
        return k;
    }

    /**
     * The GPU's memory in bytes, once the checks that need no context passed: waits for them, and
     * throws what refused the GPU (a {@link org.gphash.BackendUnavailableException}).
     */
    public long checkedGpuBytes() {
        long t0 = System.nanoTime();
        try {
            return join(checked);
        } finally {
            checkWaitedNanos += System.nanoTime() - t0;
        }
    }

    /** {@return how long the checks took on their own thread, once done} */
    public long checkNanos() {
        return checkNanos;
    }

    /** {@return how long the open waited for the checks, past its own work on the host} */
    public long checkWaitedNanos() {
        return checkWaitedNanos;
    }

    /** The future's value, or what failed it as thrown (a runtime exception or an error as itself). */
    private static <T> T join(CompletableFuture<T> f) {
        try {
            return f.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            if (e.getCause() instanceof Error err) {
                throw err;
            }
            throw e;
        }
    }

    /**
     * The kernels, attached to the pool if it was attached: waits for the runtime to start, and throws
     * what stopped it (a {@link org.gphash.BackendUnavailableException} where the GPU cannot run the engine).
     */
    public synchronized GpuTableKernels started() {
        GpuTableKernels k = kernels;
        if (k != null) {
            return k;
        }
        CudaRuntime cuda;
        long t0 = System.nanoTime();
        try {
            cuda = join(runtime);
        } finally {
            waitedNanos += System.nanoTime() - t0;
        }
        cuda.bind();
        k = new GpuTableKernels(cuda);
        if (file != null) {
            try {
                k.attach(file, geometry, seeds, formatVersion);
            } catch (RuntimeException | Error e) {
                k.close();
                throw e;
            }
        }
        kernels = k;
        return k;
    }

    /**
     * Releases the kernels' GPU memory where they were made (an open that ran a recovery pass, then
     * failed): the pool's open closes its file, which undoes the registration, but not these.
     */
    public void releaseIfStarted() {
        GpuTableKernels k = kernels;
        if (k != null) {
            k.close();
        }
    }

    /** {@return whether the kernels are there already (a recovery pass or a write waited for them)} */
    public boolean isStarted() {
        return kernels != null;
    }

    /** {@return how long the open waited for the runtime to start, past its own work on the host} */
    public long waitedNanos() {
        return waitedNanos;
    }

    @Override
    public synchronized void attach(PoolFile file, Geometry geometry, long[] seeds, int formatVersion) {
        GpuTableKernels k = kernels;
        if (k != null) {
            k.attach(file, geometry, seeds, formatVersion);
            return;
        }
        this.file = file;
        this.geometry = geometry;
        this.seeds = seeds.clone();
        this.formatVersion = formatVersion;
    }

    @Override
    public boolean supportsFormat(int version) {
        return GpuTableKernels.runsFormat(version);
    }

    /**
     * The kernels with their GPU's context current on the calling thread: a pass may run on any thread
     * (a resize of the CPU engine's code serving calls before the GPU engine, on a caller's thread).
     */
    private GpuTableKernels bound() {
        GpuTableKernels k = started();
        k.runtime().bind();
        return k;
    }

    @Override
    public void beforeWrites() {
        if (waitBeforeWrites) {
            started();
        } else {
            checkedGpuBytes();
        }
    }

    @Override
    public RecoveryCounts countBrokenAndDuplicates(TableLayout layout) {
        return bound().countBrokenAndDuplicates(layout);
    }

    @Override
    public RecoveryCounts clearBrokenAndDuplicates(TableLayout layout) {
        return bound().clearBrokenAndDuplicates(layout);
    }

    @Override
    public MarkedBlocks markValueBlocks(TableLayout layout, HeapLayout heap, boolean validItemsOnly) {
        return bound().markValueBlocks(layout, heap, validItemsOnly);
    }

    @Override
    public MarkedSegments markValueSegments(TableLayout layout, long[] segmentOffsets, boolean validItemsOnly) {
        return bound().markValueSegments(layout, segmentOffsets, validItemsOnly);
    }

    @Override
    public RehashResult rehashBottom(TableLayout layout) {
        return bound().rehashBottom(layout);
    }
}
