package org.gphash.cuda;

import org.gphash.Backend;
import org.gphash.spi.Engine;
import org.gphash.spi.EngineFactory;
import org.gphash.GPHashConfig;

/** Makes {@code Backend.GPU} available to {@link org.gphash.GPHashIndex} (found through ServiceLoader). */
public final class GpuEngineFactory implements EngineFactory {

    @Override
    public Backend backend() {
        return Backend.GPU;
    }

    @Override
    public int visibleDevices() {
        return org.gphash.cuda.runtime.CudaRuntime.deviceCount();
    }

    @Override
    public Engine create(GPHashConfig config) {
        return GpuEngine.create(config);
    }

    @Override
    public Engine open(GPHashConfig config) {
        return GpuEngine.open(config);
    }
}
