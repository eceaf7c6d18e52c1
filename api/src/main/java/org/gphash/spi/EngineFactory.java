package org.gphash.spi;

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
