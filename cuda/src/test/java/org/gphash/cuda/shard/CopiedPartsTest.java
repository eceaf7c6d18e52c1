package org.gphash.cuda.shard;


import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import org.gphash.Backend;
import org.gphash.GPHashIndex;
import org.gphash.cuda.GpuEngine;
import org.gphash.cuda.GpuEngines;
import org.gphash.cuda.GpuTestSupport;
import org.gphash.cuda.ShardedDeviceBatchesTest;
import org.gphash.cuda.runtime.CudaRuntime;
import org.gphash.index.CpuEngine;
import org.gphash.shard.ShardedEngine;
import org.gphash.spi.Engine;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The route for GPUs that cannot reach each other's memory: every part on another GPU than the
 * split's is copied to the shard's GPU and its outcomes copied back. The machines at hand have NVLink
 * between every pair, so the view is made with peer reads off; with one GPU, no part leaves it and
 * the test checks the split alone. Against one CPU-engine pool, batches on every GPU in turn.
 */
class CopiedPartsTest {

    private static final int KS = 8;
    private static final int VS = GpuTestSupport.VALUE_SIZE;

    @BeforeEach
    void gpu() {
        GpuTestSupport.assumeGpu();
    }

    @Test
    @Timeout(180)
    void partsCopiedToTheirShardsGpusGiveTheResultsOfOneCpuPool() {
        int visible = CudaRuntime.deviceCount();
        ExecutorService workers = Executors.newCachedThreadPool();
        try (GpuTestSupport t = GpuTestSupport.create();
             Engine cpu = CpuEngine.create(GpuTestSupport.config(t.pool("cpu"), Backend.CPU, KS, 2, 2, 8, 512, 16));
             GPHashIndex sharded = GPHashIndex.builder(t.pool("sharded")).backend(Backend.GPU).devices()
                     .shards(Math.max(2, visible)).keySize(KS).valueSize(VS).initialCapacity(1024).seed(16).create()) {
            ShardedEngine se = (ShardedEngine) sharded.engine();
            List<GpuEngine> shards = new ArrayList<>();
            for (int s = 0; s < se.shardCount(); s++) {
                shards.add(GpuEngines.gpuEngine(se.shard(s)));
            }
            try (DeviceBatchesAcrossShards copying = new DeviceBatchesAcrossShards(t.pool("sharded"), shards, se.manifest().seed(),
                    workers, false)) {
                ShardedDeviceBatchesTest.roundsMatchOneCpuPool(sharded, copying, cpu, 16, 32);
            }
        } finally {
            workers.shutdownNow();
        }
    }
}
