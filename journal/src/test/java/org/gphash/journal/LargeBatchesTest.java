package org.gphash.journal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.GPHashIndex;
import org.gphash.Journaling;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Batches large enough that their runs of puts are journaled from the batch's own columns and span
 * several records, mixed with deletes and conditional writes that change nothing, then a power cut:
 * the rebuilt index equals the model.
 */
class LargeBatchesTest {

    private static final int VALUE = 16;

    @TempDir
    Path tmp;

    @Test
    void largeBatchesSurviveAPowerCut() throws IOException {
        Path pool = tmp.resolve("p.pool");
        Path journal = tmp.resolve("j");
        PowerCut.reset();
        Journaling j = Journaling.in(journal).checkpointEvery(java.time.Duration.ZERO).segmentBytes(4 << 20);
        Map<Long, byte[]> model = new HashMap<>();
        SplittableRandom random = new SplittableRandom(3);
        GPHashIndex index = GPHashIndex.builder(pool).keySize(8).valueSize(VALUE).initialCapacity(1 << 16).journal(j).create();
        int n = 200_000;   // more writes than one record holds at these sizes (167,772)
        Batch batch = index.newBatch(n);
        BatchResult result = new BatchResult(VALUE, n);
        for (int round = 0; round < 3; round++) {
            batch.clear();
            for (int i = 0; i < n; i++) {
                long key = random.nextLong(60_000);
                if (i % 1000 == 999) {
                    batch.delete(key);
                    model.remove(key);
                } else if (i % 1000 == 500) {
                    batch.insert(key, value(key, round));   // a run breaker that may change nothing
                    model.putIfAbsent(key, value(key, round));
                } else {
                    byte[] v = value(key, round * 1_000_003L + i);
                    batch.put(key, v);
                    model.put(key, v);
                }
            }
            index.execute(batch, result);
            if (round == 1) {
                index.checkpoint();
            }
        }
        assertTrue(JournalFiles.list(journal, false).size() > 1, "the journal moved to new segments");
        PowerCut.cut(index, pool, journal, null);
        try (GPHashIndex rebuilt = GPHashIndex.builder(pool).journal(j).open()) {
            assertTrue(rebuilt.lastRecovery().journal().rebuilt());
            assertEquals(model.size(), rebuilt.stats().size(), rebuilt.lastRecovery().toString());
            for (long key = 0; key < 60_000; key++) {
                byte[] expected = model.get(key);
                if (expected == null) {
                    assertNull(rebuilt.get(key), "key " + key);
                } else {
                    assertArrayEquals(expected, rebuilt.get(key), "key " + key);
                }
            }
        }
    }

    /** Batches of puts and deletes only: journaled while the engine runs them. */
    @Test
    void putsAndDeletesJournaledAlongsideSurviveAPowerCut() throws IOException {
        Path pool = tmp.resolve("a.pool");
        Path journal = tmp.resolve("ja");
        PowerCut.reset();
        Journaling j = Journaling.in(journal).checkpointEvery(java.time.Duration.ZERO);
        Map<Long, byte[]> model = new HashMap<>();
        SplittableRandom random = new SplittableRandom(5);
        GPHashIndex index = GPHashIndex.builder(pool).keySize(8).valueSize(VALUE).initialCapacity(1 << 14).journal(j).create();
        Batch batch = index.newBatch(20_000);
        BatchResult result = new BatchResult(VALUE, 20_000);
        for (int round = 0; round < 4; round++) {
            batch.clear();
            for (int i = 0; i < 20_000; i++) {
                long key = random.nextLong(30_000);
                if (random.nextInt(5) == 0) {
                    batch.delete(key);
                    model.remove(key);
                } else {
                    byte[] v = value(key, round * 100_003L + i);
                    batch.put(key, v);
                    model.put(key, v);
                }
            }
            index.execute(batch, result);
        }
        PowerCut.cut(index, pool, journal, null);
        try (GPHashIndex rebuilt = GPHashIndex.builder(pool).journal(j).open()) {
            assertEquals(model.size(), rebuilt.stats().size(), rebuilt.lastRecovery().toString());
            for (Map.Entry<Long, byte[]> e : model.entrySet()) {
                assertArrayEquals(e.getValue(), rebuilt.get(e.getKey()), "key " + e.getKey());
            }
        }
    }

    /**
     * A batch journaled alongside that fails part way (the pool is full): what did not run is
     * journaled again as memory holds it, so the rebuilt index is what memory was.
     */
    @Test
    void aBatchThatFailsPartWayIsJournaledAsItRan() throws IOException {
        Path pool = tmp.resolve("f.pool");
        Path journal = tmp.resolve("jf");
        PowerCut.reset();
        Journaling j = Journaling.in(journal).checkpointEvery(java.time.Duration.ZERO);
        GPHashIndex index = GPHashIndex.builder(pool).keySize(8).valueSize(VALUE).initialCapacity(1 << 10)
                .maxPoolBytes(2 << 20).journal(j).create();
        for (long k = 0; k < 500; k++) {
            index.put(k, value(k, -1));
        }
        Batch batch = index.newBatch(200_000);
        for (int i = 0; i < 200_000; i++) {
            batch.put(i, value(i, 7));
        }
        BatchResult result = new BatchResult(VALUE, 200_000);
        org.junit.jupiter.api.Assertions.assertThrows(org.gphash.PoolFullException.class, () -> index.execute(batch, result));
        Map<Long, byte[]> memory = new HashMap<>();
        for (long k = 0; k < 200_000; k++) {
            byte[] v = index.get(k);
            if (v != null) {
                memory.put(k, v);
            }
        }
        PowerCut.cut(index, pool, journal, null);
        try (GPHashIndex rebuilt = GPHashIndex.builder(pool).maxPoolBytes(64 << 20).journal(j).open()) {
            assertEquals(memory.size(), rebuilt.stats().size(), rebuilt.lastRecovery().toString());
            for (Map.Entry<Long, byte[]> e : memory.entrySet()) {
                assertArrayEquals(e.getValue(), rebuilt.get(e.getKey()), "key " + e.getKey());
            }
        }
    }

    private static byte[] value(long key, long stamp) {
        byte[] v = new byte[VALUE];
        java.nio.ByteBuffer.wrap(v).putLong(key).putLong(stamp);
        return v;
    }
}
