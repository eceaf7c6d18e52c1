package org.gphash.spi;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executor;

import org.gphash.Backend;
import org.gphash.GPHashConfig;

/**
 * Creates engines of one backend. Every backend registers one for {@link java.util.ServiceLoader}: the
 * CPU engine in gphash-index ({@code org.gphash.index.CpuEngineFactory}), the GPU engine in
 * gphash-cuda. The API itself (gphash-api) holds none.
 */
public interface EngineFactory {

    /** {@return the backend whose engines this factory makes} */
    Backend backend();

    /**
     * The devices this backend can place pools on (the GPUs the driver sees for the GPU engine), for
     * sharded indexes that name none ({@link org.gphash.Placement}).
     *
     * @return at least 1 for a backend that can run here; the CPU engine's 1
     */
    default int visibleDevices() {
        return 1;
    }

    /**
     * What only this backend offers, over a sharded index of its engines: for the GPU engine,
     * device-resident batches split by shard on the GPU that holds them
     * ({@link org.gphash.GpuFeatures#executeOnDevice}). The view is closed (when it is
     * {@link AutoCloseable}) before the shards are.
     *
     * @param dir       the sharded index's directory (for errors that name the index)
     * @param shards    the shards' engines, in shard order, all made by this factory
     * @param shardSeed the seed of the shard function ({@code org.gphash.shard.ShardFunction})
     * @param workers   threads the view may run shards' parts on
     * @return the view, or empty where the backend offers none (the CPU engine)
     */
    default Optional<org.gphash.GpuFeatures> gpuFeaturesAcross(Path dir, List<Engine> shards,
                                                                          long shardSeed, Executor workers) {
        return Optional.empty();
    }

    /**
     * Told first thing by an open or a create of an index of this backend, before the work that needs
     * no engine (the front end's and the path's checks): a backend whose own start is slow begins it
     * here, beside that work. It must write nothing and refuse nothing (the open or create that follows
     * reports what fails); the CPU engine has nothing to begin.
     *
     * @param config the index's configuration
     */
    default void prepare(GPHashConfig config) {
    }

    /**
     * Creates a new pool; fails if the file exists.
     *
     * @param config the index's configuration
     * @return the engine over the new pool
     */
    Engine create(GPHashConfig config);

    /**
     * Opens an existing pool, running recovery.
     *
     * @param config the index's configuration
     * @return the engine over the pool
     */
    Engine open(GPHashConfig config);
}
