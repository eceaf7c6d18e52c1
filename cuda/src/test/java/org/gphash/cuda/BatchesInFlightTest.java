package org.gphash.cuda;

import static org.gphash.cuda.GpuTestSupport.key;
import static org.gphash.cuda.GpuTestSupport.value;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;

import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.index.CpuEngine;
import org.gphash.spi.Engine;
import org.gphash.table.VerifyReport;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Host batches of several threads in flight on the GPU at once ({@link org.gphash.cuda.pipeline.MirrorPath#start}: queued
 * under the engine's lock, waited for outside it, harvested by whichever thread needs the lane):
 * every thread's results match the CPU engine's on the same batches (each thread has keys of its
 * own, so its results do not depend on how the threads interleave), through batches of one and two
 * chunks, while inserts grow the heap and resize the table under the others' chunks (whose
 * operations that found their buckets full run again after the resize). In the end both engines
 * hold the same items, the GPU-written pool verifies, and batches really were in flight together.
 */
class BatchesInFlightTest {

    private static final int THREADS = 6;
    private static final int ROUNDS = 12;
    /** Rounds of reads per thread at most, where no batches overlapped (readUntilBatchesOverlap). */
    private static final int OVERLAP_ROUNDS = 20;
    /** Keys per thread: thread t owns keys t, t + THREADS, t + 2 * THREADS, ... */
    private static final int KEYS_PER_THREAD = 200_000;
    /**
     * One launch (a writing batch within GpuTuning.smallWritesMax), two chunks (HostBatches.hostChunk:
     * 2^16 and the rest), two (of 70,000), and one chunk.
     */
    private static final int[] SIZES = {2_000, 70_000, 140_000, 30_000};

    @BeforeEach
    void gpu() {
        GpuTestSupport.assumeGpu();
    }

    @Test
    @Timeout(600)
    void threadsBatchesInFlightTogetherGetTheCpuEnginesResults() throws Exception {
        long seed = 20261126L;
        try (GpuTestSupport t = GpuTestSupport.create();
             Engine cpu = CpuEngine.create(GpuTestSupport.config(t.pool("cpu"), Backend.CPU, 8, 2, 2, 8, 50_000, seed));
             GpuEngine gpu = GpuEngines.create(GpuTestSupport.config(t.pool("gpu"), Backend.GPU, 8, 2, 2, 8, 50_000, seed))) {
            ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
            List<Thread> threads = new ArrayList<>();
            for (int th = 0; th < THREADS; th++) {
                int self = th;
                threads.add(Thread.ofPlatform().start(() -> {
                    try {
                        runThread(self, seed + self, cpu, gpu);
                    } catch (Throwable e) {
                        failures.add(e);
                    }
                }));
            }
            for (Thread th : threads) {
                th.join();
            }
            if (!failures.isEmpty()) {
                Throwable first = failures.peek();
                failures.stream().skip(1).forEach(first::addSuppressed);
                throw new AssertionError("a thread failed", first);
            }
            int keys = THREADS * KEYS_PER_THREAD;
            Batch all = Batch.create(8, GpuTestSupport.VALUE_SIZE, keys);
            for (long k = 0; k < keys; k++) {
                all.add(OpKind.GET, key(k, 8), null);
            }
            BatchResult rc = new BatchResult(GpuTestSupport.VALUE_SIZE, keys);
            BatchResult rg = new BatchResult(GpuTestSupport.VALUE_SIZE, keys);
            cpu.execute(all, rc);
            gpu.execute(all, rg);
            for (int i = 0; i < keys; i++) {
                assertEquals(rc.outcome(i), rg.outcome(i), "key " + i);
                if (rc.outcome(i) == Outcome.FOUND) {
                    assertArrayEquals(rc.value(i), rg.value(i), "key " + i);
                }
            }
            assertEquals(cpu.stats().size(), gpu.stats().size(), "items");
            assertTrue(gpu.stats().resizes() > 0, "the inserts resized the table: " + gpu.stats());
            VerifyReport report = gpu.diagnostics().verify();
            assertTrue(report.sound(), "GPU-written pool verified by the CPU: " + report);
            if (gpu.usesIndexMirror()) {
                readUntilBatchesOverlap(gpu);
                assertTrue(gpu.diagnostics().mostBatchesInFlight() >= 2, "batches of several threads were on the GPU at once: "
                        + gpu.diagnostics().mostBatchesInFlight());
            }
            System.out.printf("batches in flight: at most %d at once; %s%n", gpu.diagnostics().mostBatchesInFlight(), gpu.stats());
        }
    }

    /**
     * Whether batches overlap above depends on timing: the inserts' resizes and heap growths drain
     * every lane, and one run in four saw no two threads' batches on the GPU at once. Where none
     * overlapped yet, the threads read batches of their keys (which neither resize nor grow) until two
     * do, for at most {@link #OVERLAP_ROUNDS} rounds each; an engine that never overlaps still fails.
     */
    private static void readUntilBatchesOverlap(GpuEngine gpu) throws InterruptedException {
        List<Thread> readers = new ArrayList<>();
        for (int th = 0; th < THREADS; th++) {
            int self = th;
            readers.add(Thread.ofPlatform().start(() -> {
                int n = SIZES[1];
                Batch gets = Batch.create(8, GpuTestSupport.VALUE_SIZE, n);
                for (int j = 0; j < n; j++) {
                    gets.add(OpKind.GET, key(self + (long) THREADS * j, 8), null);
                }
                BatchResult r = new BatchResult(GpuTestSupport.VALUE_SIZE, n);
                for (int round = 0; round < OVERLAP_ROUNDS && gpu.diagnostics().mostBatchesInFlight() < 2; round++) {
                    gpu.execute(gets, r);
                }
            }));
        }
        for (Thread th : readers) {
            th.join();
        }
    }

    /** One thread's rounds: the same batch through the GPU engine and the CPU engine, results compared. */
    private static void runThread(int self, long seed, Engine cpu, GpuEngine gpu) {
        SplittableRandom random = new SplittableRandom(seed);
        long version = 0;
        int most = SIZES[2];
        BatchResult rc = new BatchResult(GpuTestSupport.VALUE_SIZE, most);
        BatchResult rg = new BatchResult(GpuTestSupport.VALUE_SIZE, most);
        for (int round = 0; round < ROUNDS; round++) {
            int n = SIZES[(round + self) % SIZES.length];
            Batch batch = Batch.create(8, GpuTestSupport.VALUE_SIZE, n);
            Set<Integer> used = new HashSet<>();
            // The first rounds mostly insert: the table resizes and the heap grows under other chunks.
            double insertShare = round < 4 ? 0.8 : 0.2;
            while (batch.size() < n) {
                int j = random.nextInt(KEYS_PER_THREAD);
                if (!used.add(j)) {
                    continue;
                }
                long k = self + (long) THREADS * j;
                OpKind kind = random.nextDouble() < insertShare ? OpKind.INSERT
                        : GpuTestSupport.PLAIN_KINDS[random.nextInt(GpuTestSupport.PLAIN_KINDS.length)];
                batch.add(kind, key(k, 8), kind.hasValue() ? value(k, ++version) : null);
            }
            gpu.execute(batch, rg);
            cpu.execute(batch, rc);
            GpuTestSupport.assertSameResults(batch, rc, rg, "thread " + self + " round " + round);
        }
    }
}
