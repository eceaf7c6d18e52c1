package org.gphash.cuda;

import static org.gphash.cuda.GpuTestSupport.key;
import static org.gphash.cuda.GpuTestSupport.value;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.GPHashIndex;
import org.gphash.GpuFeatures;
import org.gphash.OpKind;
import org.gphash.cuda.runtime.CudaRuntime;
import org.gphash.index.CpuEngine;
import org.gphash.shard.ShardedEngine;
import org.gphash.spi.Engine;
import org.gphash.table.VerifyReport;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Device-resident batches through a sharded index's {@code gpu()} view (issue 30): split by shard
 * on the GPU that holds them, each part run on its shard's GPU, outcomes merged back in the caller's
 * order. Against one CPU-engine pool on the same batches, with batches on every GPU in turn, repeated
 * keys (where the engine orders a key's operations), every plain kind, resizes in every shard, and
 * from several threads at once; and a batch the view refuses changes nothing. With one GPU, both
 * shards share it and no part is copied.
 */
public class ShardedDeviceBatchesTest {

    private static final int KS = 8;
    private static final int VS = GpuTestSupport.VALUE_SIZE;

    @BeforeEach
    void gpu() {
        GpuTestSupport.assumeGpu();
    }

    @Test
    @Timeout(180)
    void deviceBatchesOnEveryGpuGiveTheResultsOfOneCpuPool() {
        int visible = CudaRuntime.deviceCount();
        try (GpuTestSupport t = GpuTestSupport.create();
             Engine cpu = CpuEngine.create(GpuTestSupport.config(t.pool("cpu"), Backend.CPU, KS, 2, 2, 8, 512, 13));
             GPHashIndex sharded = GPHashIndex.builder(t.pool("sharded")).backend(Backend.GPU).devices()
                     .shards(Math.max(2, visible)).keySize(KS).valueSize(VS).initialCapacity(1024).seed(13).create()) {
            GpuFeatures gpu = sharded.gpu().orElseThrow();
            System.out.printf("sharded device batches: %s, %d shards%n", gpu.deviceName(), sharded.shardStats().size());
            roundsMatchOneCpuPool(sharded, gpu, cpu, 24, 31);
            BatchResult rc = new BatchResult(VS, 1);
            // Gets only, with no values column: the view passes none to the shards.
            Batch gets = Batch.create(KS, VS, 5000);
            for (long k = 0; k < 5000; k++) {
                gets.add(OpKind.GET, key(k, KS), null);
            }
            cpu.execute(gets, rc);
            try (DeviceBatch device = new DeviceBatch(CudaRuntime.get(visible - 1), KS, VS, 5000)) {
                device.upload(gets);
                gpu.executeOnDevice(5000, CudaRuntime.address(device.kinds()), CudaRuntime.address(device.keys()), 0,
                        CudaRuntime.address(device.codes()), CudaRuntime.address(device.out()));
                GpuTestSupport.assertSameResults(gets, rc, device, "gets without a values column");
            }
            long items = 0;
            ShardedEngine shards = (ShardedEngine) sharded.engine();
            for (int s = 0; s < shards.shardCount(); s++) {
                GpuEngine g = GpuEngines.gpuEngine(shards.shard(s));
                VerifyReport report = g.diagnostics().verify();
                assertTrue(report.sound(), "shard " + s + " written through device batches: " + report);
                assertTrue(g.stats().resizes() > 0, "shard " + s + " resized: " + g.stats());
                items += report.items();
            }
            assertEquals(cpu.stats().size(), items);
        }
    }

    /**
     * Runs {@code rounds} batches through {@code view}, each on the next GPU in turn, and the same
     * batches on {@code cpu}: the same outcomes and values read, and the same item count. Batches of
     * 1 to 4,000 operations, every sixth up to 60,000; the first three all inserts; keys repeated
     * where the index orders a key's operations.
     */
    public static void roundsMatchOneCpuPool(GPHashIndex sharded, GpuFeatures view, Engine cpu, int rounds, long seed) {
        int visible = CudaRuntime.deviceCount();
        boolean ordered = sharded.engine().ordersOperationsOnAKey();
        Random random = new Random(seed);
        BatchResult rc = new BatchResult(VS, 1);
        long[] version = {0};
        for (int round = 0; round < rounds; round++) {
            int source = round % visible;
            int n = 1 + random.nextInt(round % 6 == 5 ? 60_000 : 4_000);
            Batch batch = GpuTestSupport.plainBatch(random, n, KS, 0, ordered ? 3 * n + 10 : 200_000, ordered,
                    round < 3 ? OpKind.INSERT : null, version);
            cpu.execute(batch, rc);
            try (DeviceBatch device = new DeviceBatch(CudaRuntime.get(source), KS, VS, n)) {
                device.upload(batch);
                device.runOn(view);
                GpuTestSupport.assertSameResults(batch, rc, device, "round " + round + " (batch on GPU " + source + ")");
            }
            assertEquals(cpu.stats().size(), sharded.size(), "round " + round + ": item count");
        }
    }

    @Test
    @Timeout(120)
    void aBatchTheViewRefusesChangesNothing() {
        try (GpuTestSupport t = GpuTestSupport.create();
             GPHashIndex sharded = GPHashIndex.builder(t.pool("sharded")).backend(Backend.GPU).devices().shards(2)
                     .keySize(KS).valueSize(VS).initialCapacity(1024).seed(14).create();
             DeviceBatch device = new DeviceBatch(CudaRuntime.get(0), KS, VS, 1000)) {
            GpuFeatures gpu = sharded.gpu().orElseThrow();
            for (long k = 0; k < 100; k++) {
                sharded.put(k, value(k, 1));
            }
            // A conditional kind among puts: refused before any shard runs.
            Batch puts = Batch.create(KS, VS, 1000);
            for (long k = 0; k < 1000; k++) {
                puts.add(OpKind.PUT, key(k, KS), value(k, 2));
            }
            byte[] kinds = puts.kinds().toArray(ValueLayout.JAVA_BYTE);
            kinds[500] = (byte) OpKind.COMPARE_AND_SET.ordinal();
            device.upload(1000, kinds, puts.keys().toArray(ValueLayout.JAVA_BYTE), puts.values().toArray(ValueLayout.JAVA_BYTE));
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> device.runOn(gpu));
            assertTrue(e.getMessage().contains("1 of its 1000 operations"), e.getMessage());
            // Writes without a values column: refused by name.
            device.upload(puts);
            e = assertThrows(IllegalArgumentException.class, () -> gpu.executeOnDevice(1000, CudaRuntime.address(device.kinds()),
                    CudaRuntime.address(device.keys()), 0, CudaRuntime.address(device.codes()), 0));
            assertTrue(e.getMessage().contains("values"), e.getMessage());
            assertEquals(100, sharded.size());
            for (long k = 0; k < 100; k++) {
                assertArrayEquals(value(k, 1), sharded.get(k), "key " + k);
            }
            // A view kept past the index's close refuses, naming the index.
            sharded.close();
            org.gphash.IndexClosedException closed = assertThrows(org.gphash.IndexClosedException.class, () -> device.runOn(gpu));
            assertTrue(closed.getMessage().contains("sharded"), closed.getMessage());
        }
    }

    @Test
    @Timeout(180)
    void severalThreadsDeviceBatchesGiveTheResultsOfOneCpuPool() throws Exception {
        int visible = CudaRuntime.deviceCount();
        try (GpuTestSupport t = GpuTestSupport.create();
             Engine cpu = CpuEngine.create(GpuTestSupport.config(t.pool("cpu"), Backend.CPU, KS, 2, 2, 8, 512, 15));
             GPHashIndex sharded = GPHashIndex.builder(t.pool("sharded")).backend(Backend.GPU).devices()
                     .shards(Math.max(2, visible)).keySize(KS).valueSize(VS).initialCapacity(1024).seed(15).create()) {
            GpuFeatures gpu = sharded.gpu().orElseThrow();
            boolean ordered = sharded.engine().ordersOperationsOnAKey();
            int threads = 4;
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            try {
                List<Future<?>> done = new ArrayList<>();
                for (int th = 0; th < threads; th++) {
                    int me = th;
                    done.add(pool.submit(() -> {
                        Random random = new Random(50 + me);
                        BatchResult rc = new BatchResult(VS, 1);
                        long[] version = {0};
                        try (DeviceBatch device = new DeviceBatch(CudaRuntime.get(me % visible), KS, VS, 30_000)) {
                            for (int round = 0; round < 10; round++) {
                                int n = 2_000 + random.nextInt(28_000);
                                // Each thread's own keys.
                                Batch batch = GpuTestSupport.plainBatch(random, n, KS, me * 1_000_000L, 40_000, ordered, null,
                                        version);
                                synchronized (cpu) {
                                    cpu.execute(batch, rc);
                                }
                                device.upload(batch);
                                device.runOn(gpu);
                                GpuTestSupport.assertSameResults(batch, rc, device, "thread " + me + ", round " + round);
                            }
                        }
                        return null;
                    }));
                }
                for (Future<?> f : done) {
                    f.get();
                }
            } finally {
                pool.shutdownNow();
            }
            assertEquals(cpu.stats().size(), sharded.size());
        }
    }
}
