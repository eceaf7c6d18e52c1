package org.gphash.bench.cache;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class ZipfTraceTest {

    @Test
    void frequenciesFollowTheZipfLaw() {
        int n = 1000;
        double theta = 0.99;
        ZipfTrace z = new ZipfTrace(n, theta, 1);
        int draws = 200_000;
        int[] hits = new int[n];
        for (int i = 0; i < draws; i++) {
            hits[z.next()]++;
        }
        double zeta = 0;
        for (int i = 1; i <= n; i++) {
            zeta += Math.pow(i, -theta);
        }
        for (int rank : new int[] {0, 1, 9}) {
            double expected = draws * Math.pow(rank + 1, -theta) / zeta;
            double seen = hits[z.bucketOfRank(rank)];
            assertEquals(expected, seen, expected * 0.1, "rank " + rank);
        }
    }

    @Test
    void hotBucketsAreSpreadOverTheTable() {
        ZipfTrace z = new ZipfTrace(1_000_000, 0.99, 3);
        int low = 0;
        for (int rank = 0; rank < 100; rank++) {
            if (z.bucketOfRank(rank) < 100_000) {
                low++;
            }
        }
        assertTrue(low < 30, low + " of the 100 hottest buckets sit in the first tenth of the table");
    }

    @Test
    void deterministicForASeedAndInRange() {
        int[] a = ZipfTrace.generate(500, 10_000, 0.5, 11);
        assertArrayEquals(a, ZipfTrace.generate(500, 10_000, 0.5, 11));
        for (int b : a) {
            assertTrue(b >= 0 && b < 500, "bucket " + b);
        }
    }

    @Test
    void rejectsBadParameters() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new ZipfTrace(10, 1.0, 0));
        assertTrue(e.getMessage().contains("theta") && e.getMessage().contains("1.0"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new ZipfTrace(1, 0.5, 0));
        assertThrows(IllegalArgumentException.class, () -> new ZipfTrace(10, 0.5, 0).next(-1));
    }
}
