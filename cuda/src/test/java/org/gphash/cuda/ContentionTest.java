package org.gphash.cuda;

import static org.gphash.cuda.GpuTestSupport.key;
import static org.gphash.cuda.GpuTestSupport.value;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.table.VerifyReport;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Many warps on overlapping keys: tens of thousands of operations on a few hundred keys in one batch.
 * Afterwards exactly one valid item per key (the CPU's verifier finds no duplicate, no INSERT slot,
 * no shared or leaked block) and every surviving value is one that an operation on that key wrote.
 */
class ContentionTest {

    @BeforeEach
    void gpu() {
        GpuTestSupport.assumeGpu();
    }

    @Test
    void racingInsertsLeaveOneItemPerKey() {
        try (GpuTestSupport t = GpuTestSupport.create();
             GpuEngine gpu = GpuEngines.create(GpuTestSupport.config(t.pool("gpu"), Backend.GPU, 8, 2, 2, 8, 1024, 21))) {
            int keys = 256;
            int copies = 256;
            Batch batch = Batch.create(8, GpuTestSupport.VALUE_SIZE, keys * copies);
            for (int c = 0; c < copies; c++) {
                for (long k = 0; k < keys; k++) {
                    batch.insert(key(k, 8), value(k, c));
                }
            }
            BatchResult r = new BatchResult(GpuTestSupport.VALUE_SIZE, 1);
            gpu.execute(batch, r);
            Map<Long, Set<Long>> inserted = new HashMap<>();
            for (int i = 0; i < batch.size(); i++) {
                assertTrue(r.outcome(i) == Outcome.INSERTED || r.outcome(i) == Outcome.EXISTS, "op " + i + ": " + r.outcome(i));
                if (r.outcome(i) == Outcome.INSERTED) {
                    inserted.computeIfAbsent((long) (i % keys), x -> new HashSet<>()).add((long) (i / keys));
                }
            }
            assertEquals(keys, inserted.size(), "every key was inserted by at least one operation");
            assertEquals(keys, gpu.stats().size());
            for (long k = 0; k < keys; k++) {
                byte[] v = get(gpu, k);
                assertTrue(v != null && GpuTestSupport.whole(v) && GpuTestSupport.keyOf(v) == k, "key " + k);
                assertTrue(inserted.get(k).contains(GpuTestSupport.versionOf(v)),
                        "key " + k + " holds the value of an insert that reported INSERTED");
            }
            VerifyReport report = gpu.diagnostics().verify();
            assertTrue(report.sound(), report.toString());
            assertEquals(keys, report.items());
        }
    }

    @Test
    void mixedStormOnFewKeysStaysSound() {
        try (GpuTestSupport t = GpuTestSupport.create();
             GpuEngine gpu = GpuEngines.create(GpuTestSupport.config(t.pool("gpu"), Backend.GPU, 8, 2, 2, 8, 1024, 22))) {
            Random random = new Random(22);
            OpKind[] kinds = GpuTestSupport.PLAIN_KINDS;
            long version = 0;
            BatchResult r = new BatchResult(GpuTestSupport.VALUE_SIZE, 1);
            for (int round = 0; round < 10; round++) {
                Batch batch = Batch.create(8, GpuTestSupport.VALUE_SIZE, 50_000);
                for (int i = 0; i < 50_000; i++) {
                    long k = random.nextInt(500);
                    OpKind kind = kinds[random.nextInt(kinds.length)];
                    batch.add(kind, key(k, 8), kind.hasValue() ? value(k, ++version) : null);
                }
                gpu.execute(batch, r);
                for (int i = 0; i < batch.size(); i++) {
                    if (r.outcome(i) == Outcome.FOUND || r.outcome(i) == Outcome.REPLACED) {
                        byte[] v = r.value(i);
                        assertTrue(GpuTestSupport.whole(v), "round " + round + " op " + i + " read a torn value");
                    }
                }
                VerifyReport report = gpu.diagnostics().verify();
                assertTrue(report.sound(), "round " + round + ": " + report);
                assertEquals(report.items(), gpu.stats().size(), "round " + round + ": item count");
            }
        }
    }

    private static byte[] get(GpuEngine gpu, long k) {
        Batch b = Batch.create(8, GpuTestSupport.VALUE_SIZE, 1);
        b.get(key(k, 8));
        BatchResult r = new BatchResult(GpuTestSupport.VALUE_SIZE, 1);
        gpu.execute(b, r);
        return r.value(0);
    }
}
