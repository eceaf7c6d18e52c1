package org.gphash.index.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.GPHashIndex;
import org.gphash.IndexStats;
import org.gphash.Outcome;
import org.gphash.RecoveryReport;
import org.gphash.spi.CrashHook;
import org.gphash.spi.CrashPoint;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Many threads on one index. Every value written carries (key, writer thread, writer sequence)
 * and a checksum, so any value read back can be proven to be one that was really written for that
 * key; each thread also records, per key, the last operation of its own that changed the key. Under
 * linearizable single-key operations the final state of a key is then the last effective operation
 * of <em>some</em> thread on it, which is checked exactly.
 */
class ConcurrencyTest {

    static final int VALUE_SIZE = 128;

    private final TestPools pools = TestPools.create();
    private final ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();

    /** Indexes to close even when a test fails half-way (close is idempotent). */
    private final List<GPHashIndex> opened = new ArrayList<>();

    @AfterEach
    void cleanUp() {
        try {
            opened.forEach(GPHashIndex::close);
        } finally {
            pools.close();
        }
    }

    private GPHashIndex track(GPHashIndex index) {
        opened.add(index);
        return index;
    }

    // ------------------------------------------------------------------ self-verifying values

    /** What a value says about itself. */
    record Stamp(long key, int thread, long seq) {
    }

    /**
     * 128 bytes: key (8), thread (4), sequence (8), filler derived from those three (100), and a
     * 64-bit checksum of the first 120 bytes.
     */
    static byte[] encode(long key, int thread, long seq) {
        byte[] v = new byte[VALUE_SIZE];
        putLong(v, 0, key);
        putInt(v, 8, thread);
        putLong(v, 12, seq);
        long s = key * 0x9E3779B97F4A7C15L ^ (long) thread << 40 ^ seq * 0xC2B2AE3D27D4EB4FL;
        for (int i = 20; i < 120; i++) {
            if ((i & 7) == 4) {
                s = ModelProperties.mix(s + i);
            }
            v[i] = (byte) (s >>> (8 * (i & 7)));
        }
        putLong(v, 120, checksum(v));
        return v;
    }

    static long checksum(byte[] v) {
        long h = 0x84222325CBF29CE4L;
        for (int i = 0; i < 120; i++) {
            h = (h ^ (v[i] & 0xFF)) * 0x100000001B3L;
        }
        return ModelProperties.mix(h);
    }

    /** Decodes and fully checks a value read for {@code key}; throws AssertionError for anything not written by us. */
    static Stamp verify(byte[] v, long key, int threads) {
        assertNotNull(v);
        assertEquals(VALUE_SIZE, v.length);
        long storedSum = getLong(v, 120);
        if (storedSum != checksum(v)) {
            fail("torn or foreign value for key " + key + ": checksum mismatch");
        }
        long k = getLong(v, 0);
        int t = getInt(v, 8);
        long seq = getLong(v, 12);
        assertEquals(key, k, "value read for key " + key + " belongs to key " + k);
        assertTrue(t >= 0 && t <= threads, "value names writer thread " + t);
        assertTrue(seq >= 1, "value names sequence " + seq);
        byte[] expected = encode(k, t, seq);
        if (!java.util.Arrays.equals(expected, v)) {
            fail("value for key " + key + " has a valid checksum but was never written");
        }
        return new Stamp(k, t, seq);
    }

    private static java.nio.ByteBuffer le(byte[] b) {
        return java.nio.ByteBuffer.wrap(b).order(java.nio.ByteOrder.LITTLE_ENDIAN);
    }

    static void putLong(byte[] b, int at, long x) {
        le(b).putLong(at, x);
    }

    static long getLong(byte[] b, int at) {
        return le(b).getLong(at);
    }

    static void putInt(byte[] b, int at, int x) {
        le(b).putInt(at, x);
    }

    static int getInt(byte[] b, int at) {
        return le(b).getInt(at);
    }

    // ------------------------------------------------------------------ (a) mixed operations

    static final byte NONE = 0;
    static final byte WROTE = 1;
    static final byte DELETED = 2;

    /** One worker's view: its sequence, and its last effective operation per key. */
    static final class Worker {
        final int id;
        final byte[] lastKind;
        final long[] lastSeq;
        final long[] creates;
        final long[] deletes;
        long seq;
        long ops;

        Worker(int id, int keys) {
            this.id = id;
            this.lastKind = new byte[keys];
            this.lastSeq = new long[keys];
            this.creates = new long[keys];
            this.deletes = new long[keys];
        }

        void wrote(int key, long s, boolean created) {
            lastKind[key] = WROTE;
            lastSeq[key] = s;
            if (created) {
                creates[key]++;
            }
        }

        void deleted(int key) {
            lastKind[key] = DELETED;
            deletes[key]++;
        }
    }

    @Test
    @Timeout(120)
    void mixedOperationsOnOverlappingKeysDuringResizesAndHeapGrowth() throws Exception {
        final int threads = 6;
        final int keys = 2000;
        final long runNanos = TimeUnit.MILLISECONDS.toNanos(3000);
        Path path = pools.pool("mixed.pool");
        GPHashIndex index = track(GPHashIndex.builder(path).initialCapacity(64).seed(11).create());
        IndexStats before = index.stats();
        // Highest sequence each thread has started writing: a value read can never be newer.
        AtomicLongArray progress = new AtomicLongArray(threads);
        Worker[] workers = new Worker[threads];
        for (int t = 0; t < threads; t++) {
            workers[t] = new Worker(t, keys);
        }
        CyclicBarrier start = new CyclicBarrier(threads);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<?>> futures = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Worker w = workers[t];
            futures.add(pool.submit(() -> {
                try {
                    SplittableRandom rnd = new SplittableRandom(1000 + w.id);
                    start.await();
                    long deadline = System.nanoTime() + runNanos;
                    while (System.nanoTime() < deadline) {
                        for (int i = 0; i < 64; i++) {
                            mixedStep(index, w, rnd, keys, threads, progress);
                        }
                    }
                } catch (Throwable e) {
                    failures.add(e);
                }
            }));
        }
        pool.shutdown();
        try {
            for (Future<?> f : futures) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        rethrowFailures();

        IndexStats after = index.stats();
        long totalOps = 0;
        for (Worker w : workers) {
            totalOps += w.ops;
        }
        System.out.println("mixed: " + totalOps + " operations; " + after);
        assertTrue(after.resizes() > before.resizes(), "the run must resize the table: " + after);
        assertTrue(after.heapGrowths() > 0, "the run must grow the value heap: " + after);

        // Final state of every key: the last effective operation of some thread.
        byte[][] finalValues = new byte[keys][];
        long found = 0;
        long creates = 0;
        long deletes = 0;
        List<String> countMismatches = new ArrayList<>();
        for (int k = 0; k < keys; k++) {
            byte[] v = index.get((long) k);
            finalValues[k] = v;
            long c = 0;
            long d = 0;
            for (Worker w : workers) {
                c += w.creates[k];
                d += w.deletes[k];
            }
            creates += c;
            deletes += d;
            if (v != null) {
                found++;
                Stamp s = verify(v, k, threads);
                Worker w = workers[s.thread()];
                assertEquals(WROTE, w.lastKind[k], "key " + k + " holds a value of thread " + s.thread()
                        + " whose last effective operation on it was not a write");
                assertEquals(w.lastSeq[k], s.seq(), "key " + k + " holds write " + s.seq() + " of thread " + s.thread()
                        + ", which is not that thread's last effective write to it");
            } else {
                boolean someDelete = false;
                for (Worker w : workers) {
                    someDelete |= w.lastKind[k] == DELETED;
                }
                boolean anyEffect = false;
                for (Worker w : workers) {
                    anyEffect |= w.lastKind[k] != NONE;
                }
                assertTrue(someDelete || !anyEffect, "key " + k + " is absent but no thread's last effective operation on it was a delete");
            }
            // Under strict linearizability creates - deletes = presence. Racing inserts of one key may
            // both return true (documented: docs/USAGE.md, docs/DESIGN.md), so this is reported, not asserted.
            if (c - d != (v != null ? 1 : 0)) {
                countMismatches.add("key " + k + ": " + c + " creating operations, " + d + " deletes, present=" + (v != null));
            }
        }
        System.out.println("mixed: creating operations " + creates + ", deletes " + deletes + ", keys present " + found
                + "; keys whose create/delete count does not match: " + countMismatches.size()
                + (countMismatches.isEmpty() ? "" : " e.g. " + countMismatches.subList(0, Math.min(5, countMismatches.size()))));
        assertEquals(found, index.stats().size(), "stats().size() counts exactly the keys that are found");

        // No leak of value blocks once every operation is done.
        assertNoValueBlockLeaked(index);

        // One item per key on the media: recovery finds nothing to repair and the same content.
        index.close();
        try (GPHashIndex reopened = GPHashIndex.builder(path).open()) {
            RecoveryReport r = reopened.lastRecovery();
            assertEquals(0, r.duplicatesRemoved(), r.toString());
            assertEquals(0, r.insertSlotsCleared(), r.toString());
            assertEquals(0, r.tornSlotsCleared(), r.toString());
            assertFalse(r.repairedAnything(), r.toString());
            assertEquals(found, r.items(), r.toString());
            assertEquals(found, r.valueBlocksInUse(), r.toString());
            for (int k = 0; k < keys; k++) {
                byte[] v = reopened.get((long) k);
                if (finalValues[k] == null) {
                    assertTrue(v == null, "key " + k + " reappeared after reopen");
                } else {
                    assertTrue(java.util.Arrays.equals(finalValues[k], v), "key " + k + " changed across close/reopen");
                }
            }
        }
    }

    private void mixedStep(GPHashIndex index, Worker w, SplittableRandom rnd, int keys, int threads, AtomicLongArray progress) {
        int key = rnd.nextInt(4) == 0 ? rnd.nextInt(64) : rnd.nextInt(keys);
        int dice = rnd.nextInt(100);
        w.ops++;
        if (dice < 30) {
            byte[] v = index.get((long) key);
            if (v != null) {
                Stamp s = verify(v, key, threads);
                assertTrue(s.seq() <= progress.get(s.thread()),
                        "read write " + s.seq() + " of thread " + s.thread() + " before it was issued");
            }
        } else if (dice < 50) {
            long s = next(w, progress);
            boolean created = index.put((long) key, encode(key, w.id, s));
            w.wrote(key, s, created);
        } else if (dice < 63) {
            long s = next(w, progress);
            if (index.insert((long) key, encode(key, w.id, s))) {
                w.wrote(key, s, true);
            }
        } else if (dice < 78) {
            long s = next(w, progress);
            if (index.update((long) key, encode(key, w.id, s))) {
                w.wrote(key, s, false);
            }
        } else if (dice < 95) {
            if (index.delete((long) key)) {
                w.deleted(key);
            }
        } else {
            // A small batch: several operations on one key and one on another, effects applied in order.
            int other = rnd.nextInt(keys);
            Batch b = index.newBatch(4);
            long s1 = next(w, progress);
            long s2 = next(w, progress);
            b.put((long) key, encode(key, w.id, s1));
            b.get((long) key);
            b.update((long) key, encode(key, w.id, s2));
            b.delete((long) other);
            BatchResult r = index.execute(b);
            Outcome o0 = r.outcome(0);
            assertTrue(o0 == Outcome.INSERTED || o0 == Outcome.UPDATED, "batch put: " + o0);
            w.wrote(key, s1, o0 == Outcome.INSERTED);
            if (r.outcome(1) == Outcome.FOUND) {
                verify(r.value(1), key, threads);
            } else {
                assertEquals(Outcome.NOT_FOUND, r.outcome(1));
            }
            if (r.outcome(2) == Outcome.UPDATED) {
                w.wrote(key, s2, false);
            } else {
                assertEquals(Outcome.NOT_FOUND, r.outcome(2));
            }
            if (r.outcome(3) == Outcome.DELETED) {
                w.deleted(other);
            } else {
                assertEquals(Outcome.NOT_FOUND, r.outcome(3));
            }
        }
    }

    private static long next(Worker w, AtomicLongArray progress) {
        long s = ++w.seq;
        progress.set(w.id, s);
        return s;
    }

    // ------------------------------------------------------------------ (b) insert races

    @Test
    @Timeout(120)
    void racingInsertsOfTheSameFreshKeysLeaveExactlyOneItemPerKey() throws Exception {
        final int threads = 6;
        final int rounds = 250;
        final int perRound = 8;
        final int keys = rounds * perRound;
        Path path = pools.pool("race.pool");
        GPHashIndex index = track(GPHashIndex.builder(path).initialCapacity(64).seed(12).create());
        AtomicIntegerArray trues = new AtomicIntegerArray(keys);
        // won[key * threads + t]: thread t's insert of key returned true.
        AtomicIntegerArray won = new AtomicIntegerArray(keys * threads);
        CyclicBarrier barrier = new CyclicBarrier(threads);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<?>> futures = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            final int id = t;
            futures.add(pool.submit(() -> {
                try {
                    for (int round = 0; round < rounds; round++) {
                        barrier.await(30, TimeUnit.SECONDS);
                        for (int i = 0; i < perRound; i++) {
                            // Each thread starts at a different key of the round, so races happen at every key.
                            int key = round * perRound + (i + id) % perRound;
                            if (index.insert((long) key, encode(key, id, round + 1))) {
                                trues.incrementAndGet(key);
                                won.set(key * threads + id, 1);
                            }
                        }
                    }
                } catch (Throwable e) {
                    failures.add(e);
                    barrier.reset();
                }
            }));
        }
        pool.shutdown();
        try {
            for (Future<?> f : futures) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        rethrowFailures();
        assertTrue(index.stats().resizes() > 0, "the races must run across resizes: " + index.stats());

        int multiple = 0;
        for (int k = 0; k < keys; k++) {
            byte[] v = index.get((long) k);
            assertNotNull(v, "key " + k + " lost");
            Stamp s = verify(v, k, threads);
            assertEquals(k / perRound + 1, s.seq(), "key " + k + " holds a value of another round");
            assertTrue(trues.get(k) >= 1, "no insert of key " + k + " returned true");
            assertEquals(1, won.get(k * threads + s.thread()),
                    "key " + k + " holds the value of thread " + s.thread() + ", whose insert returned false");
            if (trues.get(k) > 1) {
                multiple++;
            }
        }
        System.out.println("race: " + keys + " keys, " + threads + " threads; keys where more than one insert returned true: "
                + multiple + "; " + index.stats());
        assertEquals(keys, index.stats().size(), "exactly one item per key");
        assertNoValueBlockLeaked(index);
        index.close();
        try (GPHashIndex reopened = GPHashIndex.builder(path).open()) {
            RecoveryReport r = reopened.lastRecovery();
            assertEquals(0, r.duplicatesRemoved(), r.toString());
            assertEquals(0, r.insertSlotsCleared(), r.toString());
            assertEquals(keys, r.items(), r.toString());
        }
    }

    // ------------------------------------------------------------------ (c) updates do not leak

    /**
     * 200 keys updated over and over by two threads: the live data never changes size, so once the
     * value heap has room for the items plus the blocks awaiting reclamation, the pool must not grow
     * again. Every update retires one value block; if retired blocks are not reclaimed promptly, the
     * heap keeps running dry and the file keeps growing (as it did before exclusive phases
     * reclaimed retired blocks first: 1.1 MB to 8.9 MB for these 200 items).
     */
    @Test
    @Timeout(180)
    void updateHeavyRunKeepsThePoolSizeAndLeaksNoValueBlocks() throws Exception {
        final int threads = 2;
        final int keys = 200;
        final int warmUpPerThread = 20_000;
        final int rounds = 5;
        final int updatesPerThreadPerRound = 100_000;
        Path path = pools.pool("updates.pool");
        // Every 5000th update stalls 2 ms while inside its operation, as a preempted thread would on
        // a loaded machine: reclamation must cope with an operation that holds an old epoch for a while.
        AtomicLong updates = new AtomicLong();
        CrashHook stall = point -> {
            if (point == CrashPoint.UPDATE_VALUE_PERSISTED && updates.incrementAndGet() % 5000 == 0) {
                LockSupport.parkNanos(2_000_000);
            }
        };
        GPHashIndex index = track(GPHashIndex.from(GPHashIndex.builder(path).initialCapacity(256).seed(13).config().withCrashHook(stall)).create());
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            for (int k = 0; k < keys; k++) {
                assertTrue(index.insert((long) k, encode(k, threads, 1)));
            }
            Worker[] workers = new Worker[threads];
            for (int t = 0; t < threads; t++) {
                workers[t] = new Worker(t, keys);
            }
            runUpdates(pool, index, workers, keys, warmUpPerThread);
            IndexStats warm = index.stats();
            System.out.println("updates: after warm-up " + warm);
            long maxPending = 0;
            for (int round = 0; round < rounds; round++) {
                runUpdates(pool, index, workers, keys, updatesPerThreadPerRound);
                IndexStats s = index.stats();
                maxPending = Math.max(maxPending, s.pendingReclamation());
                System.out.println("updates: after round " + round + " " + s);
            }
            IndexStats end = index.stats();

            assertEquals(keys, end.size());
            assertNoValueBlockLeaked(index);
            for (int k = 0; k < keys; k++) {
                Stamp s = verify(index.get((long) k), k, threads);
                assertTrue(s.thread() < threads, "key " + k + " was never updated");
                assertEquals(workers[s.thread()].lastSeq[k], s.seq(), "key " + k + " must hold the last update of one of the threads");
            }
            assertEquals(warm.fileBytes(), end.fileBytes(), "an update-only workload on " + keys
                    + " keys must not grow the pool file after warm-up; after warm-up: " + warm + "; at the end: " + end);
            assertEquals(warm.heapGrowths(), end.heapGrowths(), "updates must not grow the value heap after warm-up");
            // Retired blocks wait for at most a few epochs: with no stalled operation this stays at a
            // few limbo batches per thread (64 each), far below the item count times 20.
            assertTrue(maxPending <= 20L * keys, "blocks awaiting reclamation reached " + maxPending + " for " + keys
                    + " live items: retired value blocks are not being reclaimed");
        } finally {
            pool.shutdownNow();
            index.close();
        }
        try (GPHashIndex reopened = GPHashIndex.builder(path).open()) {
            RecoveryReport r = reopened.lastRecovery();
            assertEquals(keys, r.items(), r.toString());
            assertEquals(keys, r.valueBlocksInUse(), r.toString());
        }
    }

    private void runUpdates(ExecutorService pool, GPHashIndex index, Worker[] workers, int keys, int perThread)
            throws Exception {
        CyclicBarrier start = new CyclicBarrier(workers.length);
        List<Future<?>> futures = new ArrayList<>();
        for (Worker w : workers) {
            futures.add(pool.submit(() -> {
                try {
                    SplittableRandom rnd = new SplittableRandom(77 + w.id * 1_000_003L + w.seq);
                    start.await(30, TimeUnit.SECONDS);
                    for (int i = 0; i < perThread; i++) {
                        int key = rnd.nextInt(keys);
                        long s = ++w.seq;
                        assertTrue(index.update((long) key, encode(key, w.id, s)), "update of present key " + key);
                        w.wrote(key, s, false);
                    }
                } catch (Throwable e) {
                    failures.add(e);
                }
            }));
        }
        for (Future<?> f : futures) {
            f.get(120, TimeUnit.SECONDS);
        }
        rethrowFailures();
    }

    private void rethrowFailures() {
        Throwable first = failures.peek();
        if (first != null) {
            AssertionError e = new AssertionError(failures.size() + " worker(s) failed; first: " + first, first);
            failures.forEach(f -> {
                if (f != first) {
                    e.addSuppressed(f);
                }
            });
            throw e;
        }
    }

    /** Value blocks in use (neither free nor awaiting reclamation) are exactly the items. */
    private static void assertNoValueBlockLeaked(GPHashIndex index) {
        IndexStats quiet = index.stats();
        assertEquals(quiet.size(), quiet.valueBlocks() - quiet.valueBlocksFree() - quiet.pendingReclamation(),
                "value blocks in use = items: " + quiet);
    }
}
