package org.gphash.index;

import org.gphash.Backend;
import org.gphash.GPHashConfig;
import org.gphash.spi.Engine;
import org.gphash.spi.EngineFactory;

/**
 * The CPU engine's factory, found by the index through {@link java.util.ServiceLoader} like every
 * other backend's (registered in this module's descriptor and in META-INF/services), so that the API
 * package names no engine.
 */
public final class CpuEngineFactory implements EngineFactory {

    /** For {@link java.util.ServiceLoader}. */
    public CpuEngineFactory() {
    }

    @Override
    public Backend backend() {
        return Backend.CPU;
    }

    @Override
    public Engine create(GPHashConfig config) {
        return CpuEngine.create(config);
    }

    @Override
    public Engine open(GPHashConfig config) {
        return CpuEngine.open(config);
    }
}
