package org.gphash.cuda.path;

import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;

import jcuda.Pointer;
import jcuda.driver.CUfunction;
import org.gphash.cuda.runtime.CudaRuntime;
import org.gphash.cuda.runtime.DeviceBuffer;
import org.gphash.cuda.runtime.KernelParams;
import org.gphash.cuda.runtime.Launcher;

/**
 * Copies pool buckets that host threads wrote between batches again into what the GPU keeps of them
 * (pipeline/refresh_buckets.cuh): the HBM index mirror's slots and tags, where the path has one, and
 * BktCache's entry, where the cache holds the bucket. One copy of the bucket list and one launch;
 * returns with the copies done. Under the engine's lock, with nothing in flight. Not thread-safe.
 */
public final class BucketRefresh implements AutoCloseable {

    private final CudaRuntime cuda;
    private final CUfunction refresh;
    private final DeviceBuffer list = new DeviceBuffer();

    public BucketRefresh(CudaRuntime cuda) {
        this.cuda = cuda;
        this.refresh = cuda.function("gphash_refresh_buckets");
    }

    /**
     * Refreshes global buckets {@code buckets[0..n)} (entries of -1 are skipped).
     *
     * @param poolParams   the pool's TableParams
     * @param mirrorParams the mirror's TableParams, or null where the path has no mirror
     * @param cacheParams  BktCache's CacheParams (a cache of capacity 0 has nothing to refresh)
     */
    public void run(long[] buckets, int n, byte[] poolParams, byte[] mirrorParams, byte[] cacheParams) {
        if (n == 0) {
            return;
        }
        list.ensure(n * 8L);
        cuMemcpyHtoD(list.pointer(), Pointer.to(buckets), n * 8L);
        Launcher.launch(refresh, n * 32L, null, poolParams, mirrorParams == null ? poolParams : mirrorParams, cacheParams,
                KernelParams.longs(list.address()), KernelParams.longs(n), KernelParams.longs(mirrorParams == null ? 0 : 1));
        cuda.synchronizeContext();  // the engine's streams do not wait for the default one
    }

    @Override
    public void close() {
        list.close();
    }
}
