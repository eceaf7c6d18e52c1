package org.gphash.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;

import org.junit.jupiter.api.Test;

class PhaseTallyTest {

    @Test
    void quantilesAndMeanOverMergedTallies() {
        PhaseTally a = new PhaseTally();
        PhaseTally b = new PhaseTally();
        for (int i = 1; i <= 100; i++) {
            (i % 2 == 0 ? a : b).recordBatch(i);
        }
        a.reads = 3;
        b.mismatches = 1;
        PhaseTally all = PhaseTally.merge(List.of(a, b));
        assertEquals(100, all.batches());
        assertEquals(50.5, all.meanBatchNanos(), 1e-9);
        assertEquals(99, all.batchQuantileNanos(0.99));
        assertEquals(100, all.batchQuantileNanos(1.0));
        assertEquals(3, all.operations());
        assertEquals(1, all.failures());
    }
}
