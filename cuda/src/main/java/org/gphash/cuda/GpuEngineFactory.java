package org.gphash.cuda;

import org.gphash.Backend;
import org.gphash.GPHashConfig;
import org.gphash.cuda.shard.DeviceBatchesAcrossShards;
import org.gphash.spi.Engine;
import org.gphash.spi.EngineFactory;

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

    /** Device-resident batches across GPU shards, split on the GPU that holds them ({@link DeviceBatchesAcrossShards}). */
    @Override
    public java.util.Optional<org.gphash.GpuFeatures> gpuFeaturesAcross(java.nio.file.Path dir, java.util.List<Engine> shards,
                                                                         long shardSeed, java.util.concurrent.Executor workers) {
        java.util.List<GpuEngine> gpus = new java.util.ArrayList<>(shards.size());
        for (Engine e : shards) {
            if (!(e instanceof GpuEngine g)) {
                return java.util.Optional.empty();
            }
            gpus.add(g);
        }
        return java.util.Optional.of(new DeviceBatchesAcrossShards(dir, gpus, shardSeed, workers));
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
