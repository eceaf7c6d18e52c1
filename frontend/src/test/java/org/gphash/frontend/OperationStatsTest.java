package org.gphash.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;

import org.gphash.Batch;
import org.gphash.Durability;
import org.gphash.GPHashIndex;
import org.gphash.OperationStats;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code recordStats()} with this module on the class path: every synchronous call and batch counted
 * and timed; nothing without it.
 */
class OperationStatsTest {

    @TempDir
    Path dir;

    @Test
    void callsAreCountedAndTimedWhenAsked() {
        try (GPHashIndex index = GPHashIndex.builder(dir.resolve("s.pool")).keySize(8).valueSize(16).recordStats()
                .durability(Durability.ON_CLOSE_OR_SYNC).create()) {
            for (long k = 0; k < 50; k++) {
                index.put(k, new byte[16]);
            }
            for (long k = 0; k < 100; k++) {
                index.get(k);  // keys 0..49 hit
            }
            index.delete(3L);
            index.update(4L, new byte[16]);
            Batch b = index.newBatch(10);
            for (long k = 0; k < 10; k++) {
                b.get(k);
            }
            index.execute(b);
            index.execute(b);
            OperationStats s = index.operationStats();
            assertEquals(100, s.gets());
            assertEquals(50, s.getHits());
            assertEquals(0.5, s.getHitRate());
            assertEquals(52, s.writes());
            assertEquals(2, s.batches());
            assertEquals(20, s.batchOps());
            assertEquals(100, s.getLatency().count());
            assertEquals(52, s.writeLatency().count());
            assertEquals(2, s.batchLatency().count());
            OperationStats.Latency g = s.getLatency();
            assertTrue(g.p50Nanos() > 0 && g.p50Nanos() <= g.p99Nanos() && g.p99Nanos() <= g.maxNanos(), g.toString());
            assertEquals(100, index.operationStats().getLatency().count(), "a second read adds nothing");
        }
    }

    @Test
    void nothingIsRecordedByDefault() {
        try (GPHashIndex index = GPHashIndex.builder(dir.resolve("n.pool")).keySize(8).valueSize(16).create()) {
            index.put(1L, new byte[16]);
            index.get(1L);
            assertSame(OperationStats.NONE, index.operationStats());
        }
    }
}
