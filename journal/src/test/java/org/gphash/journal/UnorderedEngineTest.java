package org.gphash.journal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.GPHashConfig;
import org.gphash.GPHashIndex;
import org.gphash.Journaling;
import org.gphash.OpKind;
import org.gphash.index.CpuEngine;
import org.gphash.spi.Engine;
import org.gphash.spi.ForwardingEngine;
import org.gphash.spi.JournalFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A journaled index over an engine that does not run a batch's operations on one key in batch order
 * (the GPU engine's pool path runs them in any order; here they run in reverse): after a power cut
 * the index is rebuilt as memory held it, not as batch order would have left it.
 */
class UnorderedEngineTest {

    private static final int VALUE = 16;
    private static final int KEYS = 300;

    @TempDir
    Path tmp;

    @Test
    void keysABatchWritesMoreThanOnceAreRebuiltAsMemoryHeldThem() {
        Path pool = tmp.resolve("p.pool");
        Path journalDir = tmp.resolve("j");
        PowerCut.reset();
        GPHashConfig config = GPHashIndex.builder(pool).keySize(8).valueSize(VALUE).initialCapacity(1 << 12)
                .journal(Journaling.in(journalDir).checkpointEvery(Duration.ZERO)).config();
        GPHashIndex index = GPHashIndex.overEngine(new Journals().create(config, REVERSING), config);
        SplittableRandom random = new SplittableRandom(7);
        // Below and above the size from which a batch is journaled while the engine runs it.
        for (int n : new int[] {600, 9_000, 600, 9_000}) {
            Batch batch = index.newBatch(n);
            for (int i = 0; i < n; i++) {
                long key = random.nextLong(KEYS);   // every key many times a batch
                if (random.nextInt(4) == 0) {
                    batch.delete(key);
                } else {
                    batch.put(key, value(key, i));
                }
            }
            index.execute(batch);
        }
        Map<Long, byte[]> memory = new HashMap<>();
        for (long key = 0; key < KEYS; key++) {
            byte[] v = index.get(key);
            if (v != null) {
                memory.put(key, v);
            }
        }
        assertFalse(memory.isEmpty());
        PowerCut.cut(index, pool, journalDir, null);
        try (GPHashIndex rebuilt = GPHashIndex.overEngine(new Journals().open(config, REVERSING), config)) {
            assertTrue(rebuilt.lastRecovery().journal().rebuilt(), rebuilt.lastRecovery().toString());
            assertEquals(memory.size(), rebuilt.size());
            for (long key = 0; key < KEYS; key++) {
                byte[] expected = memory.get(key);
                if (expected == null) {
                    assertNull(rebuilt.get(key), "key " + key);
                } else {
                    assertArrayEquals(expected, rebuilt.get(key), "key " + key);
                }
            }
        }
    }

    private static byte[] value(long key, long stamp) {
        byte[] v = new byte[VALUE];
        ByteBuffer.wrap(v).putLong(key).putLong(stamp);
        return v;
    }

    /** The CPU engine's pools, each behind an engine that runs batches in reverse. */
    private static final JournalFactory.Pools REVERSING = new JournalFactory.Pools() {
        @Override
        public Engine create(GPHashConfig config) {
            return new Reversing(CpuEngine.create(config));
        }

        @Override
        public Engine open(GPHashConfig config) {
            return new Reversing(CpuEngine.open(config));
        }
    };

    /** Runs each batch's operations last to first and says it does not order operations on a key. */
    private static final class Reversing extends ForwardingEngine {
        Reversing(Engine engine) {
            super(engine);
        }

        @Override
        public boolean ordersOperationsOnAKey() {
            return false;
        }

        @Override
        public void execute(Batch batch, BatchResult result) {
            int n = batch.size();
            int ks = geometry().keySize();
            int vs = geometry().valueSize();
            Batch reversed = Batch.create(ks, vs, Math.max(1, n));
            for (int i = n - 1; i >= 0; i--) {
                OpKind kind = batch.kind(i);
                MemorySegment key = batch.keys().asSlice((long) i * ks, ks);
                MemorySegment value = kind == OpKind.DELETE || kind == OpKind.GET ? null
                        : batch.values().asSlice((long) i * vs, vs);
                reversed.add(kind, key, value);
            }
            BatchResult r = new BatchResult(vs, Math.max(1, n));
            engine.execute(reversed, r);
            result.reset(n);
            for (int i = 0; i < n; i++) {
                result.setOutcome(i, r.outcome(n - 1 - i));
                MemorySegment.copy(r.values(), (long) (n - 1 - i) * vs, result.values(), (long) i * vs, vs);
            }
        }
    }
}
