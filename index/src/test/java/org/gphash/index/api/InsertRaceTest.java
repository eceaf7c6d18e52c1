package org.gphash.index.api;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicIntegerArray;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.Cursor;
import org.gphash.Durability;
import org.gphash.GPHashIndex;
import org.gphash.Outcome;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Inserts of one absent key racing from several threads: exactly one returns true, and its value is
 * the one that stays (an insert that returned true must never be undone by a racing one, or
 * {@code putIfAbsent} through {@link GPHashMap} would have two winners). Single calls and batches.
 */
class InsertRaceTest {

    @TempDir
    Path dir;

    private static final int THREADS = 4;
    private static final int KEYS = 20_480;  // whole batches of 64

    @Test
    void exactlyOneInsertOfAKeyWins() throws Exception {
        for (boolean batches : new boolean[] {false, true}) {
            try (GPHashIndex index = GPHashIndex.builder(dir.resolve("race-" + batches + ".pool")).keySize(8).valueSize(8)
                    .initialCapacity(4 * KEYS)
                    // Batches in PER_BATCH rounds (PhasedBatch), single calls one by one.
                    .durability(batches ? Durability.PER_BATCH : Durability.ON_CLOSE_OR_SYNC).create()) {
                AtomicIntegerArray wins = new AtomicIntegerArray(KEYS);
                int[][] winner = new int[THREADS][];
                CountDownLatch start = new CountDownLatch(1);
                List<Thread> threads = new ArrayList<>();
                for (int t = 0; t < THREADS; t++) {
                    int id = t;
                    winner[t] = new int[0];
                    threads.add(Thread.ofPlatform().start(() -> {
                        byte[] value = new byte[8];
                        value[0] = (byte) (id + 1);
                        try {
                            start.await();
                        } catch (InterruptedException e) {
                            return;
                        }
                        if (batches) {
                            for (int from = 0; from < KEYS; from += 64) {
                                Batch b = index.newBatch(64);
                                for (int k = from; k < from + 64; k++) {
                                    b.insert((long) k, value);
                                }
                                BatchResult r = index.execute(b);
                                for (int i = 0; i < 64; i++) {
                                    if (r.outcome(i) == Outcome.INSERTED) {
                                        wins.incrementAndGet(from + i);
                                    }
                                }
                            }
                        } else {
                            for (int k = 0; k < KEYS; k++) {
                                if (index.insert((long) k, value)) {
                                    wins.incrementAndGet(k);
                                }
                            }
                        }
                    }));
                }
                start.countDown();
                for (Thread t : threads) {
                    t.join();
                }
                for (int k = 0; k < KEYS; k++) {
                    assertEquals(1, wins.get(k), (batches ? "batches" : "single calls") + ": key " + k + " had "
                            + wins.get(k) + " inserts that returned true");
                }
                long walked = 0;
                try (Cursor c = index.cursor()) {
                    while (c.next()) {
                        walked++;
                    }
                }
                assertEquals(KEYS, walked, (batches ? "batches" : "single calls") + ": items in the pool");
                assertEquals(KEYS, index.size(), (batches ? "batches" : "single calls") + ": the item count");
            }
        }
    }
}
