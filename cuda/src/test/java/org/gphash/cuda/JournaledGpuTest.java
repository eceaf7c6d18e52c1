package org.gphash.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;

import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.GPHashIndex;
import org.gphash.Journaling;
import org.gphash.Outcome;
import org.junit.jupiter.api.Test;

/**
 * Issue 51 on the GPU engine: a journaled GPU index (pool on tmpfs) takes large batches of puts and
 * deletes (journaled while the GPU runs them), mixed batches with conditional writes (journaled from
 * their outcomes), single calls and a checkpoint; then the power goes (the engine dropped unclosed,
 * the pool deleted). The open rebuilds the pool from checkpoint and journal on the GPU, and again on
 * the CPU engine, each equal to the model.
 */
class JournaledGpuTest {

    private static final int VALUE = GpuTestSupport.VALUE_SIZE;

    @Test
    void aGpuPoolLostToAPowerCutIsRebuiltFromItsJournal() throws Exception {
        GpuTestSupport.assumeGpu();
        try (GpuTestSupport t = GpuTestSupport.create()) {
            Path pool = t.pool("journaled");
            Journaling j = Journaling.in(t.pool("journaled-journal")).checkpointEvery(java.time.Duration.ZERO);
            Map<Long, byte[]> model = new HashMap<>();
            SplittableRandom random = new SplittableRandom(51);
            GPHashIndex index = GPHashIndex.builder(pool).backend(Backend.GPU).keySize(8).valueSize(VALUE)
                    .initialCapacity(1 << 15).journal(j).create();
            Batch batch = index.newBatch(20_000);
            BatchResult result = new BatchResult(VALUE, 20_000);
            for (int round = 0; round < 4; round++) {
                batch.clear();
                for (int i = 0; i < 20_000; i++) {
                    long key = random.nextLong(40_000);
                    if (random.nextInt(6) == 0) {
                        batch.delete(key);
                        model.remove(key);
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
            // A mixed batch: inserts, updates and compare-and-sets journaled by what they did.
            batch.clear();
            Map<Long, byte[]> after = new HashMap<>(model);
            for (int i = 0; i < 5_000; i++) {
                long key = 40_000 + random.nextLong(8_000) - 4_000;
                byte[] v = value(key, 77_000_000L + i);
                switch (i % 3) {
                    case 0 -> {
                        batch.insert(key, v);
                        after.putIfAbsent(key, v);
                    }
                    case 1 -> {
                        batch.update(key, v);
                        after.computeIfPresent(key, (k, old) -> v);
                    }
                    default -> {
                        batch.put(key, v);
                        after.put(key, v);
                    }
                }
            }
            BatchResult mixed = new BatchResult(VALUE, 5_000);
            index.execute(batch, mixed);
            for (int i = 0; i < 5_000; i++) {
                assertTrue(mixed.outcome(i) != Outcome.NOT_APPLIED);
            }
            model = after;
            for (long key = 0; key < 200; key++) {
                if (key % 5 == 0) {
                    index.delete(key);
                    model.remove(key);
                } else {
                    byte[] v = value(key, -key);
                    index.put(key, v);
                    model.put(key, v);
                }
            }
            // What memory holds before the cut. The pool path runs a batch's operations on one key in any
            // order, so there memory is one of the states the batch allowed, not the batch-order model:
            // the rebuilt index must equal memory, and memory the model wherever batch order is kept.
            Map<Long, byte[]> memory = new HashMap<>();
            for (long key = 0; key < 48_000; key++) {
                byte[] v = index.get(key);
                if (v != null) {
                    memory.put(key, v);
                }
            }
            if (index.engine().ordersOperationsOnAKey()) {
                assertEquals(model.keySet(), memory.keySet());
                for (Map.Entry<Long, byte[]> e : model.entrySet()) {
                    assertArrayEquals(e.getValue(), memory.get(e.getKey()), "key " + e.getKey());
                }
            }
            model = memory;
            index.engine().abandon();   // the power cut: nothing closed, and the pool goes with the tmpfs
            Files.delete(pool);
            for (Backend backend : new Backend[] {Backend.GPU, Backend.CPU}) {
                try (GPHashIndex rebuilt = GPHashIndex.builder(pool).backend(backend).journal(j).open()) {
                    assertTrue(rebuilt.lastRecovery().journal().rebuilt(), rebuilt.lastRecovery().toString());
                    assertEquals(model.size(), rebuilt.stats().size(), backend + ": " + rebuilt.lastRecovery());
                    for (long key = 0; key < 48_000; key++) {
                        byte[] expected = model.get(key);
                        if (expected == null) {
                            assertNull(rebuilt.get(key), backend + ": key " + key);
                        } else {
                            assertArrayEquals(expected, rebuilt.get(key), backend + ": key " + key);
                        }
                    }
                }
                Files.delete(pool);   // the next open rebuilds again, on the other engine
            }
        }
    }

    private static byte[] value(long key, long stamp) {
        byte[] v = new byte[VALUE];
        java.nio.ByteBuffer.wrap(v).putLong(key).putLong(stamp).putLong(key ^ stamp);
        return v;
    }
}
