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
        if (config.itemChecksums()) {
            throw new IllegalArgumentException("item checksums are kept and checked by the CPU engine only; the GPU "
                    + "engine does not compute them yet (create the pool without itemChecksums, or use the CPU backend)");
        }
        return over(config, "create", PoolTable::create);
    }

    /** Opens a pool (any engine may have written it), recovering it with kernels. */
    public static GpuEngine open(GPHashConfig config) {
        return over(config, "open", PoolTable::open);
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
            PoolTable pool = step.run(config, starting);
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
            return over(cuda, kernels, pool, config, started, waited, System.nanoTime() - started - waited);
        });
    }

    /** BktCache and the batch path over an open pool, then the engine; on failure all of it is released. */
    private static GpuEngine over(CudaRuntime cuda, GpuTableKernels kernels, PoolTable pool, GPHashConfig config,
                                  long started, long runtimeNanos, long poolNanos) {
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
            OpenTimes openTimes = new OpenTimes(runtimeNanos, poolNanos, kernels.registration().registerNanos(),
                    pool.recovery().duration().toNanos(), t1 - t0, t2 - t1,
                    path instanceof MirrorPath m ? m.mirrorLoadNanos() : 0, t2 - started);
            Router router = path instanceof MirrorPath m ? m.router() : new Router(config.gpuTuning(), false);
            return new GpuEngine(cuda, kernels, pool, cache, path, router, times, openTimes);
        } catch (RuntimeException e) {
            if (cache.get() != null) {
                cache.get().close();
            }
            kernels.close();
            pool.close();
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
            return new MirrorPath(parts, new PipelineKernels(parts.cuda()), new Router(tuning, true), times);
        } catch (CudaException e) {
            if (mode == IndexMirror.REQUIRED) {
                throw new IllegalStateException("IndexMirror.REQUIRED, but allocating the mirror failed: " + e.getMessage(), e);
            }
            return new PoolPath(parts, "index mirror off: allocating it failed: " + e.getMessage());
        }
    }
}
