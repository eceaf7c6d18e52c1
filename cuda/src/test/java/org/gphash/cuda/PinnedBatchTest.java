package org.gphash.cuda;

import static org.gphash.cuda.GpuTestSupport.key;
import static org.gphash.cuda.GpuTestSupport.value;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Random;
import java.util.Set;

import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.OpKind;
import org.gphash.cuda.staging.BatchPinning;
import org.gphash.index.CpuEngine;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A batch and a result that are run again get their own memory pinned, and from then on their chunks
 * go to the GPU and back with no staging copy ({@link BatchPinning}): the results stay the CPU
 * engine's, for batches of several chunks and through resizes that rerun operations.
 */
class PinnedBatchTest {

    @BeforeEach
    void gpu() {
        GpuTestSupport.assumeGpu();
    }

    @Test
    void reusedBatchesArePinnedAndGiveTheCpuEnginesResults() {
        int vs = GpuTestSupport.VALUE_SIZE;
        int n = 150_000;  // two chunks of 75,000 (HostBatches.hostChunk)
        try (GpuTestSupport t = GpuTestSupport.create();
             CpuEngine cpu = CpuEngine.create(GpuTestSupport.config(t.pool("cpu"), Backend.CPU, 8, 2, 2, 8, 10_000, 7));
             GpuEngine gpu = GpuEngines.create(GpuTestSupport.config(t.pool("gpu"), Backend.GPU, 8, 2, 2, 8, 10_000, 7))) {
            Batch batch = Batch.create(8, vs, n);
            BatchResult expected = new BatchResult(vs, n);
            BatchResult actual = new BatchResult(vs, n);
            Random random = new Random(7);
            long version = 0;
            for (int round = 0; round < 5; round++) {
                batch.clear();
                Set<Long> used = new HashSet<>();
                while (batch.size() < n) {
                    long k = random.nextInt(400_000);
                    if (used.add(k)) {  // distinct keys: the pool path (no mirror) does not order one key's operations
                        OpKind kind = GpuTestSupport.PLAIN_KINDS[random.nextInt(GpuTestSupport.PLAIN_KINDS.length)];
                        batch.add(kind, key(k, 8), kind.hasValue() ? value(k, ++version) : null);
                    }
                }
                cpu.execute(batch, expected);
                gpu.execute(batch, actual);
                GpuTestSupport.assertSameResults(batch, expected, actual, "round " + round);
                if (round == 0) {
                    assertFalse(batch.memory().pinned(), "pinned on its first run");
                }
            }
            if (gpu.usesIndexMirror()) {  // the pool path (-Dgphash.indexMirror=OFF) stages every batch
                assertTrue(batch.memory().pinned(), "a batch run five times is pinned");
                assertTrue(actual.memory().pinned(), "a result filled five times is pinned");
            }
            assertEquals(cpu.stats().size(), gpu.stats().size());
        }
    }

    /**
     * Issue 25: a batch whose run moves {@link BatchPinning#PIN_AT_ONCE_BYTES} or more (puts: their
     * values) is pinned on its first run; one as large that moves only kinds and keys (gets) waits for
     * its second run, and its result (which gets fill with values) is pinned on its first.
     */
    @Test
    void aBatchThatMovesMuchIsPinnedOnItsFirstRun() {
        int vs = GpuTestSupport.VALUE_SIZE;
        // Enough operations that their results (a code and a value each) move the threshold.
        int n = (int) (BatchPinning.PIN_AT_ONCE_BYTES / (1 + vs)) + 4096;
        try (GpuTestSupport t = GpuTestSupport.create();
             GpuEngine gpu = GpuEngines.create(GpuTestSupport.config(t.pool("large"), Backend.GPU, 8, 2, 2, 8, 4 * n, 9))) {
            org.junit.jupiter.api.Assumptions.assumeTrue(gpu.usesIndexMirror(), "the pool path stages every batch");
            Batch puts = Batch.create(8, vs, n);
            Batch gets = Batch.create(8, vs, n);
            for (int i = 0; i < n; i++) {
                puts.add(OpKind.PUT, key(i, 8), value(i, 1));
                gets.add(OpKind.GET, key(i, 8), null);
            }
            assertTrue(9L * n < BatchPinning.PIN_AT_ONCE_BYTES, "the gets' kinds and keys should move less than the threshold");
            BatchResult result = new BatchResult(vs, n);
            gpu.execute(puts, result);
            assertTrue(puts.memory().pinned(), "a batch of puts that moves its values was staged on its first run");
            BatchResult read = new BatchResult(vs, n);
            gpu.execute(gets, read);
            assertFalse(gets.memory().pinned(), "a batch of gets, which moves only kinds and keys, was pinned at once");
            assertTrue(read.memory().pinned(), "the result of the gets, which they fill with values, was staged");
            // Every chunk of the puts, pinned on its first run, arrived.
            for (int i = 0; i < n; i++) {
                assertEquals(org.gphash.Outcome.FOUND, read.outcome(i), "key " + i);
                assertArrayEquals(value(i, 1), read.value(i), "key " + i);
            }
            gpu.execute(gets, read);
            assertTrue(gets.memory().pinned(), "the batch of gets was not pinned on its second run");
            assertArrayEquals(value(n - 1, 1), read.value(n - 1));
            // Its second run uses the block pinned whole by the first.
            puts.clear();
            for (int i = 0; i < n; i++) {
                puts.add(OpKind.PUT, key(i, 8), value(i, 2));
            }
            gpu.execute(puts, result);
            gpu.execute(gets, read);
            for (int i = 0; i < n; i += 997) {
                assertArrayEquals(value(i, 2), read.value(i), "key " + i + " after the second run of the puts");
            }
            assertArrayEquals(value(n - 1, 2), read.value(n - 1));
        }
    }
}
