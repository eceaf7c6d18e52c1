package org.gphash.cuda.staging;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Random;
import java.util.TreeMap;

import org.junit.jupiter.api.Test;

/**
 * The page arithmetic of {@link ChunkedPinning}, without a GPU: the ranges it would register for a
 * batch's columns, chunk after chunk, never overlap (CUDA refuses a page registered twice), each
 * chunk's bytes are covered before it runs, and the final pass covers the whole block.
 */
class ChunkedPinningGapsTest {

    private static final long PAGE = 4096;

    @Test
    void chunksOfEveryColumnThenTheRestCoverTheBlockOnceEach() {
        Random random = new Random(25);
        for (int trial = 0; trial < 500; trial++) {
            long blockStart = PAGE * (1 + random.nextInt(1000));
            int capacity = 1 + random.nextInt(50_000);
            int keySize = 8 * (1 + random.nextInt(3));
            int valueSize = 1 + random.nextInt(200);
            // Columns laid out one after another, as a Batch lays them out, at arbitrary offsets.
            long kinds = blockStart + random.nextInt(64);
            long keys = kinds + capacity + random.nextInt(64);
            long values = keys + (long) capacity * keySize + random.nextInt(64);
            long blockEnd = (values + (long) capacity * valueSize + PAGE - 1) / PAGE * PAGE + PAGE * random.nextInt(3);
            boolean withValues = random.nextBoolean();
            int n = 1 + random.nextInt(capacity);
            int chunk = 1 + random.nextInt(n);
            TreeMap<Long, Long> registered = new TreeMap<>();
            TreeMap<Long, Long> each = new TreeMap<>();  // every registration, unmerged
            for (int done = 0; done < n; ) {
                done = Math.min(n, done + chunk);
                register(registered, each, kinds, kinds + done, blockStart, blockEnd);
                register(registered, each, keys, keys + (long) done * keySize, blockStart, blockEnd);
                if (withValues) {
                    register(registered, each, values, values + (long) done * valueSize, blockStart, blockEnd);
                }
                assertCovered(registered, kinds, kinds + done, "kinds through " + done);
                assertCovered(registered, keys, keys + (long) done * keySize, "keys through " + done);
                if (withValues) {
                    assertCovered(registered, values, values + (long) done * valueSize, "values through " + done);
                }
            }
            register(registered, each, blockStart, blockEnd, blockStart, blockEnd);
            assertEquals(1, registered.size(), "trial " + trial + ": one range in the end");
            assertEquals(blockStart, registered.firstKey());
            assertEquals(blockEnd, (long) registered.firstEntry().getValue());
            long total = 0;
            for (var e : each.entrySet()) {
                total += e.getValue() - e.getKey();
            }
            assertEquals(blockEnd - blockStart, total, "trial " + trial + ": each page registered once");
            assertTrue(ChunkedPinning.gaps(registered, blockStart, blockEnd, blockStart, blockEnd).isEmpty());
        }
    }

    private static void register(TreeMap<Long, Long> registered, TreeMap<Long, Long> each, long from, long to,
                                 long blockStart, long blockEnd) {
        List<long[]> gaps = ChunkedPinning.gaps(registered, from, to, blockStart, blockEnd);
        for (long[] g : gaps) {
            assertTrue(g[0] % PAGE == 0 && g[1] % PAGE == 0 && g[0] < g[1], "whole pages");
            assertTrue(g[0] >= blockStart && g[1] <= blockEnd, "inside the block");
            var before = each.floorEntry(g[1] - 1);
            assertTrue(before == null || before.getValue() <= g[0], "no page registered twice");
            each.put(g[0], g[1]);
            ChunkedPinning.record(registered, g[0], g[1]);
        }
    }

    private static void assertCovered(TreeMap<Long, Long> registered, long from, long to, String what) {
        if (from >= to) {
            return;
        }
        var e = registered.floorEntry(from);
        assertTrue(e != null && e.getValue() >= to, what + ": [" + from + ", " + to + ") not covered by one range");
    }
}
