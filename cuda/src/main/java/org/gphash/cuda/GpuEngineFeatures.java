package org.gphash.cuda;

import jcuda.CudaException;
import jcuda.driver.CUdeviceptr;
import org.gphash.GpuFeatures;
import org.gphash.bktcache.BktCacheConfig;
import org.gphash.bktcache.BktCacheStats;
import org.gphash.cuda.cache.BucketCache;
import org.gphash.cuda.runtime.CudaRuntime;
import org.gphash.cuda.runtime.GpuFailure;
import org.gphash.format.PoolHeader;

/**
 * What only a {@link GpuEngine} offers, as the API's {@link GpuFeatures} view
 * ({@code GPHashIndex.gpu()}, {@link GpuEngine#gpuFeatures()}): device-resident batches, and BktCache's
 * figures, loads and configuration. Each call takes the engine's lock and waits for what runs
 * outside it first, as the engine's own entry points do.
 */
public final class GpuEngineFeatures implements GpuFeatures {

    private final GpuEngine engine;

    GpuEngineFeatures(GpuEngine engine) {
        this.engine = engine;
    }

    /** {@return the engine's diagnostics ({@link GpuEngine#diagnostics()}), for benchmarks that hold only this view} */
    public GpuDiagnostics diagnostics() {
        return engine.diagnostics();
    }

    @Override
    public boolean usesIndexMirror() {
        return engine.usesIndexMirror();
    }

    /** {@return the GPU's name, as the driver reports it} */
    @Override
    public String deviceName() {
        return engine.cuda.deviceName;
    }

    @Override
    public void executeOnDevice(long n, long kinds, long keys, long values, long codes, long out) {
        executeOnDevice(n, kinds, keys, values, 0, codes, out, 0);
    }

    /**
     * {@inheritDoc} Values of any length run on a format 3 pool, on the pipeline over the index mirror,
     * with BktCache on or off (its copies of shorter values are padded with zeros, and a read takes a
     * value from a copy only where it has the value size: its length is the pool's); elsewhere they are
     * refused before anything runs, as is a batch with a value longer than the value size.
     */
    @Override
    public void executeOnDevice(long n, long kinds, long keys, long values, long lengths, long codes, long out,
                                long outLengths) {
        synchronized (engine) {
            engine.ensureOpen();
            engine.cuda.bind();
            if (n <= 0) {
                return;
            }
            if (kinds == 0 || keys == 0 || codes == 0) {
                throw new IllegalArgumentException("a device batch needs its kinds, keys and codes columns (addresses 0 given: kinds "
                        + kinds + ", keys " + keys + ", codes " + codes + ")");
            }
            if (lengths != 0 || outLengths != 0) {
                refuseValueLengthsWhereUnsupported();
            }
            engine.pool.admitOpsInFlight(n);
            try {
                engine.path.executeOnDevice(n, kinds, keys, values, lengths, codes, out, outLengths);
            } catch (CudaException e) {
                throw GpuFailure.of(engine.pool.file().path(), "a device batch of " + n + " operations", e);
            } finally {
                engine.hostReaders.open();
            }
        }
    }

    private void refuseValueLengthsWhereUnsupported() {
        if (engine.pool.formatVersion() < PoolHeader.FORMAT_3) {
            throw new IllegalStateException("values of any length need a format 3 pool; " + engine.pool.file().path()
                    + " is format " + engine.pool.formatVersion());
        }
        if (!engine.usesIndexMirror()) {
            throw new IllegalStateException("values of any length run on the pipeline over the index mirror, which this"
                    + " engine does not use (IndexStats.indexPlacement says why)");
        }
    }

    /**
     * As {@link #executeOnDevice(long, long, long, long, long, long)}, with JCuda device pointers
     * (null for an unused column): for this module's tests and benchmarks.
     */
    public void executeOnDevice(long n, CUdeviceptr kinds, CUdeviceptr keys, CUdeviceptr values, CUdeviceptr codes,
                                CUdeviceptr out) {
        synchronized (engine) {
            engine.cuda.bind();  // reading a pointer's attribute needs the context current, also on a thread new to the engine
            executeOnDevice(n, CudaRuntime.address(kinds), CudaRuntime.address(keys), CudaRuntime.address(values),
                    CudaRuntime.address(codes), CudaRuntime.address(out));
        }
    }

    /** Runs a {@link DeviceBatch} (see {@link #executeOnDevice(long, long, long, long, long, long)}). */
    public void executeOnDevice(DeviceBatch batch) {
        synchronized (engine) {
            engine.cuda.bind();
            executeOnDevice(batch.size(), CudaRuntime.address(batch.kinds()), CudaRuntime.address(batch.keys()),
                    CudaRuntime.address(batch.values()), CudaRuntime.address(batch.lengths()),
                    CudaRuntime.address(batch.codes()), CudaRuntime.address(batch.out()),
                    CudaRuntime.address(batch.outLengths()));
        }
    }

    /**
     * GPU time of the last batch, from the first of its kernels to the last (CUDA events; 0 on the
     * pool path): what the GPHash artifact reports as kernel time.
     */
    @Override
    public long lastBatchGpuNanos() {
        synchronized (engine) {
            return engine.path.lastBatchGpuNanos();
        }
    }

    /** {@return BktCache's figures: hit rate since open, loads and their times} */
    @Override
    public BktCacheStats bucketCacheStats() {
        synchronized (engine) {
            engine.ensureOpen();
            engine.cuda.bind();
            return engine.cache.get().stats();
        }
    }

    /**
     * Loads BktCache now, on its own stream, instead of waiting for the configured period. With
     * {@code wait} false this returns at once and batches run while the load fetches; a load already
     * running is waited for first. Returns false when the cache is off.
     */
    @Override
    public boolean reloadBucketCache(boolean wait) {
        synchronized (engine) {
            engine.ensureOpen();
            engine.cuda.bind();
            if (!engine.cache.get().enabled()) {
                return false;
            }
            GpuFailure.during(engine.pool.file().path(), "a BktCache load",
                    () -> engine.cache.get().load(engine.kernels.tableParams(engine.pool.layout()), wait));
            return true;
        }
    }

    /**
     * Replaces BktCache with one of another configuration (the old one's contents and counters are
     * dropped; the new one starts empty). For sensitivity studies on one loaded pool.
     */
    @Override
    public void configureBucketCache(BktCacheConfig config) {
        synchronized (engine) {
            engine.ensureOpen();
            engine.cuda.bind();
            BucketCache fresh = GpuFailure.during(engine.pool.file().path(), "allocating BktCache",
                    () -> new BucketCache(engine.cuda, engine.geometry, config, System::nanoTime));
            try {
                engine.cache.get().close();
                fresh.attach(engine.pool.layout());
            } catch (RuntimeException e) {
                fresh.close();
                throw e;
            }
            engine.cache.set(fresh);
        }
    }

    /** {@return whether a BktCache load is running (for tests and the reload benchmark)} */
    public boolean bucketCacheLoading() {
        synchronized (engine) {
            return engine.cache.get().loading();
        }
    }

    /** The cache, for tests in this package. */
    public BucketCache bucketCache() {
        return engine.cache.get();
    }
}
