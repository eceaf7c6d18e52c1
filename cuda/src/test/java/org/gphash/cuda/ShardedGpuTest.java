package org.gphash.cuda;

import static org.gphash.cuda.GpuTestSupport.key;
import static org.gphash.cuda.GpuTestSupport.value;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Random;

import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.GPHashIndex;
import org.gphash.IndexMirror;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.cuda.runtime.CudaRuntime;
import org.gphash.index.CpuEngine;
import org.gphash.shard.ShardedEngine;
import org.gphash.spi.Engine;
import org.gphash.table.VerifyReport;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A sharded index on the GPU engine (issue 30) gives the results of one CPU-engine pool on the same
 * batches: small and large batches, repeated keys, conditional operations, resizes in every shard.
 * With two or more GPUs the shards run on different GPUs; with one, both on GPU 0.
 */
class ShardedGpuTest {

    @BeforeEach
    void gpu() {
        GpuTestSupport.assumeGpu();
    }

    @Test
    @Timeout(180)
    void twoShardsOnTheGpusGiveTheResultsOfOneCpuPool() {
        int keySize = 8;
        try (GpuTestSupport t = GpuTestSupport.create();
             Engine cpu = CpuEngine.create(GpuTestSupport.config(t.pool("cpu"), Backend.CPU, keySize, 2, 2, 8, 512, 11));
             GPHashIndex sharded = GPHashIndex.builder(t.pool("sharded")).backend(Backend.GPU).devices().shards(2)
                     .keySize(keySize).valueSize(GpuTestSupport.VALUE_SIZE).initialCapacity(1024).seed(11).create()) {
            ShardedEngine shards = (ShardedEngine) sharded.engine();
            int visible = CudaRuntime.deviceCount();
            GpuEngine s0 = GpuEngines.gpuEngine(shards.shard(0));
            GpuEngine s1 = GpuEngines.gpuEngine(shards.shard(1));
            assertEquals(0, s0.cuda().ordinal);
            if (visible >= 2) {
                assertNotEquals(s0.cuda().ordinal, s1.cuda().ordinal, "each shard on its own GPU");
            }
            System.out.printf("sharded GPU test: %d GPUs visible, shard 0 on GPU %d (%s), shard 1 on GPU %d (%s)%n",
                    visible, s0.cuda().ordinal, s0.features().deviceName(), s1.cuda().ordinal, s1.features().deviceName());
            Random random = new Random(30);
            int keySpace = 100_000;  // above the largest batch: its keys are distinct
            BatchResult rc = new BatchResult(GpuTestSupport.VALUE_SIZE, 1);
            BatchResult rg = new BatchResult(GpuTestSupport.VALUE_SIZE, 1);
            GpuTestSupport.RandomBatches batches = new GpuTestSupport.RandomBatches(random, keySpace, keySize);
            for (int round = 0; round < 30; round++) {
                int n = 1 + random.nextInt(round % 5 == 4 ? 60_000 : 3_000);
                Batch batch = sharded.newBatch(n);
                batches.fill(batch, n, round < 8 ? 0.7 : 0.2);  // distinct keys: without the mirror one key's operations have no order
                cpu.execute(batch, rc);
                sharded.execute(batch, rg);
                GpuTestSupport.assertSameResults(batch, rc, rg, "round " + round);
                assertEquals(cpu.stats().size(), sharded.size(), "round " + round + ": item count");
            }
            // Repeated keys in one batch: on the mirror (the default) one key's operations keep batch order.
            if (sharded.engine().ordersOperationsOnAKey()) {
                Batch repeated = sharded.newBatch(4096);
                for (int i = 0; i < 4096; i++) {
                    long k = random.nextInt(200);
                    OpKind kind = OpKind.values()[random.nextInt(5)];
                    repeated.add(kind, key(k, keySize), kind.hasValue() ? value(k, batches.nextVersion()) : null);
                }
                cpu.execute(repeated, rc);
                sharded.execute(repeated, rg);
                GpuTestSupport.assertSameResults(repeated, rc, rg, "repeated keys");
            }
            Batch all = sharded.newBatch(keySpace);
            for (long k = 0; k < keySpace; k++) {
                all.add(OpKind.GET, key(k, keySize), null);
            }
            // Twice: run again, the batch and result are pinned and each shard's part runs where it
            // lies (gathered from the batch and scattered into the result on the GPU).
            for (int pass = 0; pass < 2; pass++) {
                cpu.execute(all, rc);
                sharded.execute(all, rg);
                for (int i = 0; i < keySpace; i++) {
                    assertEquals(rc.outcome(i), rg.outcome(i), "pass " + pass + ", key " + i);
                    if (rc.outcome(i) == Outcome.FOUND) {
                        assertArrayEquals(rc.value(i), rg.value(i), "pass " + pass + ", key " + i);
                    }
                }
            }
            System.out.printf("sharded GPU test: parts run in place: shard 0 %d, shard 1 %d%n", s0.diagnostics().partsInPlace(),
                    s1.diagnostics().partsInPlace());
            if (s0.usesIndexMirror()) {
                assertTrue(s0.diagnostics().partsInPlace() > 0 && s1.diagnostics().partsInPlace() > 0, "a reused batch's parts ran where they lay");
            }
            long items = 0;
            for (GpuEngine g : new GpuEngine[] {s0, s1}) {
                VerifyReport report = g.diagnostics().verify();
                assertTrue(report.sound(), "shard written by the GPU, verified by the CPU: " + report);
                assertTrue(g.stats().resizes() > 0, "the stream made each shard resize: " + g.stats());
                items += report.items();
            }
            assertEquals(cpu.stats().size(), items);
            assertEquals(2, sharded.shardStats().size());
        }
    }

    /**
     * Parts run where they lie (each GPU gathers its operations from the caller's batch and scatters
     * their results back): reused batches of plain operations with repeated keys, from four threads at
     * once (keys of their own), through resizes in every shard, give one CPU-engine pool's results.
     */
    @Test
    @Timeout(180)
    void partsRunWhereTheyLieGiveTheResultsOfOneCpuPoolFromSeveralThreads() throws Exception {
        int keySize = 8;
        int vs = GpuTestSupport.VALUE_SIZE;
        try (GpuTestSupport t = GpuTestSupport.create();
             Engine cpu = CpuEngine.create(GpuTestSupport.config(t.pool("cpu"), Backend.CPU, keySize, 2, 2, 8, 512, 12));
             GPHashIndex sharded = GPHashIndex.builder(t.pool("sharded")).backend(Backend.GPU).devices().shards(2)
                     .keySize(keySize).valueSize(vs).initialCapacity(1024).seed(12).create()) {
            ShardedEngine shards = (ShardedEngine) sharded.engine();
            GpuEngine s0 = GpuEngines.gpuEngine(shards.shard(0));
            GpuEngine s1 = GpuEngines.gpuEngine(shards.shard(1));
            org.junit.jupiter.api.Assumptions.assumeTrue(s0.usesIndexMirror(), "parts run where they lie on the index mirror only");
            OpKind[] kinds = {OpKind.GET, OpKind.PUT, OpKind.INSERT, OpKind.UPDATE, OpKind.DELETE, OpKind.READ_MODIFY_WRITE};
            int threads = 4;
            java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(threads);
            try {
                List<java.util.concurrent.Future<?>> done = new java.util.ArrayList<>();
                for (int th = 0; th < threads; th++) {
                    int me = th;
                    done.add(pool.submit(() -> {
                        Random random = new Random(40 + me);
                        Batch batch = sharded.newBatch(1 << 15);  // reused: pinned from its second run
                        BatchResult rc = new BatchResult(vs, 1 << 15);
                        BatchResult rg = new BatchResult(vs, 1 << 15);
                        long version = 0;
                        for (int round = 0; round < 12; round++) {
                            batch.clear();
                            int n = 5_000 + random.nextInt(25_000);
                            for (int i = 0; i < n; i++) {
                                long k = me * 1_000_000L + random.nextInt(20_000);  // repeated within the batch
                                OpKind kind = kinds[random.nextInt(kinds.length)];
                                batch.add(kind, key(k, keySize), kind.hasValue() ? value(k, ++version) : null);
                            }
                            cpu.execute(batch, rc);
                            sharded.execute(batch, rg);
                            GpuTestSupport.assertSameResults(batch, rc, rg, "thread " + me + ", round " + round);
                        }
                        return null;
                    }));
                }
                for (java.util.concurrent.Future<?> f : done) {
                    f.get();
                }
            } finally {
                pool.shutdownNow();
            }
            System.out.printf("sharded GPU test, several threads: parts run in place: shard 0 %d, shard 1 %d%n",
                    s0.diagnostics().partsInPlace(), s1.diagnostics().partsInPlace());
            // Of each shard's 48 parts, those over the one-launch sizes whose batch memory is pinned run in
            // place. A block is pinned at its second use, by whichever shard comes second the first time,
            // so how many of the first runs do varies with timing (28 to 37 a shard in eight runs on the
            // H200): the bound says that reused batches run in place, not how soon.
            assertTrue(s0.diagnostics().partsInPlace() >= 20 && s1.diagnostics().partsInPlace() >= 20, "reused batches' parts ran where they lay");
            long items = 0;
            for (GpuEngine g : new GpuEngine[] {s0, s1}) {
                VerifyReport report = g.diagnostics().verify();
                assertTrue(report.sound(), "shard written by the GPU, verified by the CPU: " + report);
                assertTrue(g.stats().resizes() > 0, "the batches made each shard resize: " + g.stats());
                items += report.items();
            }
            assertEquals(cpu.stats().size(), items);
            assertEquals(cpu.stats().size(), sharded.size());
        }
    }

    @Test
    @Timeout(120)
    void aShardedGpuIndexReopensOnTheCpuEngineAndBack() {
        try (GpuTestSupport t = GpuTestSupport.create()) {
            java.nio.file.Path dir = t.pool("idx");
            try (GPHashIndex gpu = GPHashIndex.builder(dir).backend(Backend.GPU).devices().keySize(8)
                    .valueSize(GpuTestSupport.VALUE_SIZE).indexMirror(IndexMirror.AUTO).create()) {
                Batch b = gpu.newBatch(10_000);
                for (long k = 0; k < 10_000; k++) {
                    b.put(k, value(k, 1));
                }
                gpu.execute(b);
            }
            // The CPU fallback: the same directory, every shard on the CPU engine.
            try (GPHashIndex cpu = GPHashIndex.builder(dir).open()) {
                assertEquals(10_000, cpu.size());
                assertArrayEquals(value(1234, 1), cpu.get(1234L));
                cpu.put(1234L, value(1234, 2));
            }
            try (GPHashIndex gpu = GPHashIndex.builder(dir).backend(Backend.GPU).open()) {
                assertEquals(10_000, gpu.size());
                assertArrayEquals(value(1234, 2), gpu.get(1234L));
                assertEquals(Math.max(1, CudaRuntime.deviceCount()), gpu.shardStats().size(), "devices() made one shard per GPU");
            }
        }
    }
}
