package org.gphash.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ZipfianGeneratorTest {

    @Test
    void ranksStayInRange() {
        ZipfianGenerator z = new ZipfianGenerator(1000, 0.99);
        SplittableRandom r = new SplittableRandom(1);
        for (int i = 0; i < 200_000; i++) {
            long k = z.next(r);
            assertTrue(k >= 0 && k < 1000, "rank " + k);
        }
    }

    /** How often each rank is drawn in {@code draws} draws; fails on a rank out of range. */
    private static long[] hits(ZipfianGenerator z, int draws, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        long[] hits = new long[(int) z.items()];
        for (int i = 0; i < draws; i++) {
            long rank = z.next(r);
            assertTrue(rank >= 0 && rank < hits.length, "rank " + rank);
            hits[(int) rank]++;
        }
        return hits;
    }

    @Test
    void frequenciesFollowZipfsLaw() {
        int n = 10_000;
        double theta = 0.99;
        int draws = 2_000_000;
        long[] hits = hits(new ZipfianGenerator(n, theta), draws, 7);
        double zeta = ZipfianGenerator.zeta(n, theta);
        // Ranks 0 and 1 are exact in the algorithm; rank 0 must match 1/zeta closely.
        assertEquals(1 / zeta, hits[0] / (double) draws, 0.003);
        assertEquals(Math.pow(2, -theta) / zeta, hits[1] / (double) draws, 0.003);
        // Popularity falls with rank: the first 10 ranks together beat the next 10 by far.
        long head = 0;
        long next = 0;
        for (int i = 0; i < 10; i++) {
            head += hits[i];
            next += hits[10 + i];
        }
        assertTrue(head > 3 * next, head + " vs " + next);
    }

    @Test
    void approximatedZetaMatchesTheExactSum() {
        long n = (1L << 22) + 3_000_000;
        double theta = 0.99;
        double exact = 0;
        for (long i = n; i >= 1; i--) {
            exact += Math.pow(i, -theta);
        }
        assertEquals(exact, ZipfianGenerator.zeta(n, theta), exact * 1e-12);
    }

    @Test
    void singleItemAlwaysRankZero() {
        ZipfianGenerator z = new ZipfianGenerator(1, 0.99);
        SplittableRandom r = new SplittableRandom(3);
        for (int i = 0; i < 1000; i++) {
            assertEquals(0, z.next(r));
        }
    }

    @Test
    void rejectsBadParameters() {
        assertThrows(IllegalArgumentException.class, () -> new ZipfianGenerator(0, 0.99));
        assertThrows(IllegalArgumentException.class, () -> new ZipfianGenerator(10, 0.0));
        assertThrows(IllegalArgumentException.class, () -> new ZipfianGenerator(10, Double.NaN));
        assertThrows(IllegalArgumentException.class, () -> new ZipfianGenerator(1L << 32, 1.1));
    }

    @ParameterizedTest
    @ValueSource(doubles = {1.0, 1.2})
    void skewsOfOneAndAboveFollowZipfsLawExactly(double theta) {
        int n = 1000;
        ZipfianGenerator z = new ZipfianGenerator(n, theta);
        int draws = 1_000_000;
        long[] hits = hits(z, draws, 11);
        double zeta = 0;
        for (int i = 1; i <= n; i++) {
            zeta += Math.pow(i, -theta);
        }
        for (int rank : new int[] {0, 1, 2, 9, 99}) {
            double expected = Math.pow(rank + 1, -theta) / zeta;
            assertEquals(expected, hits[rank] / (double) draws, 0.003 + expected * 0.02, "rank " + rank);
        }
        assertEquals(1 / zeta, z.hottestProbability(), 1e-12);
    }
}
