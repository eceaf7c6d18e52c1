package org.gphash.cuda;

import static org.gphash.cuda.GpuTestSupport.key;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.Coalescing;
import org.gphash.GPHashIndex;
import org.gphash.GpuTuning;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Batches of values of any length from several threads at once through the packed route
 * ({@code PackedValueBatches}): each batch's last chunk is copied back by its own thread after the
 * engine's lock, from one of a few result slots on the GPU, while other threads' batches run in the
 * others; batches of more operations than a chunk holds (a value size of 4 KiB makes chunks of 65,536)
 * copy their earlier chunks back under the lock. Every thread works on keys of its own, so its outcomes
 * and the values it reads are those of its own model run in order; every value is checked at its
 * length, then every key on the CPU backend after the close. The host route is off
 * ({@code hostBatchesMax=0}) and so is the coalescer, so that every batch takes the packed route.
 */
class PackedBatchesFromManyThreadsOnGpuTest {

    private static final int VS = 4_096;
    private static final int THREADS = 6;
    private static final int KEYS_PER_THREAD = 30_000;

    @BeforeEach
    void gpu() {
        GpuTestSupport.assumeGpu();
    }

    /** Mostly short values, now and then one up to the value size, and empty ones. */
    private static byte[] value(Random r) {
        int pick = r.nextInt(20);
        int length = pick == 0 ? 0 : pick == 1 ? r.nextInt(VS + 1) : r.nextInt(300);
        byte[] v = new byte[length];
        r.nextBytes(v);
        return v;
    }

    @Test
    void threadsBatchesOfAnyLengthAgreeWithTheirOwnModels() throws Exception {
        try (GpuTestSupport t = GpuTestSupport.create()) {
            Path p = t.pool("packed-threads");
            List<Map<Long, byte[]>> models = new ArrayList<>();
            try (GPHashIndex index = GPHashIndex.builder(p).backend(Backend.GPU).keySize(8).valueSize(VS).poolFormat(3)
                    .initialCapacity(20_000).seed(5).coalescing(Coalescing.OFF)
                    .gpuTuning(GpuTuning.DEFAULTS.with("hostBatchesMax=0")).create()) {
                assertTrue(index.valueLengths(), "a format 3 pool on the GPU backend takes values of any length");
                ExecutorService pool = Executors.newFixedThreadPool(THREADS);
                List<Future<?>> done = new ArrayList<>();
                for (int th = 0; th < THREADS; th++) {
                    Map<Long, byte[]> model = new HashMap<>();
                    models.add(model);
                    long base = (long) th * KEYS_PER_THREAD;
                    Random r = new Random(7_000 + th);
                    done.add(pool.submit(() -> {
                        for (int round = 0; round < 12; round++) {
                            // Now and then more operations than a chunk: its earlier chunks come back under the lock.
                            int n = round % 4 == 3 ? 66_000 + r.nextInt(14_000) : 1 + r.nextInt(6_000);
                            runBatch(index, model, r, base, n, round);
                        }
                        return null;
                    }));
                }
                pool.shutdown();
                for (Future<?> f : done) {
                    f.get(5, TimeUnit.MINUTES);  // a thread's failure, with its message
                }
            }
            try (GPHashIndex cpu = GPHashIndex.builder(p).backend(Backend.CPU).open()) {
                int size = 0;
                for (Map<Long, byte[]> model : models) {
                    size += model.size();
                    for (Map.Entry<Long, byte[]> e : model.entrySet()) {
                        assertArrayEquals(e.getValue(), cpu.get(e.getKey()), "key " + e.getKey() + " on the CPU backend");
                    }
                }
                assertEquals(size, cpu.size());
            }
        }
    }

    /** A batch of {@code n} plain operations on keys {@code base..}, its outcomes and values checked against {@code model} run in order. */
    private static void runBatch(GPHashIndex index, Map<Long, byte[]> model, Random r, long base, int n, int round) {
        OpKind[] kinds = {OpKind.GET, OpKind.PUT, OpKind.INSERT, OpKind.UPDATE, OpKind.DELETE, OpKind.READ_MODIFY_WRITE};
        Batch batch = index.newBatch(n);
        Outcome[] want = new Outcome[n];
        byte[][] wantValue = new byte[n][];
        for (int i = 0; i < n; i++) {
            long k = base + r.nextInt(KEYS_PER_THREAD);
            // Gets half the time: most of the copies back are of values read.
            OpKind kind = r.nextBoolean() ? OpKind.GET : kinds[r.nextInt(kinds.length)];
            byte[] v = value(r);
            batch.add(kind, key(k, 8), kind.hasValue() ? v : null);
            PlainOperationModel.apply(model, kind, k, v, want, wantValue, i);
        }
        PlainOperationModel.check(batch, index.execute(batch), want, wantValue, "base " + base + ", round " + round);
    }
}
