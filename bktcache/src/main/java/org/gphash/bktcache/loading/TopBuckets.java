package org.gphash.bktcache.loading;

import java.util.Objects;

/**
 * The loading phase's selection, in plain Java: the reference the GPU selection is tested against, and
 * the selection of the hit-rate simulator ({@code org.gphash.bench.cache.FrozenCacheSimulator} in bench-ycsb).
 *
 * <p>The rule, for a cache of {@code k} buckets:
 * <ol>
 *   <li>{@link ThresholdSearch#find} gives the threshold admitting the {@code k} highest nonzero scores.
 *       A bucket is <em>hot</em> in this period if its score is at least the threshold value: it is as
 *       hot as the k-th hottest bucket, ties included, so there may be more than {@code k} hot
 *       buckets.</li>
 *   <li>Without scan guard, the load admits the buckets above the threshold value, then
 *       {@code tiesToTake} of the buckets equal to it, in ascending bucket id.</li>
 *   <li>With scan guard, only the buckets hot in the previous period are candidates: the load runs the
 *       same search again on the scores of the candidates (the others counting as 0) and admits its
 *       result the same way. A scan touches a bucket in one period, so its buckets are never
 *       candidates, and the room they would take goes to the next hottest candidates. The price: a
 *       bucket that just turned hot waits one period, and the first load admits nothing.</li>
 * </ol>
 *
 * <p>Ties at the threshold are taken in ascending bucket id here; the GPU takes them in an unspecified
 * order (whichever thread wins the atomic), so differential tests compare only selections without
 * partial ties, or compare how many tied buckets were taken.
 */
public final class TopBuckets {

    private TopBuckets() {
    }

    /**
     * Selects the buckets to cache.
     *
     * @param scores        one 32-bit unsigned score per bucket, indexed by bucket id
     * @param k             how many buckets the cache holds
     * @param scanGuard     whether only buckets hot in the previous period are candidates
     * @param previouslyHot the previous period's hot marks; required with scan guard, ignored without
     * @param nowHotOut     receives this period's hot marks when not null; required with scan guard,
     *                      since the next load needs them. Must not be {@code previouslyHot} itself.
     * @return the admitted bucket ids, ascending; at most {@code k}
     */
    public static long[] select(int[] scores, long k, boolean scanGuard, boolean[] previouslyHot,
                                boolean[] nowHotOut) {
        Objects.requireNonNull(scores, "scores");
        if (scanGuard) {
            requireLength("previouslyHot", previouslyHot, scores.length);
            requireLength("nowHotOut", nowHotOut, scores.length);
            if (nowHotOut == previouslyHot) {
                throw new IllegalArgumentException("nowHotOut must be a different array from previouslyHot");
            }
        } else if (nowHotOut != null) {
            requireLength("nowHotOut", nowHotOut, scores.length);
        }
        ThresholdSearch.Threshold hottest = ThresholdSearch.find(k, ThresholdSearch.overArray(scores));
        if (!scanGuard) {
            markHot(scores, hottest, nowHotOut);
            return take(scores, hottest);
        }
        int[] candidates = new int[scores.length];
        for (int b = 0; b < scores.length; b++) {
            candidates[b] = previouslyHot[b] ? scores[b] : 0;
        }
        markHot(scores, hottest, nowHotOut);
        return take(candidates, ThresholdSearch.find(k, ThresholdSearch.overArray(candidates)));
    }

    private static void markHot(int[] scores, ThresholdSearch.Threshold hottest, boolean[] hotOut) {
        if (hotOut != null) {
            for (int b = 0; b < scores.length; b++) {
                hotOut[b] = Integer.toUnsignedLong(scores[b]) >= hottest.value();
            }
        }
    }

    /** The buckets a threshold admits: all above its value, then its ties in ascending bucket id. */
    private static long[] take(int[] scores, ThresholdSearch.Threshold t) {
        long[] chosen = new long[Math.toIntExact(t.admitted())];
        int size = 0;
        long tiesLeft = t.tiesToTake();
        for (int b = 0; b < scores.length; b++) {
            long score = Integer.toUnsignedLong(scores[b]);
            if (score > t.value()) {
                chosen[size++] = b;
            } else if (score == t.value() && tiesLeft > 0) {
                chosen[size++] = b;
                tiesLeft--;
            }
        }
        return chosen;
    }

    private static void requireLength(String name, boolean[] array, int length) {
        if (array == null) {
            throw new IllegalArgumentException(name + " must not be null with scan guard");
        }
        if (array.length != length) {
            throw new IllegalArgumentException(name + " must have one entry per bucket (" + length + "), had "
                    + array.length);
        }
    }
}
