package org.gphash.cuda;

import static org.gphash.cuda.GpuTestSupport.key;
import static org.gphash.cuda.GpuTestSupport.value;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.GpuTuning;
import org.gphash.OpKind;
import org.gphash.cuda.routing.Router;
import org.gphash.index.CpuEngine;
import org.gphash.spi.SubmittedBatch;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Small batches of gets submitted without waiting ({@link GpuEngine#submit}, {@link org.gphash.cuda.pipeline.SmallReads}'s
 * slots): more of them than there are slots, awaited in any order, with batches that write run in
 * between (which must first let the queued gets finish, reading what was there before the write),
 * give the CPU engine's results; writing batches submitted run at once.
 */
class SubmittedReadsTest {

    /** How the engine routes a batch on the index mirror, with the default tuning. */
    /** Every batch on the GPU: these tests are of GPU reads submitted and awaited later. */
    private static final GpuTuning GPU_ROUTES = GpuTuning.DEFAULTS.with("hostBatchesMax=0");
    private static final Router ROUTER = new Router(GPU_ROUTES, true);


    @BeforeEach
    void gpu() {
        GpuTestSupport.assumeGpu();
    }

    @Test
    void queuedGetsGiveTheCpuEnginesResultsAroundWrites() {
        int vs = GpuTestSupport.VALUE_SIZE;
        try (GpuTestSupport t = GpuTestSupport.create();
             CpuEngine cpu = CpuEngine.create(GpuTestSupport.config(t.pool("cpu"), Backend.CPU, 8, 2, 2, 8, 20_000, 11));
             GpuEngine gpu = GpuEngines.create(GpuTestSupport.config(t.pool("gpu"), Backend.GPU, 8, 2, 2, 8, 20_000, 11).withGpuTuning(GPU_ROUTES))) {
            Random random = new Random(11);
            long version = 0;
            Batch load = Batch.create(8, vs, 10_000);
            for (long k = 0; k < 10_000; k += 2) {
                load.add(OpKind.PUT, key(k, 8), value(k, ++version));
            }
            BatchResult loaded = new BatchResult(vs, load.size());
            cpu.execute(load, loaded);
            gpu.execute(load, loaded);
            long queuedBefore = gpu.diagnostics().smallReadBatches();
            for (int round = 0; round < 40; round++) {
                List<Batch> batches = new ArrayList<>();
                List<BatchResult> expected = new ArrayList<>();
                List<BatchResult> actual = new ArrayList<>();
                List<SubmittedBatch> submitted = new ArrayList<>();
                int count = 1 + random.nextInt(2 * GpuTuning.DEFAULTS.smallReadSlots() + 2);
                for (int b = 0; b < count; b++) {
                    boolean writes = random.nextInt(4) == 0;
                    int n = 1 + random.nextInt(b % 2 == 0 ? 16 : GpuTuning.DEFAULTS.smallReadsMax());
                    Batch batch = Batch.create(8, vs, n);
                    java.util.Set<Long> used = new java.util.HashSet<>();
                    for (int i = 0; i < n; i++) {
                        long k = random.nextInt(12_000);
                        if (writes && !used.add(k)) {
                            continue;  // distinct keys: the pool path (no mirror) does not order one key's operations
                        }
                        OpKind kind = !writes ? OpKind.GET : GpuTestSupport.PLAIN_KINDS[random.nextInt(GpuTestSupport.PLAIN_KINDS.length)];
                        batch.add(kind, key(k, 8), kind.hasValue() ? value(k, ++version) : null);
                    }
                    BatchResult e = new BatchResult(vs, n);
                    BatchResult a = new BatchResult(vs, n);
                    cpu.execute(batch, e);
                    SubmittedBatch s = gpu.submit(batch, a);
                    if (ROUTER.routes(Router.Call.BATCH, batch)[0] != Router.Route.SMALL_READS) {
                        assertSame(SubmittedBatch.DONE, s, "a batch that writes runs at once");
                    }
                    batches.add(batch);
                    expected.add(e);
                    actual.add(a);
                    submitted.add(s);
                }
                // Await newest first in odd rounds (a batch that found every slot taken ran at once,
                // after draining the others).
                for (int j = 0; j < count; j++) {
                    int b = round % 2 == 1 ? count - 1 - j : j;
                    submitted.get(b).await();
                    submitted.get(b).await();  // again: harmless
                }
                for (int b = 0; b < count; b++) {
                    GpuTestSupport.assertSameResults(batches.get(b), expected.get(b), actual.get(b), "round " + round + " batch " + b);
                }
            }
            if (gpu.usesIndexMirror()) {
                assertTrue(gpu.diagnostics().smallReadBatches() - queuedBefore > 40, "batches of gets were queued");
            }
            assertEquals(cpu.stats().size(), gpu.stats().size());
        }
    }

    @Test
    void closingRunsOutQueuedGets() {
        int vs = GpuTestSupport.VALUE_SIZE;
        try (GpuTestSupport t = GpuTestSupport.create()) {
            GpuEngine gpu = GpuEngines.create(GpuTestSupport.config(t.pool("gpu"), Backend.GPU, 8, 2, 2, 8, 20_000, 11).withGpuTuning(GPU_ROUTES));
            Batch put = Batch.create(8, vs, 1);
            put.add(OpKind.PUT, key(5, 8), value(5, 1));
            gpu.execute(put, new BatchResult(vs, 1));
            Batch get = Batch.create(8, vs, 1);
            get.add(OpKind.GET, key(5, 8), null);
            BatchResult result = new BatchResult(vs, 1);
            SubmittedBatch s = gpu.submit(get, result);
            gpu.close();
            s.await();  // harvested by close: its results are in place
            assertEquals(org.gphash.Outcome.FOUND, result.outcome(0));
            assertTrue(java.util.Arrays.equals(value(5, 1), result.value(0)));
            assertThrows(org.gphash.IndexClosedException.class, () -> gpu.submit(get, new BatchResult(vs, 1)));
        }
    }

    @Test
    void abandoningFailsTheQueuedGetsAndNoOthers() {
        int vs = GpuTestSupport.VALUE_SIZE;
        try (GpuTestSupport t = GpuTestSupport.create()) {
            GpuEngine gpu = GpuEngines.create(GpuTestSupport.config(t.pool("gpu"), Backend.GPU, 8, 2, 2, 8, 20_000, 11).withGpuTuning(GPU_ROUTES));
            org.junit.jupiter.api.Assumptions.assumeTrue(gpu.usesIndexMirror(), "the pool path runs every batch at once");
            Batch get = Batch.create(8, vs, 1);
            get.add(OpKind.GET, key(5, 8), null);
            SubmittedBatch harvested = gpu.submit(get, new BatchResult(vs, 1));
            harvested.await();
            SubmittedBatch queued = gpu.submit(get, new BatchResult(vs, 1));
            gpu.abandon();
            IllegalStateException e = assertThrows(IllegalStateException.class, queued::await);
            assertTrue(e.getMessage().contains("abandoned"), e.getMessage());
            harvested.await();  // its results came before: awaiting it again is still harmless
        }
    }
}
