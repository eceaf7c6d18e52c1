package org.gphash.cuda;

import static org.gphash.cuda.GpuTestSupport.key;
import static org.gphash.cuda.GpuTestSupport.value;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLongArray;

import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.GPHashIndex;
import org.gphash.GpuTuning;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.spi.SubmittedBatch;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Small batches of gets run outside the GPU engine's lock, alongside each other ({@link org.gphash.cuda.pipeline.SmallReads}'
 * slots), and gets read on the host from the mapped pool ({@link GpuEngine#getAlongside}), while
 * other threads write under the lock, grow the pool past a resize and verify it. Every
 * value a reader gets must be whole (its checksum holds), be its key's, and never be older than one
 * the same reader saw before for that key (a get runs wholly between two writing batches); in the
 * end every key holds its last write, and gets were really in flight together.
 */
class ConcurrentGetsTest {

    private static final int KEYS = 4096;
    private static final int READERS = 8;

    @BeforeEach
    void gpu() {
        GpuTestSupport.assumeGpu();
    }

    @Test
    @Timeout(300)
    void getsAlongsideWritersSeeWholeValuesInOrder() throws Exception {
        int vs = GpuTestSupport.VALUE_SIZE;
        try (GpuTestSupport t = GpuTestSupport.create();
             // Every batch on the GPU (hostBatchesMax=0): these gets are the GPU's, side by side without the lock.
             GpuEngine gpu = GpuEngines.create(GPHashIndex.builder(t.pool("gpu")).backend(Backend.GPU).keySize(8)
                     .valueSize(GpuTestSupport.VALUE_SIZE).levels(2).hashes(2).slotsPerBucket(8).initialCapacity(2 * KEYS)
                     .seed(3).gpuTuning(GpuTuning.DEFAULTS.with("hostBatchesMax=0")).config())) {
            org.junit.jupiter.api.Assumptions.assumeTrue(gpu.usesIndexMirror(), "gets run outside the lock on the index mirror only");
            // Versions written so far per key (the writer of a key is the only one: key % 2 picks it).
            AtomicLongArray written = new AtomicLongArray(KEYS);
            Batch load = Batch.create(8, vs, KEYS);
            for (int k = 0; k < KEYS; k++) {
                load.add(OpKind.PUT, key(k, 8), value(k, 1));
                written.set(k, 1);
            }
            gpu.execute(load, new BatchResult(vs, KEYS));
            AtomicBoolean stop = new AtomicBoolean();
            ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
            List<Thread> threads = new ArrayList<>();
            for (int w = 0; w < 2; w++) {
                int writer = w;
                threads.add(Thread.ofPlatform().start(() -> guard(failures, () -> {
                    SplittableRandom r = new SplittableRandom(writer);
                    for (int round = 0; round < 300; round++) {
                        Batch b = Batch.create(8, vs, 16);
                        java.util.Set<Integer> used = new java.util.HashSet<>();
                        int n = 1 + r.nextInt(16);
                        for (int i = 0; i < n; i++) {
                            int k = 2 * r.nextInt(KEYS / 2) + writer;
                            if (used.add(k)) {
                                b.add(OpKind.PUT, key(k, 8), value(k, written.get(k) + 1));
                            }
                        }
                        gpu.execute(b, new BatchResult(vs, b.size()));
                        for (int k : used) {
                            written.incrementAndGet(k);
                        }
                    }
                    // New keys, past the initial capacity: the pool resizes while gets run.
                    for (int k = KEYS + writer; k < 4 * KEYS; k += 2) {
                        MemorySegment v = MemorySegment.ofArray(value(k, 1));
                        assertEquals(Outcome.INSERTED, gpu.put(MemorySegment.ofArray(key(k, 8)), v), "put " + k);
                    }
                })));
            }
            threads.add(Thread.ofPlatform().start(() -> guard(failures, () -> {
                while (!stop.get()) {
                    assertTrue(gpu.diagnostics().verify().sound(), "verify between gets");
                    Thread.sleep(20);
                }
            })));
            List<Thread> readers = new ArrayList<>();
            for (int id = 0; id < READERS; id++) {
                int reader = id;
                readers.add(Thread.ofPlatform().start(() -> guard(failures, () -> {
                    SplittableRandom r = new SplittableRandom(100 + reader);
                    long[] seen = new long[KEYS];
                    byte[] out = new byte[vs];
                    for (int i = 0; i < 3000; i++) {
                        int what = r.nextInt(4);
                        if (what != 0) {
                            int k = r.nextInt(KEYS);
                            MemorySegment kk = MemorySegment.ofArray(key(k, 8));
                            // 1: a host read of the mapped pool between batches; else a GPU batch of one
                            Outcome o = what == 1 ? gpu.getAlongside(kk, MemorySegment.ofArray(out)) : null;
                            if (o == null) {  // (or a host read found a batch running)
                                o = gpu.get(kk, MemorySegment.ofArray(out));
                            }
                            assertEquals(Outcome.FOUND, o, "get " + k);
                            seen[k] = check(k, out, seen[k]);
                            continue;
                        }
                        int n = 1 + r.nextInt(64);
                        Batch b = Batch.create(8, vs, n);
                        int[] ks = new int[n];
                        for (int j = 0; j < n; j++) {
                            ks[j] = r.nextInt(KEYS);
                            b.add(OpKind.GET, key(ks[j], 8), null);
                        }
                        BatchResult res = new BatchResult(vs, n);
                        if (r.nextBoolean()) {
                            gpu.execute(b, res);
                        } else {
                            SubmittedBatch s = gpu.submit(b, res);
                            s.await();
                            s.await();  // again: harmless
                        }
                        for (int j = 0; j < n; j++) {
                            assertEquals(Outcome.FOUND, res.outcome(j), "batch get " + ks[j]);
                            seen[ks[j]] = check(ks[j], res.value(j), seen[ks[j]]);
                        }
                    }
                })));
            }
            for (Thread th : readers) {
                th.join();
            }
            stop.set(true);
            for (Thread th : threads) {
                th.join();
            }
            if (!failures.isEmpty()) {
                AssertionError e = new AssertionError(failures.size() + " thread(s) failed; the first: " + failures.peek(), failures.peek());
                throw e;
            }
            for (int k = 0; k < 4 * KEYS; k++) {
                byte[] out = new byte[vs];
                assertEquals(Outcome.FOUND, gpu.get(MemorySegment.ofArray(key(k, 8)), MemorySegment.ofArray(out)), "final get " + k);
                assertArrayEquals(value(k, k < KEYS ? written.get(k) : 1), out, "key " + k + " holds its last write");
            }
            assertTrue(gpu.diagnostics().smallReadsMostInFlight() > 1, "gets were in flight together: " + gpu.diagnostics().smallReadsMostInFlight());
            assertTrue(gpu.diagnostics().hostReads() > 100, "gets were read on the host: " + gpu.diagnostics().hostReads());
            assertTrue(gpu.diagnostics().verify().sound());
        }
    }

    /** Checks a value read for key {@code k}: whole, its key's, not older than {@code seen}; returns its version. */
    private static long check(int k, byte[] v, long seen) {
        assertTrue(GpuTestSupport.whole(v), "a whole value for key " + k);
        assertEquals(k, GpuTestSupport.keyOf(v), "the value of key " + k);
        long version = GpuTestSupport.versionOf(v);
        assertTrue(version >= seen, "key " + k + ": version " + version + " after " + seen + " was seen");
        return version;
    }

    private interface Body {
        void run() throws Exception;
    }

    private static void guard(ConcurrentLinkedQueue<Throwable> failures, Body body) {
        try {
            body.run();
        } catch (Throwable e) {
            failures.add(e);
        }
    }
}
