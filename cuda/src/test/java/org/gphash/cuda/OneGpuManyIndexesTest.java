package org.gphash.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.GPHashIndex;
import org.gphash.index.CpuEngine;
import org.gphash.spi.Engine;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * GPU indexes of one process on one GPU share its CUDA context, so one engine's first batch of a
 * shape (captured into a CUDA graph) can meet the other's resize, mirror load or close, which wait
 * for the whole context: CUDA refuses that during a capture. Found as CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
 * when the two shards of a sharded index ran on one GPU (ShardedGpuTest); a failed capture then left
 * its stream capturing and failed every later open on that GPU. As the shards did, the indexes
 * here (four) take batches of the same sizes at the same moments (a barrier before each), each from its
 * own thread: both start small, so both resize at the same rounds, and the sizes run through many
 * capacity classes, so both capture graphs at the same rounds.
 */
class OneGpuManyIndexesTest {

    @BeforeEach
    void gpu() {
        GpuTestSupport.assumeGpu();
    }

    @Test
    @Timeout(180)
    void indexesOnOneGpuResizeAndCaptureAtOnce() throws Exception {
        int keySize = 8;
        int indexes = 4;
        ExecutorService threads = Executors.newFixedThreadPool(indexes);
        CyclicBarrier together = new CyclicBarrier(indexes);
        try (GpuTestSupport t = GpuTestSupport.create()) {
            List<Future<Long>> runs = new ArrayList<>();
            for (int i = 0; i < indexes; i++) {
                int which = i;
                runs.add(threads.submit(() -> {
                    long resizes;
                    try (Engine cpu = CpuEngine.create(GpuTestSupport.config(t.pool("cpu" + which), Backend.CPU, keySize, 2, 2, 8,
                            512, 7 + which));
                         GPHashIndex gpu = GPHashIndex.builder(t.pool("gpu" + which)).backend(Backend.GPU).keySize(keySize)
                                 .valueSize(GpuTestSupport.VALUE_SIZE).initialCapacity(512).seed(7 + which).create()) {
                        Random sizes = new Random(42);  // the same for both
                        Random random = new Random(which);
                        GpuTestSupport.RandomBatches batches = new GpuTestSupport.RandomBatches(random, 400_000, keySize);
                        BatchResult rc = new BatchResult(GpuTestSupport.VALUE_SIZE, 1);
                        BatchResult rg = new BatchResult(GpuTestSupport.VALUE_SIZE, 1);
                        for (int round = 0; round < 60; round++) {
                            int n = 1 + sizes.nextInt(1 << (2 + round % 15));  // sizes from 1 to 2^16: many graphs
                            Batch batch = gpu.newBatch(n);
                            batches.fill(batch, n, 0.8);
                            cpu.execute(batch, rc);
                            together.await(60, TimeUnit.SECONDS);  // the other index failed, if this times out
                            gpu.execute(batch, rg);
                            GpuTestSupport.assertSameResults(batch, rc, rg, "index " + which + ", round " + round);
                        }
                        assertEquals(cpu.stats().size(), gpu.size(), "index " + which);
                        resizes = gpu.stats().resizes();
                    }
                    return resizes;
                }));
            }
            for (Future<Long> run : runs) {
                assertTrue(run.get() > 3, "each index resized several times while the others ran");
            }
        } finally {
            threads.shutdownNow();
        }
    }
}
