package org.gphash.cuda.shard;

import static org.gphash.cuda.GpuTestSupport.key;
import static org.gphash.cuda.GpuTestSupport.value;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.GPHashIndex;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.cuda.DeviceBatch;
import org.gphash.cuda.GpuEngine;
import org.gphash.cuda.GpuTestSupport;
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
                shards.add((GpuEngine) se.shard(s));
            }
            boolean ordered = se.ordersOperationsOnAKey();
            try (DeviceBatchesAcrossShards copying = new DeviceBatchesAcrossShards(t.pool("sharded"), shards, se.manifest().seed(), workers, false)) {
                Random random = new Random(32);
                BatchResult rc = new BatchResult(VS, 1);
                long version = 0;
                for (int round = 0; round < 16; round++) {
                    int source = round % visible;
                    int n = 1 + random.nextInt(round % 4 == 3 ? 50_000 : 4_000);
                    Batch batch = Batch.create(KS, VS, n);
                    java.util.Set<Long> used = new java.util.HashSet<>();
                    while (batch.size() < n) {
                        long k = random.nextInt(ordered ? 3 * n + 10 : 200_000);
                        if (ordered || used.add(k)) {
                            OpKind kind = round < 2 ? OpKind.INSERT
                                    : GpuTestSupport.PLAIN_KINDS[random.nextInt(GpuTestSupport.PLAIN_KINDS.length)];
                            batch.add(kind, key(k, KS), kind.hasValue() ? value(k, ++version) : null);
                        }
                    }
                    cpu.execute(batch, rc);
                    try (DeviceBatch device = new DeviceBatch(CudaRuntime.get(source), KS, VS, n)) {
                        device.upload(batch);
                        device.runOn(copying);
                        byte[] codes = device.downloadCodes();
                        byte[] values = device.downloadValues().toArray(ValueLayout.JAVA_BYTE);
                        for (int i = 0; i < n; i++) {
                            assertEquals(rc.outcome(i), Outcome.ofCode(codes[i]), "round " + round + ", op " + i);
                            if (rc.outcome(i) == Outcome.FOUND || rc.outcome(i) == Outcome.REPLACED) {
                                assertArrayEquals(rc.value(i), java.util.Arrays.copyOfRange(values, i * VS, (i + 1) * VS),
                                        "round " + round + ", op " + i);
                            }
                        }
                    }
                    assertEquals(cpu.stats().size(), sharded.size(), "round " + round);
                }
            }
        } finally {
            workers.shutdownNow();
        }
    }
}
