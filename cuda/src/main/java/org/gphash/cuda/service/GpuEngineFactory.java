package org.gphash.cuda.service;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executor;

import org.gphash.Backend;
import org.gphash.GPHashConfig;
import org.gphash.cuda.GpuEngine;
import org.gphash.cuda.GpuEngines;
import org.gphash.cuda.runtime.CudaRuntime;
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
        return CudaRuntime.deviceCount();
    }

    /** Device-resident batches across GPU shards, split on the GPU that holds them ({@link DeviceBatchesAcrossShards}). */
    @Override
    public Optional<org.gphash.GpuFeatures> gpuFeaturesAcross(Path dir, List<Engine> shards,
                                                                         long shardSeed, Executor workers) {
        List<GpuEngine> gpus = new ArrayList<>(shards.size());
        for (Engine e : shards) {
            if (!(e instanceof GpuEngine g)) {
                return Optional.empty();
            }
            gpus.add(g);
        }
        return Optional.of(new DeviceBatchesAcrossShards(dir, gpus, shardSeed, workers));
    }

    @Override
    public Engine create(GPHashConfig config) {
        return GpuEngines.create(config);
    }

    @Override
    public Engine open(GPHashConfig config) {
        return GpuEngines.open(config);
    }
}
