package org.gphash.spi;

import org.gphash.Backend;
import org.gphash.GPHashConfig;

/**
 * Creates engines of one backend. The CPU factory is built in; other backends (the GPU engine of
 * the cuda module) register one through {@link java.util.ServiceLoader}.
 */
public interface EngineFactory {

    /** {@return the backend whose engines this factory makes} */
    Backend backend();

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
