package org.gphash.cuda.pipeline;

import static org.gphash.cuda.GpuTestSupport.key;
import static org.gphash.cuda.GpuTestSupport.value;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.GpuTuning;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.cuda.GpuEngine;
import org.gphash.cuda.GpuEngines;
import org.gphash.cuda.GpuTestSupport;
import org.gphash.index.CpuEngine;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A pool that grows its heap many times while batches run gets its growths prepared on the side
 * ({@link HeapGrowthAhead}), and loses nothing: every key inserted is found with its value, as the
 * CPU engine finds it, also after the pool is closed and opened again.
 */
class HeapGrowthAheadTest {

    @BeforeEach
    void gpu() {
        GpuTestSupport.assumeGpu();
    }

    /**
     * On by default; the test turns it on for the engine it opens whatever the JVM was told, and runs
     * every batch on the GPU (host writes grow the heap on the host, HostOperations).
     */
    @Test
    void growthsPreparedAheadLoseNothing() {
        int keys = 300_000;
        try (GpuTestSupport t = GpuTestSupport.create()) {
            var gpuConfig = GpuTestSupport.config(t.pool("gpu"), Backend.GPU, 8, 2, 2, 8, 1_000, 11)
                    .withGpuTuning(GpuTuning.fromSystemProperty().with("growHeapAhead=true,hostBatchesMax=0"));
            try (CpuEngine cpu = CpuEngine.create(GpuTestSupport.config(t.pool("cpu"), Backend.CPU, 8, 2, 2, 8, 1_000, 11))) {
                try (GpuEngine gpu = GpuEngines.create(gpuConfig)) {
                    runBoth(cpu, gpu, OpKind.INSERT, keys);
                    assertTrue(gpu.stats().heapGrowths() > 5, "the heap grew: " + gpu.stats());
                    if (gpu.usesIndexMirror()) {
                        assertTrue(gpu.diagnostics().preparesGrowthsAhead());
                        assertTrue(gpu.diagnostics().growthsPreparedAhead() > 0, "no growth was prepared ahead: " + gpu.stats());
                    }
                }
                try (GpuEngine reopened = GpuEngines.open(gpuConfig)) {
                    assertEquals(keys, runBoth(cpu, reopened, OpKind.GET, keys), "keys found after reopening");
                }
            }
        }
    }

    /** Keys 0..keys-1 in batches of 4096, one kind, on both engines, with the same results; returns the FOUND count. */
    private static long runBoth(CpuEngine cpu, GpuEngine gpu, OpKind kind, int keys) {
        int vs = GpuTestSupport.VALUE_SIZE;
        int n = 4096;
        Batch batch = Batch.create(8, vs, n);
        BatchResult expected = new BatchResult(vs, n);
        BatchResult actual = new BatchResult(vs, n);
        long found = 0;
        for (int first = 0; first < keys; first += n) {
            batch.clear();
            for (int k = first; k < Math.min(keys, first + n); k++) {
                batch.add(kind, key(k, 8), kind.hasValue() ? value(k, 1) : null);
            }
            cpu.execute(batch, expected);
            gpu.execute(batch, actual);
            GpuTestSupport.assertSameResults(batch, expected, actual, kind + " from " + first);
            found += actual.count(Outcome.FOUND);
        }
        return found;
    }
}
