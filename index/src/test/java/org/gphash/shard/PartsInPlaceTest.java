package org.gphash.shard;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.SplittableRandom;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.GPHashIndex;
import org.gphash.Geometry;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.index.CpuEngine;
import org.gphash.index.api.TestPools;
import org.gphash.spi.Engine;
import org.gphash.spi.ForwardingEngine;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A sharded batch whose shards run their parts where they lie ({@link Engine#executeInPlace}) beside
 * shards whose parts are copied out: every operation's outcome and value land at its own position,
 * as one unsharded engine gives them for the same batches, and each in-place shard is handed exactly
 * its own operations' positions, ascending.
 */
class PartsInPlaceTest {

    private static final int VALUE = 16;

    private final TestPools pools = TestPools.create();

    @AfterEach
    void cleanUp() {
        pools.close();
    }

    /**
     * Runs a part in place one operation at a time through its engine, after checking the positions
     * it is given; declines parts of {@code declineAtMost} operations or fewer.
     */
    private static final class InPlace extends ForwardingEngine {
        private final ShardFunction function;
        private final int shard;
        private final int declineAtMost;
        int parts;

        InPlace(Engine engine, ShardFunction function, int shard, int declineAtMost) {
            super(engine);
            this.function = function;
            this.shard = shard;
            this.declineAtMost = declineAtMost;
        }

        @Override
        public boolean executeInPlace(Batch batch, BatchResult result, MemorySegment positions, int count) {
            if (count <= declineAtMost) {
                return false;
            }
            parts++;
            Batch one = Batch.create(8, VALUE, 1);
            BatchResult oneResult = new BatchResult(VALUE, 1);
            int before = -1;
            for (int j = 0; j < count; j++) {
                int i = positions.getAtIndex(ValueLayout.JAVA_INT, j);
                assertTrue(i > before, "positions ascend: " + before + " then " + i);
                before = i;
                MemorySegment key = batch.keys().asSlice(8L * i, 8);
                assertEquals(shard, function.shardOf(key, 0, 8), "position " + i + " belongs to shard " + shard);
                OpKind kind = OpKind.values()[batch.kinds().get(ValueLayout.JAVA_BYTE, i)];
                one.clear();
                one.add(kind, key, batch.values().asSlice((long) VALUE * i, VALUE));
                engine.execute(one, oneResult);
                result.setOutcome(i, oneResult.outcome(0));
                MemorySegment.copy(oneResult.values(), 0, result.values(), (long) VALUE * i, VALUE);
            }
            return true;
        }
    }

    @Test
    void partsRunInPlaceAndCopiedOutLandAtTheirPositionsAsOneEngineGivesThem() {
        Path dir = pools.pool("idx");
        ShardManifest manifest = new ShardManifest(3, 91, new Geometry(2, 2, 8, 8, VALUE, false), 0, new long[] {1, 2, 3});
        ShardFunction function = new ShardFunction(manifest.seed(), 3);
        try (Engine reference = CpuEngine.create(GPHashIndex.builder(pools.pool("ref")).keySize(8).valueSize(VALUE).config());
             Engine s0 = CpuEngine.create(GPHashIndex.builder(pools.pool("s0")).keySize(8).valueSize(VALUE).config());
             Engine s1 = CpuEngine.create(GPHashIndex.builder(pools.pool("s1")).keySize(8).valueSize(VALUE).config());
             Engine s2 = CpuEngine.create(GPHashIndex.builder(pools.pool("s2")).keySize(8).valueSize(VALUE).config())) {
            InPlace always = new InPlace(s0, function, 0, 0);
            InPlace largeOnly = new InPlace(s2, function, 2, 1000);
            ShardedEngine sharded = new ShardedEngine(dir, manifest, new Engine[] {always, s1, largeOnly},
                    ShardedEngine.newWorkers(dir), java.util.Optional.empty(), Duration.ZERO);
            SplittableRandom r = new SplittableRandom(5);
            OpKind[] kinds = {OpKind.GET, OpKind.PUT, OpKind.INSERT, OpKind.UPDATE, OpKind.DELETE, OpKind.READ_MODIFY_WRITE};
            for (int round = 0; round < 6; round++) {
                // Large batches split in several ranges, and small ones whose third shard declines.
                int n = round % 2 == 0 ? ShardedEngine.RANGE_MIN * 3 + r.nextInt(100) : 1 + r.nextInt(2000);
                Batch batch = Batch.create(8, VALUE, n);
                for (int i = 0; i < n; i++) {
                    byte[] v = new byte[VALUE];
                    r.nextBytes(v);
                    batch.add(kinds[r.nextInt(kinds.length)], longKey(r.nextInt(3000)), v);  // keys repeat
                }
                BatchResult expected = new BatchResult(VALUE, n);
                reference.execute(batch, expected);
                BatchResult got = new BatchResult(VALUE, n);
                sharded.execute(batch, got);
                for (int i = 0; i < n; i++) {
                    Outcome o = expected.outcome(i);
                    assertEquals(o, got.outcome(i), "round " + round + ", operation " + i);
                    if (o == Outcome.FOUND || o == Outcome.REPLACED) {
                        assertArrayEquals(expected.value(i), got.value(i), "round " + round + ", value of operation " + i);
                    }
                }
            }
            long[] stages = sharded.stageNanos(false);
            assertEquals(6, stages[3], "batches");
            assertEquals(always.parts + largeOnly.parts, stages[4], "parts run in place");
            assertEquals(6 + 6 + 6 - stages[4], stages[5], "parts copied");
            assertEquals(6, always.parts);
            assertTrue(largeOnly.parts >= 3 && largeOnly.parts < 6, "the third shard declined the small parts: " + largeOnly.parts);
        }
    }

    private static byte[] longKey(long k) {
        byte[] b = new byte[8];
        for (int i = 0; i < 8; i++) {
            b[i] = (byte) (k >>> (8 * i));
        }
        return b;
    }
}
