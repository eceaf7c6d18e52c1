package org.gphash.shard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.GPHashIndex;
import org.gphash.Geometry;
import org.gphash.Outcome;
import org.gphash.index.CpuEngine;
import org.gphash.index.api.TestPools;
import org.gphash.spi.Engine;
import org.gphash.spi.ForwardingEngine;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A batch across shards where one shard fails part way: the caller gets that shard's failure, the
 * other shard's operations all ran, and of the failing shard's exactly those it ran have an outcome
 * (the rest NOT_APPLIED), each at its own position.
 */
class ShardFailureTest {

    private final TestPools pools = TestPools.create();

    @AfterEach
    void cleanUp() {
        pools.close();
    }

    /** Runs the first operation of every batch, then fails as a full pool would. */
    private static final class FailsAfterOne extends ForwardingEngine {
        static final IllegalStateException FAILURE = new IllegalStateException("the pool is full (test)");

        FailsAfterOne(Engine engine) {
            super(engine);
        }

        @Override
        public void execute(Batch batch, BatchResult result) {
            result.reset(batch.size());
            result.setOutcome(0, engine.put(batch.keys().asSlice(0, 8), batch.values().asSlice(0, batch.valueSize())));
            throw FAILURE;
        }
    }

    @Test
    void oneShardFailingLeavesTheOtherShardsOperationsAppliedAndItsOwnUnappliedBeyondWhatItRan() {
        Path dir = pools.pool("idx");
        try (Engine good = CpuEngine.create(GPHashIndex.builder(pools.pool("s0")).keySize(8).valueSize(16).config());
             Engine bad = new FailsAfterOne(CpuEngine.create(GPHashIndex.builder(pools.pool("s1")).keySize(8).valueSize(16).config()))) {
            ShardManifest manifest = new ShardManifest(2, 77, new Geometry(2, 2, 8, 8, 16, false), 0, new long[] {1, 2});
            ShardedEngine sharded = new ShardedEngine(dir, manifest, new Engine[] {good, bad}, ShardedEngine.newWorkers(dir),
                    java.util.Optional.empty(), Duration.ZERO);
            int n = ShardedEngine.RANGE_MIN * 3;  // three ranges split and merged at once
            Batch batch = Batch.create(8, 16, n);
            for (long k = 0; k < n; k++) {
                batch.put(k, new byte[16]);
            }
            BatchResult result = new BatchResult(16, n);
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> sharded.execute(batch, result));
            assertSame(FailsAfterOne.FAILURE, e);
            MemorySegment key = MemorySegment.ofArray(new byte[8]);
            int firstOfBad = -1;
            int applied = 0;
            for (int i = 0; i < n; i++) {
                key.set(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, 0, i);
                int shard = sharded.function().shardOf(key, 0, 8);
                Outcome o = result.outcome(i);
                if (shard == 0) {
                    assertEquals(Outcome.INSERTED, o, "operation " + i + " of the shard that did not fail");
                    applied++;
                } else if (firstOfBad < 0) {
                    firstOfBad = i;
                    assertEquals(Outcome.INSERTED, o, "the one operation the failing shard ran, at its position");
                } else {
                    assertEquals(Outcome.NOT_APPLIED, o, "operation " + i + " the failing shard never ran");
                }
            }
            assertTrue(applied > n / 3 && firstOfBad >= 0, applied + " applied on shard 0");
            assertEquals(applied, good.stats().size());
        }
    }
}
