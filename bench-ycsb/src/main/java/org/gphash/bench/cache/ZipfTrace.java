package org.gphash.bench.cache;

import java.util.SplittableRandom;

import org.gphash.cli.ZipfianGenerator;

/**
 * A zipfian stream of bucket ids, for {@link FrozenCacheSimulator}: the bucket of popularity rank r
 * (0 = hottest) is drawn with probability proportional to 1/(r+1)<sup>theta</sup>.
 *
 * <p>Ranks come from {@link ZipfianGenerator} (the closed-form approximation of Gray et al., the one
 * YCSB uses: one uniform draw per sample, no rejection).
 * Ranks are then mapped to bucket ids through a seeded random permutation, so hot buckets are spread
 * over the table as hashing spreads hot keys, rather than packed at its start.
 *
 * <p>Deterministic for a given seed. Not thread-safe.
 */
public final class ZipfTrace {

    private final int buckets;
    private final double theta;
    private final ZipfianGenerator ranks;
    private final int[] bucketOfRank;
    private final SplittableRandom random;

    /**
     * A generator of zipfian bucket ids, the popularity ranks shuffled over the ids.
     *
     * @param buckets how many distinct bucket ids, 0 to buckets-1; at least 2
     * @param theta   skew, strictly between 0 and 1 (YCSB's default is 0.99)
     * @param seed    seeds both the permutation and the draws
     */
    public ZipfTrace(int buckets, double theta, long seed) {
        if (buckets < 2) {
            throw new IllegalArgumentException("buckets must be >= 2, was " + buckets);
        }
        if (!(theta > 0 && theta < 1)) {
            throw new IllegalArgumentException("theta must be in (0, 1), was " + theta);
        }
        this.buckets = buckets;
        this.theta = theta;
        this.ranks = new ZipfianGenerator(buckets, theta);
        this.random = new SplittableRandom(seed);
        this.bucketOfRank = permutation(buckets, random.split());
    }

    /**
     * Convenience: {@code accesses} draws from a fresh generator.
     *
     * @param buckets  distinct bucket ids
     * @param accesses draws
     * @param theta    skew
     * @param seed     seed
     * @return the bucket ids drawn
     */
    public static int[] generate(int buckets, int accesses, double theta, long seed) {
        return new ZipfTrace(buckets, theta, seed).next(accesses);
    }

    /** {@return the next bucket id} */
    public int next() {
        return bucketOfRank[nextRank()];
    }

    /**
     * The next {@code accesses} bucket ids.
     *
     * @param accesses how many
     * @return the ids
     */
    public int[] next(int accesses) {
        if (accesses < 0) {
            throw new IllegalArgumentException("accesses must be >= 0, was " + accesses);
        }
        int[] trace = new int[accesses];
        for (int i = 0; i < accesses; i++) {
            trace[i] = next();
        }
        return trace;
    }

    /**
     * The bucket id of popularity rank {@code rank}, 0 being the hottest.
     *
     * @param rank the rank
     * @return the id
     */
    public int bucketOfRank(int rank) {
        return bucketOfRank[rank];
    }

    /** {@return how many distinct bucket ids} */
    public int buckets() {
        return buckets;
    }

    /** {@return the skew} */
    public double theta() {
        return theta;
    }

    private int nextRank() {
        return (int) ranks.next(random);
    }

    /** A uniformly random permutation of 0..n-1 (Fisher-Yates). */
    private static int[] permutation(int n, SplittableRandom random) {
        int[] p = new int[n];
        for (int i = 0; i < n; i++) {
            p[i] = i;
        }
        for (int i = n - 1; i > 0; i--) {
            int j = random.nextInt(i + 1);
            int t = p[i];
            p[i] = p[j];
            p[j] = t;
        }
        return p;
    }
}
