package org.gphash.cuda;

import static org.gphash.cuda.GpuTestSupport.key;
import static org.gphash.cuda.GpuTestSupport.value;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.Map;

import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The GPU's timeline of host batches' chunks ({@link GpuEngine#timeChunks}): while on, every chunk
 * of a host batch is summed once, its kernels and copies take time, the kernels of one stream never
 * add up to more than the span, and the results are what they are without it; off, nothing is
 * reported and nothing is summed.
 */
class ChunkTimelineTest {

    @BeforeEach
    void gpu() {
        GpuTestSupport.assumeGpu();
    }

    @Test
    void timesEveryChunkOfHostBatchesWhileOn() {
        int vs = GpuTestSupport.VALUE_SIZE;
        int n = 200_000;  // two chunks of 100,000 (HostBatches.hostChunk)
        try (GpuTestSupport t = GpuTestSupport.create();
             GpuEngine gpu = GpuEngines.create(GpuTestSupport.config(t.pool("gpu"), Backend.GPU, 8, 2, 2, 8, 400_000, 7))) {
            assumeTrue(gpu.usesIndexMirror(), "the pool path queues no chunks");
            Batch puts = Batch.create(8, vs, n);
            Batch gets = Batch.create(8, vs, n);
            for (int i = 0; i < n; i++) {
                puts.add(OpKind.PUT, key(i, 8), value(i, 1));
                gets.add(OpKind.GET, key(i, 8), null);
            }
            BatchResult r = new BatchResult(vs, n);
            assertTrue(gpu.diagnostics().timeChunks(true));
            gpu.diagnostics().hostStageNanos(true);
            gpu.execute(puts, r);
            gpu.execute(gets, r);
            for (int i = 0; i < n; i += 997) {
                assertEquals(Outcome.FOUND, r.outcome(i), "get " + i);
                assertTrue(java.util.Arrays.equals(value(i, 1), r.value(i)), "the value of get " + i);
            }
            Map<String, Long> on = gpu.diagnostics().hostStageNanos(true);
            assertEquals(4L, on.get("gpu_chunks"), "two batches of two chunks: " + on);
            for (String stage : new String[] {"gpu_copy_in", "gpu_kernels", "gpu_copy_out", "gpu_span"}) {
                assertTrue(on.get(stage) > 0, stage + " took no time: " + on);
            }
            assertTrue(on.get("gpu_kernels") + on.get("gpu_kernel_idle") <= on.get("gpu_span"),
                    "one stream's kernels and their gaps fit in the span: " + on);
            gpu.execute(gets, r);
            assertEquals(2L, gpu.diagnostics().hostStageNanos(false).get("gpu_chunks"), "counting again after a reset: one batch");

            assertTrue(gpu.diagnostics().timeChunks(false));
            gpu.execute(gets, r);
            Map<String, Long> off = gpu.diagnostics().hostStageNanos(true);
            assertFalse(off.keySet().stream().anyMatch(k -> k.startsWith("gpu_")), "nothing reported while off: " + off);
            assertTrue(gpu.diagnostics().timeChunks(true));
            assertEquals(0L, gpu.diagnostics().hostStageNanos(false).get("gpu_chunks"), "a chunk run while off is never summed");
        }
    }
}
