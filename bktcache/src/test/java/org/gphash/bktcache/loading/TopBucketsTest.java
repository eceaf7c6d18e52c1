package org.gphash.bktcache.loading;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;

class TopBucketsTest {

    @Test
    void takesTheHighestScores() {
        int[] scores = {0, 5, 3, 5, 9, 1};
        boolean[] hot = new boolean[scores.length];
        assertArrayEquals(new long[] {1, 3, 4}, TopBuckets.select(scores, 3, false, null, hot));
        assertArrayEquals(new boolean[] {false, true, false, true, true, false}, hot);
        assertArrayEquals(new long[] {4}, TopBuckets.select(scores, 1, false, null, null));
        assertArrayEquals(new long[0], TopBuckets.select(scores, 0, false, null, null));
    }

    @Test
    void tiesGoInAscendingBucketIdButAllCountAsHot() {
        int[] scores = {2, 0, 2, 7, 2, 2};
        boolean[] hot = new boolean[scores.length];
        assertArrayEquals(new long[] {0, 2, 3}, TopBuckets.select(scores, 3, false, null, hot));
        assertArrayEquals(new boolean[] {true, false, true, true, true, true}, hot);
    }

    @Test
    void neverAdmitsAnUnaccessedBucket() {
        int[] scores = {0, 4, 0, 1};
        assertArrayEquals(new long[] {1, 3}, TopBuckets.select(scores, 10, false, null, null));
        assertArrayEquals(new long[0], TopBuckets.select(new int[5], 3, false, null, null));
    }

    @Test
    void scoresAreUnsigned() {
        int[] scores = {0x7FFF_FFFF, -1, 1, 0x8000_0000};
        assertArrayEquals(new long[] {1, 3}, TopBuckets.select(scores, 2, false, null, null));
    }

    @Test
    void scanGuardAdmitsOnlyPreviouslyHotAndGivesTheRoomToTheNextCandidate() {
        int[] scores = {9, 8, 7, 6, 0};
        boolean[] previouslyHot = {false, true, false, true, true};
        boolean[] nowHot = new boolean[scores.length];
        // Bucket 0 is the hottest but new: it waits; bucket 3 takes its place. Bucket 4 was hot but is
        // idle now (score 0), so it is not admitted.
        assertArrayEquals(new long[] {1, 3}, TopBuckets.select(scores, 2, true, previouslyHot, nowHot));
        assertArrayEquals(new boolean[] {true, true, false, false, false}, nowHot);
        assertArrayEquals(new boolean[] {false, true, false, true, true}, previouslyHot, "input left alone");
    }

    @Test
    void scanGuardAdmitsNothingWithoutHistory() {
        int[] scores = {3, 1, 2};
        boolean[] nowHot = new boolean[3];
        assertArrayEquals(new long[0], TopBuckets.select(scores, 2, true, new boolean[3], nowHot));
        assertArrayEquals(new boolean[] {true, false, true}, nowHot);
    }

    @Test
    void scanGuardNeedsBothMarkArrays() {
        int[] scores = {1, 2};
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> TopBuckets.select(scores, 1, true, null, new boolean[2]));
        assertTrue(e.getMessage().contains("previouslyHot"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> TopBuckets.select(scores, 1, true, new boolean[2], null));
        assertTrue(e.getMessage().contains("nowHotOut"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> TopBuckets.select(scores, 1, true, new boolean[3], new boolean[2]));
        assertTrue(e.getMessage().contains("previouslyHot") && e.getMessage().contains("3"), e.getMessage());
        boolean[] same = new boolean[2];
        assertThrows(IllegalArgumentException.class, () -> TopBuckets.select(scores, 1, true, same, same));
        assertThrows(IllegalArgumentException.class, () -> TopBuckets.select(scores, 1, false, null, new boolean[1]));
    }

    @Provide
    Arbitrary<int[]> scores() {
        return Arbitraries.oneOf(Arbitraries.integers().between(0, 4), Arbitraries.integers())
                .array(int[].class).ofMaxSize(200);
    }

    @Property(tries = 300)
    void selectsMinKNonzeroOfTheHighestInOrder(@ForAll("scores") int[] scores, @ForAll @LongRange(max = 250) long k) {
        boolean[] hot = new boolean[scores.length];
        long[] chosen = TopBuckets.select(scores, k, false, null, hot);
        long nonzero = Arrays.stream(scores).filter(s -> s != 0).count();
        assertEquals(Math.min(k, nonzero), chosen.length);
        boolean[] in = new boolean[scores.length];
        for (int i = 0; i < chosen.length; i++) {
            assertTrue(i == 0 || chosen[i - 1] < chosen[i], "ascending ids");
            in[(int) chosen[i]] = true;
        }
        long lowestChosen = Long.MAX_VALUE;
        long highestLeft = 0;
        for (int b = 0; b < scores.length; b++) {
            long s = Integer.toUnsignedLong(scores[b]);
            if (in[b]) {
                lowestChosen = Math.min(lowestChosen, s);
                assertTrue(hot[b], "a chosen bucket is hot");
            } else {
                highestLeft = Math.max(highestLeft, s);
            }
        }
        assertTrue(chosen.length == 0 || lowestChosen >= highestLeft,
                "left " + highestLeft + " while taking " + lowestChosen);
    }

    @Property(tries = 300)
    void scanGuardAdmitsASubsetOfThePreviouslyHot(@ForAll("scores") int[] scores,
                                                  @ForAll @LongRange(max = 250) long k, @ForAll long seed) {
        boolean[] previouslyHot = new boolean[scores.length];
        java.util.SplittableRandom r = new java.util.SplittableRandom(seed);
        for (int b = 0; b < scores.length; b++) {
            previouslyHot[b] = r.nextBoolean();
        }
        long[] chosen = TopBuckets.select(scores, k, true, previouslyHot, new boolean[scores.length]);
        long candidates = 0;
        for (int b = 0; b < scores.length; b++) {
            if (previouslyHot[b] && scores[b] != 0) {
                candidates++;
            }
        }
        assertEquals(Math.min(k, candidates), chosen.length, "the guard leaves no room unused");
        for (long b : chosen) {
            assertTrue(previouslyHot[(int) b] && scores[(int) b] != 0, "bucket " + b);
        }
    }
}
