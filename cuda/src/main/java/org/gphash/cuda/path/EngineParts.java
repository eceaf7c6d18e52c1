package org.gphash.cuda.path;

import java.util.function.Supplier;

import org.gphash.Geometry;
import org.gphash.cuda.cache.BucketCache;
import org.gphash.cuda.runtime.CudaRuntime;
import org.gphash.cuda.table.GpuTableKernels;
import org.gphash.table.PoolTable;

/**
 * What both batch paths share with the engine: the CUDA runtime, the pool and its table kernels, and
 * the engine's BktCache (replaceable, so read through the engine each time).
 */
public record EngineParts(CudaRuntime cuda, GpuTableKernels kernels, PoolTable pool, Geometry geometry,
                          Supplier<BucketCache> currentCache) {

    /** {@return the engine's BktCache now (it may be replaced between batches)} */
    public BucketCache cache() {
        return currentCache.get();
    }

    public byte[] tableParams() {
        return kernels.tableParams(pool.layout());
    }

    /** Grows the table with nothing in flight: the cache's loads read the pool, and its bucket numbers change. */
    public void resize() {
        BucketCache c = cache();
        c.awaitLoad();
        pool.resize(pool.layout());
        c.attach(pool.layout());
    }
}
