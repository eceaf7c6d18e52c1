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
import org.gphash.cuda.HostFirstEngine;
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
            if (!(e instanceof GpuEngine) && !(e instanceof HostFirstEngine)) {
                return Optional.empty();
            }
            gpus.add(GpuEngines.gpuEngine(e));  // a shard still served on the host is waited for
        }
        return Optional.of(new DeviceBatchesAcrossShards(dir, gpus, shardSeed, workers));
    }

    /**
     * Starts the CUDA driver on a thread of its own ({@link CudaRuntime#startDriverBeside}): its
     * start (JCuda's native library, then {@code cuInit}, 120-230 ms on the GPU machine) is what a GPU
     * open waits for before its first write; begun at the engine's open, it overlapped the pool's open
     * alone (45-60 ms), and the open waited 89-190 ms for it; begun here, beside the front end's and the
     * path's checks and their classes' loading, 0-27 ms (YCSB's client at 16 threads,
     * docs/lab/2026-11-30-stalls-and-region-checks.md).
     */
    @Override
    public void prepare(GPHashConfig config) {
        CudaRuntime.startDriverBeside();
    }

    /** The engine serves calls on the host while the GPU starts ({@link HostFirstEngine}). */
    @Override
    public Engine create(GPHashConfig config) {
        return GpuEngines.createServing(config);
    }

    /** The engine serves calls on the host while the GPU starts, where the open needs no recovery pass ({@link HostFirstEngine}). */
    @Override
    public Engine open(GPHashConfig config) {
        return GpuEngines.openServing(config);
    }
}
