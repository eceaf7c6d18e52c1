package org.gphash.index.api;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.GPHashIndex;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Batches filled in place ({@link Batch#setSize}, then the columns written directly, as the
 * benchmark client and a bulk loader do): they run like batches built by {@code add}, a bad kind
 * is refused before anything runs, and a pool loaded up to its initialCapacity never grows its heap
 * (each growth drains every thread's batch in flight).
 */
class BatchInPlaceTest {

    private final TestPools pools = TestPools.create();

    @AfterEach
    void cleanUp() {
        pools.close();
    }

    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;

    /** Writes n operations of {@code kind} on keys from..from+n-1 straight into the columns. */
    private static void fill(Batch b, OpKind kind, long from, int n, long version) {
        b.setSize(n);
        MemorySegment kinds = b.kinds();
        MemorySegment keys = b.keys();
        MemorySegment values = b.values();
        for (int i = 0; i < n; i++) {
            kinds.set(ValueLayout.JAVA_BYTE, i, (byte) kind.ordinal());
            keys.set(LONG, (long) i * 8, from + i);
            if (kind.hasValue()) {
                values.set(LONG, (long) i * 16, from + i);
                values.set(LONG, (long) i * 16 + 8, version);
            }
        }
    }

    @Test
    void filledInPlaceRunsLikeAddedAndLoadsWithoutHeapGrowth() {
        Path p = pools.pool("inplace.pool");
        int n = 40_000;  // more than a CPU engine round (16,384): several rounds per batch
        try (GPHashIndex idx = GPHashIndex.builder(p).keySize(8).valueSize(16).initialCapacity(2 * n).seed(3).create()) {
            Batch b = idx.newBatch(16);
            BatchResult r = new BatchResult(16, 16);
            fill(b, OpKind.INSERT, 0, n, 1);
            idx.execute(b, r);
            assertEquals(n, r.count(Outcome.INSERTED));
            fill(b, OpKind.INSERT, n, n, 1);
            idx.execute(b, r);
            assertEquals(n, r.count(Outcome.INSERTED));
            assertEquals(0, idx.stats().heapGrowths(), "a load up to initialCapacity grows no heap");
            // Mixed: updates of the first half, then gets of all, each checked against a model.
            Map<Long, Long> model = new HashMap<>();
            for (long k = 0; k < 2L * n; k++) {
                model.put(k, 1L);
            }
            fill(b, OpKind.UPDATE, 0, n, 2);
            idx.execute(b, r);
            assertEquals(n, r.count(Outcome.UPDATED));
            for (long k = 0; k < n; k++) {
                model.put(k, 2L);
            }
            fill(b, OpKind.GET, 0, 2 * n, 0);
            idx.execute(b, r);
            for (int i = 0; i < 2 * n; i++) {
                assertEquals(Outcome.FOUND, r.outcome(i), "get " + i);
                MemorySegment v = MemorySegment.ofArray(r.value(i));
                assertEquals(i, v.get(LONG, 0), "the value of key " + i);
                assertEquals(model.get((long) i), v.get(LONG, 8), "the version of key " + i);
            }
        }
    }

    @Test
    void aBadKindIsRefusedBeforeAnythingRuns() {
        Path p = pools.pool("badkind.pool");
        try (GPHashIndex idx = GPHashIndex.builder(p).keySize(8).valueSize(16).initialCapacity(1000).seed(4).create()) {
            Random random = new Random(5);
            for (int bad : new int[] {OpKind.values().length, 0x7F, -1, 0x80 + OpKind.GET.ordinal()}) {
                int n = 1 + random.nextInt(40);
                int at = random.nextInt(n);
                Batch b = idx.newBatch(n);
                fill(b, OpKind.INSERT, 100, n, 1);
                b.kinds().set(ValueLayout.JAVA_BYTE, at, (byte) bad);
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> idx.execute(b));
                assertTrue(e.getMessage().contains("operation " + at + " "), e.getMessage());
                assertEquals(0, idx.size(), "nothing of a refused batch ran");
            }
        }
    }
}
