package org.gphash.cuda;

import static jcuda.driver.JCudaDriver.cuMemGetInfo;

import java.util.concurrent.atomic.AtomicReference;

import jcuda.CudaException;
import org.gphash.GPHashConfig;
import org.gphash.GpuTuning;
import org.gphash.IndexMirror;
import org.gphash.cuda.cache.BucketCache;
import org.gphash.cuda.path.BatchPath;
import org.gphash.cuda.path.EngineParts;
import org.gphash.cuda.pipeline.MirrorPath;
import org.gphash.cuda.pipeline.PipelineKernels;
import org.gphash.cuda.poolpath.PoolPath;
import org.gphash.cuda.routing.MirrorChoice;
import org.gphash.cuda.routing.Router;
import org.gphash.cuda.runtime.CudaRuntime;
import org.gphash.cuda.runtime.GpuFailure;
import org.gphash.cuda.runtime.PoolRegistration;
import org.gphash.cuda.staging.HostStageTimes;
import org.gphash.cuda.table.GpuTableKernels;
import org.gphash.cuda.table.StartingTableKernels;
import org.gphash.format.PoolHeader;
import org.gphash.index.CpuEngine;
import org.gphash.spi.Engine;
import org.gphash.table.PoolTable;
import org.gphash.table.TableKernels;

/**
 * Opens and creates {@link GpuEngine}s: the CUDA runtime of the configured GPU, the pool and its
 * table kernels (recovery runs as kernels), BktCache, and the batch path: the index mirror when asked
 * and the GPU has the memory for it, else the pool path, saying why. What fails part way is released
 * before the failure is thrown; each stage's time is kept ({@link OpenTimes}).
 */
public final class GpuEngines {

    /** Free GPU memory left over when choosing the mirror, for the cache, other users and fragmentation. */
    private static final long MIRROR_MARGIN = 512L << 20;

    private GpuEngines() {
    }

    /** {@return whether this machine has what the GPU engine needs (a CUDA driver, a Hopper-or-newer GPU, the kernels)} */
    public static boolean available() {
        return CudaRuntime.available();
    }

    /** Creates a pool on a registrable file system (tmpfs, hugetlbfs) and runs it on the GPU. */
    public static GpuEngine create(GPHashConfig config) {
        refuseItemChecksums(config);
        return over(config, "create", PoolTable::create);
    }

    /** Opens a pool (any engine may have written it), recovering it with kernels. */
    public static GpuEngine open(GPHashConfig config) {
        return over(config, "open", PoolTable::open);
    }

    /**
     * Creates a pool for an index ({@code GpuEngineFactory}): the engine serves calls on the host while
     * the GPU starts ({@link HostFirstEngine}), as {@link #openServing} does.
     */
    public static Engine createServing(GPHashConfig config) {
        return createServing(config, () -> { });
    }

    /** {@link #createServing}, the hand-over running {@code beforeHandOver} first (tests hold it back with it). */
    static Engine createServing(GPHashConfig config, Runnable beforeHandOver) {
        refuseItemChecksums(config);
        return serving(config, "create", PoolTable::create, beforeHandOver);
    }

    /**
     * Opens a pool for an index ({@code GpuEngineFactory}): where the open needs no kernels (the pool's
     * close record read, no recovery pass), the engine returned serves calls on the host with the CPU
     * engine's code while the GPU starts, and hands the pool to the {@link GpuEngine} once it is built
     * ({@link HostFirstEngine}); a pool that needs recovery waits for the GPU, whose kernels run it, and
     * gets the GPU engine at once, as {@link #open} does. Every reason to refuse the GPU that can be known
     * without its context is checked before the pool's first write ({@link CudaRuntime#checkUsable}).
     */
    public static Engine openServing(GPHashConfig config) {
        return serving(config, "open", PoolTable::open, () -> { });
    }

    /**
     * The GPU engine under {@code engine}, waiting for a {@link HostFirstEngine}'s hand-over: for what
     * only the GPU engine answers (its diagnostics, its device-resident batches).
     *
     * @throws IllegalArgumentException where {@code engine} is no GPU engine
     */
    public static GpuEngine gpuEngine(Engine engine) {
        Engine e = engine instanceof HostFirstEngine h ? h.awaitGpu() : engine;
        if (e instanceof GpuEngine g) {
            return g;
        }
        throw new IllegalArgumentException(engine + " is not a GPU engine");
    }

    private static void refuseItemChecksums(GPHashConfig config) {
        if (config.itemChecksums()) {
            throw new IllegalArgumentException("item checksums are kept and checked by the CPU engine only; the GPU "
                    + "engine does not compute them yet (create the pool without itemChecksums, or use the CPU backend)");
        }
    }

    /** How the pool itself is made or opened, with the GPU's table kernels for its whole-table passes. */
    private interface PoolStep {
        PoolTable run(GPHashConfig config, TableKernels kernels);
    }

    /** The runtime of the configured GPU and its table kernels, then the pool ({@code step}), then the engine over it. */
    private static GpuEngine over(GPHashConfig config, String what, PoolStep step) {
        PoolRegistration.checkLocation(config.path());
        return GpuFailure.during(config.path(), what, () -> {
            // The runtime starts on a thread of its own while the pool opens on the host; the open
            // waits for it before its first write (StartingTableKernels).
            long started = System.nanoTime();
            StartingTableKernels starting = StartingTableKernels.start(config.placement().device());
            return finish(starting, openPool(config, step, starting), config, started, 0);
        });
    }

    /** The pool made or opened by {@code step}; where that fails, the kernels a recovery pass made are released too. */
    private static PoolTable openPool(GPHashConfig config, PoolStep step, StartingTableKernels starting) {
        try {
            return step.run(config, starting);
        } catch (RuntimeException | Error e) {
            try {
                starting.releaseIfStarted();
            } catch (RuntimeException released) {
                e.addSuppressed(released);
            }
            throw e;
        }
    }

    /** The engine over a pool opened with {@code starting}'s kernels, once the runtime is up; on failure the pool is closed. */
    private static GpuEngine finish(StartingTableKernels starting, PoolTable pool, GPHashConfig config, long started,
                                    long driverNanos) {
        GpuTableKernels kernels;
        try {
            kernels = starting.started();
        } catch (RuntimeException | Error e) {
            pool.close();
            throw e;
        }
        CudaRuntime cuda = kernels.runtime();
        cuda.bind();
        long waited = starting.waitedNanos();
        try {
            long[] driver = CudaRuntime.driverStartNanos();
            return engineOver(cuda, kernels, pool, config, started, new OpenTimes.Stages(driverNanos, waited,
                    System.nanoTime() - started - waited - driverNanos, 0, starting.checkNanos(), driver[0], driver[1]));
        } catch (RuntimeException e) {
            kernels.close();
            pool.close();
            throw e;
        }
    }

    /**
     * The open of {@link #openServing}: the GPU checked, the pool opened with kernels that start beside
     * it and that its writes do not wait for, then the engine that serves calls on the host meanwhile.
     */
    private static Engine serving(GPHashConfig config, String what, PoolStep step, Runnable beforeHandOver) {
        PoolRegistration.checkLocation(config.path());
        return GpuFailure.during(config.path(), what, () -> {
            long started = System.nanoTime();
            // The GPU is checked (the driver started) on a thread of its own while the pool opens on the
            // host; the pool's first write waits for the check, so a GPU the engine cannot use is refused
            // before anything is written (StartingTableKernels).
            StartingTableKernels starting = StartingTableKernels.start(config.placement().device(), false);
            PoolTable pool = openPool(config, step, starting);
            if (starting.isStarted()) {
                return finish(starting, pool, config, started, starting.checkWaitedNanos());  // recovery ran kernels
            }
            try {
                boolean mirror = expectsMirror(config.indexMirror(), pool, starting.checkedGpuBytes());
                boolean singlesOnHost = new Router(config.gpuTuning(), mirror).writesOnHost();
                long checkWait = starting.checkWaitedNanos();
                HandOver handOver = new HandOver(starting, pool, config, started, checkWait,
                        System.nanoTime() - started - checkWait, beforeHandOver);
                return HostFirstEngine.start(pool, CpuEngine.over(pool, config.durability()), handOver, mirror, singlesOnHost);
            } catch (RuntimeException | Error e) {
                pool.close();
                throw e;
            }
        });
    }

    /**
     * Whether the engine will run on the index mirror, judged before the GPU's context exists by the
     * GPU's whole memory: what a front end is told at open ({@link HostFirstEngine} keeps the promise
     * if the mirror does not fit what is free then). REQUIRED that cannot fit is refused here.
     */
    private static boolean expectsMirror(IndexMirror configured, PoolTable pool, long gpuBytes) {
        return MirrorChoice.decide(MirrorChoice.effective(configured), MirrorPath.bytesNeeded(pool), gpuBytes,
                MIRROR_MARGIN).mirror();
    }

    /** The GPU's side of a {@link HostFirstEngine}'s hand-over: the kernels, then the engine over the pool. */
    private static final class HandOver implements HostFirstEngine.GpuStart {
        private final StartingTableKernels starting;
        private final PoolTable pool;
        private final GPHashConfig config;
        private final long started;
        private final long driverNanos;
        private final long poolNanos;
        private final long returnedAt = System.nanoTime();
        private final Runnable first;
        private GpuTableKernels kernels;

        HandOver(StartingTableKernels starting, PoolTable pool, GPHashConfig config, long started, long driverNanos,
                 long poolNanos, Runnable first) {
            this.first = first;
            this.starting = starting;
            this.pool = pool;
            this.config = config;
            this.started = started;
            this.driverNanos = driverNanos;
            this.poolNanos = poolNanos;
        }

        @Override
        public void prepare() {
            first.run();
            kernels = starting.started();  // the runtime, then the pool's pages registered: nothing read that writes change
        }

        @Override
        public Engine build() {
            CudaRuntime cuda = kernels.runtime();
            cuda.bind();
            long building = System.nanoTime();
            long[] driver = CudaRuntime.driverStartNanos();
            return engineOver(cuda, kernels, pool, config, started, new OpenTimes.Stages(driverNanos,
                    starting.waitedNanos(), poolNanos, building - returnedAt, starting.checkNanos(), driver[0], driver[1]));
        }

        @Override
        public void release() {
            if (kernels != null) {
                kernels.close();
            }
        }
    }

    /** BktCache and the batch path over an open pool, then the engine; on failure what this built is released (not the kernels, not the pool). */
    private static GpuEngine engineOver(CudaRuntime cuda, GpuTableKernels kernels, PoolTable pool, GPHashConfig config,
                                        long started, OpenTimes.Stages stages) {
        AtomicReference<BucketCache> cache = new AtomicReference<>();
        HostStageTimes times = new HostStageTimes();
        try {
            long t0 = System.nanoTime();
            BucketCache c = new BucketCache(cuda, pool.geometry(), config.bucketCache(), System::nanoTime);
            cache.set(c);
            c.attach(pool.layout());
            long t1 = System.nanoTime();
            EngineParts parts = new EngineParts(cuda, kernels, pool, pool.geometry(), cache::get);
            BatchPath path = choosePath(parts, config.indexMirror(), config.gpuTuning(), times);
            long t2 = System.nanoTime();
            long total = stages.servedOnHost() > 0 ? stages.driver() + stages.pool() : t2 - started;
            OpenTimes openTimes = new OpenTimes(stages, kernels.registration().registerNanos(),
                    pool.recovery().duration().toNanos(), t1 - t0, t2 - t1,
                    path instanceof MirrorPath m ? m.mirrorLoadNanos() : 0, total);
            Router router = path instanceof MirrorPath m ? m.router() : new Router(config.gpuTuning(), false);
            return new GpuEngine(cuda, kernels, pool, cache, path, router, times, openTimes);
        } catch (RuntimeException e) {
            if (cache.get() != null) {
                cache.get().close();
            }
            throw e;
        }
    }

    /** The mirror when asked and the GPU has the memory for it, else the pool path, saying why. */
    private static BatchPath choosePath(EngineParts parts, IndexMirror configured, GpuTuning tuning, HostStageTimes times) {
        IndexMirror mode = MirrorChoice.effective(configured);
        long[] free = new long[1];
        long[] total = new long[1];
        cuMemGetInfo(free, total);
        MirrorChoice choice = MirrorChoice.decide(mode, MirrorPath.bytesNeeded(parts.pool()), free[0], MIRROR_MARGIN);
        if (!choice.mirror()) {
            return new PoolPath(parts, choice.reason());
        }
        try {
            boolean valueLengths = parts.pool().formatVersion() >= PoolHeader.FORMAT_3;
            return new MirrorPath(parts, new PipelineKernels(parts.cuda()), new Router(tuning, true, valueLengths), times);
        } catch (CudaException e) {
            if (mode == IndexMirror.REQUIRED) {
                throw new IllegalStateException("IndexMirror.REQUIRED, but allocating the mirror failed: " + e.getMessage(), e);
            }
            return new PoolPath(parts, "index mirror off: allocating it failed: " + e.getMessage());
        }
    }
}
