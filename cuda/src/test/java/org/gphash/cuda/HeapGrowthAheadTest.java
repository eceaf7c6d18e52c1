package org.gphash.cuda;

import static org.gphash.cuda.GpuTestSupport.key;
import static org.gphash.cuda.GpuTestSupport.value;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.OpKind;
import org.gphash.Outcome;
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

    /** Opt-in: the test turns it on for the engine it opens. */
    @Test
    void growthsPreparedAheadLoseNothing() {
        String before = System.getProperty(HeapGrowthAhead.PROPERTY);
        System.setProperty(HeapGrowthAhead.PROPERTY, "true");
        try {
            run();
        } finally {
            if (before == null) {
                System.clearProperty(HeapGrowthAhead.PROPERTY);
            } else {
                System.setProperty(HeapGrowthAhead.PROPERTY, before);
            }
        }
    }

    private void run() {
        int vs = GpuTestSupport.VALUE_SIZE;
        int keys = 300_000;
        int n = 4096;
        try (GpuTestSupport t = GpuTestSupport.create()) {
            var gpuConfig = GpuTestSupport.config(t.pool("gpu"), Backend.GPU, 8, 2, 2, 8, 1_000, 11);
            try (CpuEngine cpu = CpuEngine.create(GpuTestSupport.config(t.pool("cpu"), Backend.CPU, 8, 2, 2, 8, 1_000, 11))) {
                try (GpuEngine gpu = GpuEngine.create(gpuConfig)) {
                    Batch batch = Batch.create(8, vs, n);
                    BatchResult expected = new BatchResult(vs, n);
                    BatchResult actual = new BatchResult(vs, n);
                    for (int first = 0; first < keys; first += n) {
                        batch.clear();
                        for (int k = first; k < Math.min(keys, first + n); k++) {
                            batch.add(OpKind.INSERT, key(k, 8), value(k, 1));
                        }
                        cpu.execute(batch, expected);
                        gpu.execute(batch, actual);
                        GpuTestSupport.assertSameResults(batch, expected, actual, "inserts from " + first);
                    }
                    assertTrue(gpu.stats().heapGrowths() > 5, "the heap grew: " + gpu.stats());
                    if (gpu.usesIndexMirror()) {
                        assertTrue(gpu.preparesGrowthsAhead());
                        assertTrue(gpu.growthsPreparedAhead() > 0, "no growth was prepared ahead: " + gpu.stats());
                    }
                }
                try (GpuEngine reopened = GpuEngine.open(gpuConfig)) {
                    Batch gets = Batch.create(8, vs, n);
                    BatchResult expected = new BatchResult(vs, n);
                    BatchResult actual = new BatchResult(vs, n);
                    for (int first = 0; first < keys; first += n) {
                        gets.clear();
                        for (int k = first; k < Math.min(keys, first + n); k++) {
                            gets.add(OpKind.GET, key(k, 8), null);
                        }
                        cpu.execute(gets, expected);
                        reopened.execute(gets, actual);
                        GpuTestSupport.assertSameResults(gets, expected, actual, "gets from " + first);
                        assertEquals(gets.size(), actual.count(Outcome.FOUND));
                    }
                }
            }
        }
    }
}
