package org.gphash.bktcache.loading;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import org.gphash.bktcache.loading.ThresholdSearch.Histogram;
import org.gphash.bktcache.loading.ThresholdSearch.Threshold;
import org.junit.jupiter.api.Test;

class ThresholdSearchTest {

    private static final Threshold NOTHING = new Threshold(ThresholdSearch.ADMIT_NOTHING, 0, 0);

    /** Scores with many zeros and ties, shared high digits, and the top of the unsigned range. */
    @Provide
    Arbitrary<int[]> scores() {
        Arbitrary<Integer> score = Arbitraries.frequencyOf(
                Tuple.of(3, Arbitraries.integers().between(0, 3)),                  // zeros and dense ties
                Tuple.of(2, Arbitraries.integers()),                                // full 32 bits, half >= 2^31
                Tuple.of(2, Arbitraries.integers().between(0, 0xFFFF).map(v -> 0xAB00_0000 | v)), // one top digit
                Tuple.of(1, Arbitraries.of(-1, -2, 0x8000_0000, 0x7FFF_FFFF, 0x0100_0000, 0x00FF_FFFF, 1)));
        return score.array(int[].class).ofMinSize(0).ofMaxSize(400);
    }

    @Provide
    Arbitrary<Long> ks() {
        return Arbitraries.oneOf(Arbitraries.longs().between(-2, 450), Arbitraries.of(Long.MAX_VALUE));
    }

    @Property(tries = 1000)
    void matchesSortBasedReference(@ForAll("scores") int[] scores, @ForAll("ks") long k) {
        AtomicInteger calls = new AtomicInteger();
        Histogram h = ThresholdSearch.overArray(scores);
        Threshold t = ThresholdSearch.find(k, (shift, prefix, mask) -> {
            calls.incrementAndGet();
            return h.count(shift, prefix, mask);
        });

        long[] nonzero = Arrays.stream(scores).mapToLong(Integer::toUnsignedLong).filter(s -> s != 0).toArray();
        long wanted = Math.max(0, Math.min(k, nonzero.length));
        assertTrue(calls.get() <= 4, "histogram calls: " + calls.get());
        assertTrue(t.value() >= 1, t.toString());
        assertEquals(wanted, t.above() + t.tiesToTake(), t.toString());
        assertEquals(countAbove(nonzero, t.value()), t.above(), t.toString());
        assertTrue(countAtLeast(nonzero, t.value()) >= t.above() + t.tiesToTake(), t.toString());
        if (wanted == 0) {
            assertEquals(NOTHING, t);
        } else {
            // What the threshold admits is exactly the `wanted` highest scores, as a sort finds them.
            long[] sorted = nonzero.clone();
            Arrays.sort(sorted);
            long[] highest = Arrays.copyOfRange(sorted, sorted.length - (int) wanted, sorted.length);
            long[] admitted = new long[(int) wanted];
            int n = 0;
            for (long s : sorted) {
                if (s > t.value()) {
                    admitted[n++] = s;
                }
            }
            for (long i = 0; i < t.tiesToTake(); i++) {
                admitted[n++] = t.value();
            }
            Arrays.sort(admitted);
            assertArrayEquals(highest, admitted, t.toString());
        }
        if (wanted > 0 && wanted == nonzero.length) {
            assertEquals(1, t.value(), "all nonzero scores wanted: " + t);
        } else if (wanted > 0) {
            long[] sorted = nonzero.clone();
            Arrays.sort(sorted);
            assertEquals(sorted[sorted.length - (int) wanted], t.value(), "the k-th highest score: " + t);
        }
    }

    @Test
    void takesTheHighestAndSplitsTies() {
        int[] scores = {5, 5, 5, 3, 0, 7};
        assertEquals(new Threshold(7, 0, 1), ThresholdSearch.find(1, ThresholdSearch.overArray(scores)));
        assertEquals(new Threshold(5, 1, 1), ThresholdSearch.find(2, ThresholdSearch.overArray(scores)));
        assertEquals(new Threshold(5, 1, 3), ThresholdSearch.find(4, ThresholdSearch.overArray(scores)));
        assertEquals(new Threshold(3, 4, 1), ThresholdSearch.find(5, ThresholdSearch.overArray(new int[] {5, 5, 5, 3, 0, 7, 3})));
        assertEquals(new Threshold(1, 5, 0), ThresholdSearch.find(5, ThresholdSearch.overArray(scores)));
    }

    @Test
    void scoresAreUnsigned() {
        int[] scores = {0x7FFF_FFFF, -1, 0x8000_0000, 1};
        assertEquals(new Threshold(0xFFFF_FFFFL, 0, 1), ThresholdSearch.find(1, ThresholdSearch.overArray(scores)));
        assertEquals(new Threshold(0x8000_0000L, 1, 1), ThresholdSearch.find(2, ThresholdSearch.overArray(scores)));
    }

    @Test
    void kOfZeroOrLessAsksForNothing() {
        Histogram never = (shift, prefix, mask) -> {
            throw new AssertionError("no histogram should be needed");
        };
        assertEquals(NOTHING, ThresholdSearch.find(0, never));
        assertEquals(NOTHING, ThresholdSearch.find(-3, never));
    }

    @Test
    void allZerosAdmitNothingAfterOnePass() {
        AtomicInteger calls = new AtomicInteger();
        Histogram h = ThresholdSearch.overArray(new int[100]);
        assertEquals(NOTHING, ThresholdSearch.find(10, (s, p, m) -> {
            calls.incrementAndGet();
            return h.count(s, p, m);
        }));
        assertEquals(1, calls.get());
        assertEquals(NOTHING, ThresholdSearch.find(10, ThresholdSearch.overArray(new int[0])));
    }

    @Test
    void kBeyondTheNonzeroCountAdmitsEverythingAccessed() {
        int[] scores = {0, 1, 1, 0x0300_0005, 0, 9, 1};
        // value 1: every accessed bucket; above = scores > 1, ties = the scores equal to 1
        assertEquals(new Threshold(1, 2, 3), ThresholdSearch.find(5, ThresholdSearch.overArray(scores)));
        assertEquals(new Threshold(1, 2, 3), ThresholdSearch.find(1000, ThresholdSearch.overArray(scores)));
        int[] noOnes = {0, 0x0300_0005, 9};
        assertEquals(new Threshold(1, 2, 0), ThresholdSearch.find(7, ThresholdSearch.overArray(noOnes)));
    }

    @Test
    void usesTheFourDigitPassesInOrder() {
        StringBuilder log = new StringBuilder();
        Histogram h = ThresholdSearch.overArray(new int[] {0x1234_5678, 0x1234_5600, 0x1234_0000, 0x1200_0000});
        Threshold t = ThresholdSearch.find(1, (shift, prefix, mask) -> {
            log.append(String.format("%d:%x/%x ", shift, prefix, mask));
            return h.count(shift, prefix, mask);
        });
        assertEquals("24:0/0 16:12000000/ff000000 8:12340000/ffff0000 0:12345600/ffffff00 ", log.toString());
        assertEquals(new Threshold(0x1234_5678L, 0, 1), t);
    }

    @Test
    void rejectsBrokenHistograms() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> ThresholdSearch.find(1, (s, p, m) -> new long[255]));
        assertTrue(e.getMessage().contains("256") && e.getMessage().contains("255"), e.getMessage());

        long[] bad = new long[256];
        bad[3] = -1;
        assertThrows(IllegalStateException.class, () -> ThresholdSearch.find(1, (s, p, m) -> bad));

        // A kernel bug that loses scores between passes must not go unnoticed.
        e = assertThrows(IllegalStateException.class, () -> ThresholdSearch.find(1, (s, p, m) -> {
            long[] c = new long[256];
            c[9] = s == 24 ? 5 : 4;
            return c;
        }));
        assertTrue(e.getMessage().contains("shift 16") && e.getMessage().contains("5"), e.getMessage());
    }

    @Test
    void thresholdIsValidated() {
        assertThrows(IllegalArgumentException.class, () -> new Threshold(0, 0, 0));
        assertThrows(IllegalArgumentException.class, () -> new Threshold(ThresholdSearch.ADMIT_NOTHING + 1, 0, 0));
        assertThrows(IllegalArgumentException.class, () -> new Threshold(5, -1, 0));
        assertThrows(IllegalArgumentException.class, () -> new Threshold(5, 0, -1));
    }

    private static long countAbove(long[] scores, long value) {
        return Arrays.stream(scores).filter(s -> s > value).count();
    }

    private static long countAtLeast(long[] scores, long value) {
        return Arrays.stream(scores).filter(s -> s >= value).count();
    }
}
