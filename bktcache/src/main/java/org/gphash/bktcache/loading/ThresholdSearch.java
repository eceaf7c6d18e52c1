package org.gphash.bktcache.loading;

import java.util.Objects;

/**
 * The loading phase's radix select in Java: finds the score threshold that admits the {@code k}
 * highest nonzero scores, given a histogram per pass. It is the reference for the kernels' select
 * (cache_select.cuh, which walks the same digits on the GPU; CacheSelectAgreementTest holds the two
 * to each other) and the select of the hit-rate simulator.
 *
 * <p>Scores are 32-bit unsigned values (held in Java {@code int}s or {@code long}s from 0 to
 * 2<sup>32</sup>-1); 0 means "never accessed" and is never admitted. The search goes most significant
 * digit first, four passes of 8-bit digits (shifts 24, 16, 8, 0). Each pass asks for a histogram of the
 * scores that share the digits chosen so far, and picks the digit to descend into: the one holding the
 * k-th highest remaining score. Everything in higher digits is admitted outright. After the last pass
 * the prefix is the full threshold value, and the k-th score's ties are split: only
 * {@link Threshold#tiesToTake()} of them fit.
 *
 * <p>So the threshold value is the k-th highest score, except when {@code k} reaches the number of
 * nonzero scores: then any value from 1 to the lowest score admits them all, and the descent follows the
 * lowest digits instead, ending at the threshold 1, "admit anything accessed", with {@code above}
 * counting the scores above 1 and the ties the scores equal to 1.
 */
public final class ThresholdSearch {

    /** 8-bit digits, most significant first: the shift of each pass in order. */
    private static final int DIGIT_BITS = 8;
    private static final int DIGITS = 1 << DIGIT_BITS;
    private static final int[] SHIFTS = {24, 16, 8, 0};

    /** One past the largest 32-bit unsigned score: a threshold that admits nothing. */
    public static final long ADMIT_NOTHING = 0x1_0000_0000L;

    private static final Threshold NOTHING = new Threshold(ADMIT_NOTHING, 0, 0);

    private ThresholdSearch() {
    }

    /** Source of the per-pass histograms: the GPU kernel, or {@link #overArray(int[])} on the host. */
    @FunctionalInterface
    public interface Histogram {
        /**
         * Counts of the scores s with s != 0 and (s &amp; prefixMask) == prefix, by digit
         * (s &gt;&gt;&gt; shift) &amp; 0xFF. 256 entries.
         *
         * @param shift      the digit's lowest bit: 24, 16, 8 or 0
         * @param prefix     the higher digits fixed so far
         * @param prefixMask which bits {@code prefix} fixes
         * @return the counts
         */
        long[] count(int shift, long prefix, long prefixMask);
    }

    /**
     * Admit every score greater than {@code value}, plus {@code tiesToTake} of the scores equal to it.
     * {@code above + tiesToTake} is {@code min(k, number of nonzero scores)}. {@code value} is at least 1,
     * since 0 (never accessed) is never admitted; {@link #ADMIT_NOTHING} (2<sup>32</sup>, above every
     * score) with no ties means the load admits nothing.
     *
     * @param value      the threshold score, 1 to 2<sup>32</sup>
     * @param above      how many scores are strictly greater than {@code value}
     * @param tiesToTake how many of the scores equal to {@code value} to admit
     */
    public record Threshold(long value, long above, long tiesToTake) {
        /** Checks the fields: each names what is wrong in its exception. */
        public Threshold {
            if (value < 1 || value > ADMIT_NOTHING) {
                throw new IllegalArgumentException("value must be in [1, 2^32], was " + value);
            }
            if (above < 0) {
                throw new IllegalArgumentException("above must be >= 0, was " + above);
            }
            if (tiesToTake < 0) {
                throw new IllegalArgumentException("tiesToTake must be >= 0, was " + tiesToTake);
            }
        }

        /** {@return how many buckets the threshold admits: {@code above + tiesToTake}} */
        public long admitted() {
            return above + tiesToTake;
        }
    }

    /**
     * Finds the threshold admitting the {@code k} highest nonzero scores (all of them if there are fewer),
     * calling {@code histogram} at most four times. Returns the {@link #ADMIT_NOTHING} threshold, without
     * asking for any histogram, when {@code k <= 0}, and after one histogram when no score is nonzero.
     *
     * @throws IllegalStateException if a histogram does not have 256 entries, holds a negative count, or
     *                               disagrees with the previous pass about how many scores share the prefix
     *
     * @param k         how many scores to admit
     * @param histogram where the counts come from
     * @return the threshold
     */
    public static Threshold find(long k, Histogram histogram) {
        Objects.requireNonNull(histogram, "histogram");
        if (k <= 0) {
            return NOTHING;
        }
        long prefix = 0;
        long prefixMask = 0;
        long above = 0;
        long want = -1;          // scores still to admit from under the prefix; set by the first pass
        boolean everything = false; // whether every nonzero score is admitted; set by the first pass
        long underPrefix = -1;   // how many scores the previous pass saw in the chosen digit
        for (int shift : SHIFTS) {
            long[] counts = histogram.count(shift, prefix, prefixMask);
            long total = checkedTotal(counts, shift, prefix, underPrefix);
            if (want < 0) {
                if (total == 0) {
                    return NOTHING;
                }
                want = Math.min(k, total);
                everything = want == total;
            }
            int digit;
            long higher = 0; // scores under the prefix in digits above `digit`
            if (everything) {
                // The prefix stays 0. At the last pass its digit 0 is the score 0, which is never counted.
                digit = shift == 0 ? 1 : 0;
                for (int d = DIGITS - 1; d > digit; d--) {
                    higher += counts[d];
                }
            } else {
                // The digit holding the want-th highest score; want <= total, so this stops at a digit in use.
                digit = DIGITS - 1;
                while (higher + counts[digit] < want) {
                    higher += counts[digit];
                    digit--;
                }
            }
            above += higher;
            want -= higher;
            underPrefix = counts[digit];
            prefix |= (long) digit << shift;
            prefixMask |= (long) (DIGITS - 1) << shift;
        }
        return new Threshold(prefix, above, want);
    }

    /** Sum of one pass's counts, after checking them. */
    private static long checkedTotal(long[] counts, int shift, long prefix, long expected) {
        if (counts == null || counts.length != DIGITS) {
            throw new IllegalStateException("histogram at shift " + shift + " must have " + DIGITS
                    + " entries, had " + (counts == null ? "null" : counts.length));
        }
        long total = 0;
        for (int d = 0; d < DIGITS; d++) {
            if (counts[d] < 0) {
                throw new IllegalStateException("histogram at shift " + shift + " has count " + counts[d]
                        + " for digit " + d);
            }
            total += counts[d];
        }
        if (expected >= 0 && total != expected) {
            throw new IllegalStateException("histogram at shift " + shift + " counts " + total
                    + " scores under prefix 0x" + Long.toHexString(prefix) + ", the previous pass counted "
                    + expected);
        }
        return total;
    }

    /**
     * A plain Java histogram over {@code scores}, each read as a 32-bit unsigned value: the reference the
     * GPU histogram kernel is tested against. The array is read on every call, not copied.
     *
     * @param scores one score per bucket
     * @return the histogram
     */
    public static Histogram overArray(int[] scores) {
        Objects.requireNonNull(scores, "scores");
        return (shift, prefix, prefixMask) -> {
            if (shift < 0 || shift > 24 || shift % DIGIT_BITS != 0) {
                throw new IllegalArgumentException("shift must be 0, 8, 16 or 24, was " + shift);
            }
            long[] counts = new long[DIGITS];
            for (int s : scores) {
                long score = Integer.toUnsignedLong(s);
                if (score != 0 && (score & prefixMask) == prefix) {
                    counts[(int) ((score >>> shift) & (DIGITS - 1))]++;
                }
            }
            return counts;
        };
    }
}
