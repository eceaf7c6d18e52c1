package org.gphash;

/**
 * Creates engines of one backend. The CPU factory is built in; other backends (the GPU engine of
 * the cuda module) register one through {@link java.util.ServiceLoader}.
 */
public interface EngineFactory {

    Backend backend();

    /** Creates a new pool; fails if the file exists. */
    Engine create(GPHashConfig config);

    /** Opens an existing pool, running recovery. */
    Engine open(GPHashConfig config);
}
