package org.gphash.cuda;

import static org.gphash.cuda.GpuTestSupport.key;
import static org.gphash.cuda.GpuTestSupport.value;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.OpKind;
import org.gphash.index.CpuEngine;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A host batch of two chunks whose first chunk's inserts find every candidate bucket full, so that
 * they run again after a resize, while its second chunk reads, updates, deletes and puts the same
 * keys: the results are batch order's, as the CPU engine gives them ({@link
 * org.gphash.cuda.routing.RerunPlan}). Before, the second chunk ran on a table without the first
 * chunk's inserts (found by {@code crashtest --backend gpu --batch 150000}).
 */
class ResizeAcrossChunksTest {

    @BeforeEach
    void gpu() {
        GpuTestSupport.assumeGpu();
    }

    @Test
    void laterChunksSeeTheInsertsOfEarlierChunksThatWaitedForAResize() {
        int vs = GpuTestSupport.VALUE_SIZE;
        int keys = 75_000;  // one chunk of puts, one of other operations on the same keys (HostBatches.hostChunk)
        OpKind[] later = {OpKind.GET, OpKind.UPDATE, OpKind.DELETE, OpKind.PUT, OpKind.INSERT, OpKind.GET};
        try (GpuTestSupport t = GpuTestSupport.create();
             CpuEngine cpu = CpuEngine.create(GpuTestSupport.config(t.pool("cpu"), Backend.CPU, 8, 2, 2, 8, 1_000, 3));
             GpuEngine gpu = GpuEngines.create(GpuTestSupport.config(t.pool("gpu"), Backend.GPU, 8, 2, 2, 8, 1_000, 3))) {
            // The pool path (-Dgphash.indexMirror=OFF) does not order one key's operations at all.
            assumeTrue(gpu.ordersOperationsOnAKey(), "this engine does not apply one key's operations in batch order");
            Batch batch = Batch.create(8, vs, 2 * keys);
            for (int k = 0; k < keys; k++) {
                batch.add(OpKind.PUT, key(k, 8), value(k, 1));
            }
            for (int k = 0; k < keys; k++) {
                OpKind kind = later[k % later.length];
                batch.add(kind, key(k, 8), kind.hasValue() ? value(k, 2) : null);
            }
            BatchResult expected = new BatchResult(vs, batch.size());
            BatchResult actual = new BatchResult(vs, batch.size());
            long resizes = gpu.stats().resizes();
            cpu.execute(batch, expected);
            gpu.execute(batch, actual);
            assertTrue(gpu.stats().resizes() > resizes, "the first chunk's puts needed a resize");
            GpuTestSupport.assertSameResults(batch, expected, actual, "one batch, two chunks");
            assertEquals(cpu.stats().size(), gpu.stats().size());
            // What each engine holds now, read back in one batch of gets.
            Batch gets = Batch.create(8, vs, keys);
            for (int k = 0; k < keys; k++) {
                gets.add(OpKind.GET, key(k, 8), null);
            }
            cpu.execute(gets, expected);
            gpu.execute(gets, actual);
            GpuTestSupport.assertSameResults(gets, expected, actual, "read back");
        }
    }
}
