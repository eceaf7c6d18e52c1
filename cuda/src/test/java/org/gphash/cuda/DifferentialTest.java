package org.gphash.cuda;

import static org.gphash.cuda.GpuTestSupport.key;
import static org.gphash.cuda.GpuTestSupport.value;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Random;
import java.util.Set;

import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.Engine;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.index.CpuEngine;
import org.gphash.index.VerifyReport;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * One random operation stream through the CPU engine (the reference) and the GPU engine: the same
 * outcome and value for every operation, the same contents at the end, a sound pool. Keys within one
 * batch are distinct (several operations on one key in a batch may run in any order on the GPU;
 * {@link SameKeyBatchTest} covers those). Small initial capacities force resizes, and a geometry of
 * 1 level x 2 hashes x 4 slots forces the rehash to add extra levels.
 */
class DifferentialTest {

    @BeforeEach
    void gpu() {
        GpuTestSupport.assumeGpu();
    }

    @ParameterizedTest(name = "keys {0} B, {1}x{2}x{3}, seed {4}")
    @CsvSource({
            "8, 2, 2, 8, 1",
            "8, 2, 2, 8, 2",
            "32, 2, 2, 8, 3",
            "13, 2, 2, 8, 4",
            "8, 1, 2, 4, 5",
            "8, 4, 2, 4, 6",
            "16, 2, 4, 4, 7",
    })
    void sameResultsAsTheCpuEngine(int keySize, int levels, int hashes, int slots, long seed) {
        try (GpuTestSupport t = GpuTestSupport.create();
             Engine cpu = CpuEngine.create(GpuTestSupport.config(t.pool("cpu"), Backend.CPU, keySize, levels, hashes, slots, 512, seed));
             GpuEngine gpu = GpuEngine.create(GpuTestSupport.config(t.pool("gpu"), Backend.GPU, keySize, levels, hashes, slots, 512, seed))) {
            Random random = new Random(seed);
            int keySpace = 20_000;
            long version = 0;
            BatchResult rc = new BatchResult(GpuTestSupport.VALUE_SIZE, 1);
            BatchResult rg = new BatchResult(GpuTestSupport.VALUE_SIZE, 1);
            OpKind[] kinds = OpKind.values();
            for (int round = 0; round < 40; round++) {
                int n = 1 + random.nextInt(round % 5 == 4 ? 20_000 : 3_000);
                Batch batch = Batch.create(keySize, GpuTestSupport.VALUE_SIZE, n);
                Set<Long> used = new HashSet<>();
                // Early rounds insert mostly, so the table grows through several resizes.
                double insertShare = round < 10 ? 0.7 : 0.2;
                while (batch.size() < n) {
                    long k = random.nextInt(keySpace);
                    if (!used.add(k)) {
                        continue;
                    }
                    OpKind kind = random.nextDouble() < insertShare ? OpKind.INSERT : kinds[random.nextInt(kinds.length)];
                    batch.add(kind, key(k, keySize), kind.hasValue() ? value(k, ++version) : null);
                }
                cpu.execute(batch, rc);
                gpu.execute(batch, rg);
                for (int i = 0; i < n; i++) {
                    String what = "round " + round + " op " + i + " " + batch.kind(i);
                    assertEquals(rc.outcome(i), rg.outcome(i), what);
                    if (rc.outcome(i) == Outcome.FOUND || rc.outcome(i) == Outcome.REPLACED) {
                        assertArrayEquals(rc.value(i), rg.value(i), what + ": value");
                    }
                }
                assertEquals(cpu.stats().size(), gpu.stats().size(), "round " + round + ": item count");
            }
            // Same contents: every key of the key space, read through both.
            Batch all = Batch.create(keySize, GpuTestSupport.VALUE_SIZE, keySpace);
            for (long k = 0; k < keySpace; k++) {
                all.add(OpKind.GET, key(k, keySize), null);
            }
            cpu.execute(all, rc);
            gpu.execute(all, rg);
            for (int i = 0; i < keySpace; i++) {
                assertEquals(rc.outcome(i), rg.outcome(i), "key " + i);
                if (rc.outcome(i) == Outcome.FOUND) {
                    assertArrayEquals(rc.value(i), rg.value(i), "key " + i);
                }
            }
            assertTrue(gpu.stats().resizes() > 0, "the stream made the GPU engine resize: " + gpu.stats());
            VerifyReport report = gpu.verify();
            assertTrue(report.sound(), "GPU-written pool verified by the CPU: " + report);
            assertEquals(cpu.stats().size(), report.items());
        }
    }
}
