package org.gphash.cli;

import java.util.Arrays;
import java.util.random.RandomGenerator;

/**
 * Zipf-distributed ranks in {@code [0, n)}: rank 0 is the most popular, rank {@code i} is drawn
 * with probability proportional to {@code 1 / (i + 1)^theta}.
 *
 * <p>This is the constant-time method of Gray, Sundaresan, Englert, Baclawski and Weinberger,
 * "Quickly Generating Billion-Record Synthetic Databases" (SIGMOD 1994), which YCSB's zipfian
 * request distribution also uses (YCSB's default constant is 0.99). After an O(n) set-up (the
 * zeta constant), each draw costs one uniform number and one {@code pow}: the two most popular
 * ranks are handled exactly and the rest by inverting a continuous approximation of the CDF.
 *
 * <p>That method divides by {@code 1 - theta}, so it covers {@code 0 < theta < 1}. For
 * {@code theta >= 1} (the heavier skews of the GPHash paper's Figure 12(b)) the generator keeps the
 * exact CDF instead, one {@code double} per rank (at most 2^31 ranks), and draws by binary search.
 *
 * <p>Immutable and thread-safe: the caller passes its own random source, so threads share one
 * generator (and its set-up) without sharing a random number stream.
 */
public final class ZipfianGenerator {

    /** YCSB's zipfian constant: a few keys are very hot, a long tail is cold. */
    public static final double DEFAULT_THETA = 0.99;

    /**
     * Up to this many terms the zeta sum is computed exactly; beyond, its tail is approximated
     * (see {@link #zeta}) so that set-up stays fast even for billions of items.
     */
    private static final long EXACT_ZETA_TERMS = 1L << 22;

    private final long n;
    private final double theta;
    private final double zetaN;
    private final double alpha;
    private final double eta;
    /** Threshold of rank 1: {@code 1 + 0.5^theta}, in units of the unnormalised CDF. */
    private final double secondRankLimit;
    /** For {@code theta >= 1}: the normalised CDF, rank by rank; null otherwise. */
    private final double[] cdf;

    /**
     * A generator of ranks in {@code [0, n)}; the set-up computes the zeta constant.
     *
     * @param n     how many ranks (items), at least 1 (at most 2^31 when {@code theta >= 1})
     * @param theta the skew, above 0 ({@code theta >= 1} keeps the exact CDF: 8 bytes per rank)
     * @throws IllegalArgumentException if either is out of range
     */
    public ZipfianGenerator(long n, double theta) {
        if (n < 1) {
            throw new IllegalArgumentException("a zipfian distribution needs at least 1 item, got " + n);
        }
        if (!(theta > 0 && Double.isFinite(theta))) {
            throw new IllegalArgumentException("zipfian theta must be above 0, got " + theta);
        }
        if (theta >= 1 && n > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("a zipfian distribution with theta >= 1 (exact CDF) holds at most 2^31 "
                    + "items, got " + n);
        }
        this.n = n;
        this.theta = theta;
        if (theta >= 1) {
            // The inversion below divides by (1 - theta): keep the exact CDF instead.
            cdf = new double[(int) n];
            double sum = 0;
            for (int i = 0; i < n; i++) {
                sum += Math.pow(i + 1, -theta);
                cdf[i] = sum;
            }
            for (int i = 0; i < n; i++) {
                cdf[i] /= sum;
            }
            zetaN = sum;
            alpha = 0;
            eta = 0;
            secondRankLimit = 0;
            return;
        }
        this.cdf = null;
        this.zetaN = zeta(n, theta);
        double zeta2 = zeta(2, theta);
        this.alpha = 1.0 / (1.0 - theta);
        this.eta = (1.0 - Math.pow(2.0 / n, 1.0 - theta)) / (1.0 - zeta2 / zetaN);
        this.secondRankLimit = 1.0 + Math.pow(0.5, theta);
    }

    /**
     * The next rank, in {@code [0, n)}; rank 0 is the hottest.
     *
     * @param random the caller's source of uniform numbers
     * @return the rank
     */
    public long next(RandomGenerator random) {
        double u = random.nextDouble();
        if (cdf != null) {
            int rank = Arrays.binarySearch(cdf, u);
            return rank >= 0 ? rank : Math.min(-rank - 1, cdf.length - 1);
        }
        double uz = u * zetaN;
        if (uz < 1.0) {
            return 0;
        }
        if (uz < secondRankLimit) {
            return n > 1 ? 1 : 0;
        }
        long rank = (long) (n * Math.pow(eta * u - eta + 1.0, alpha));
        // The approximation can land on n for u close to 1; clamp rather than leave the range.
        return Math.min(rank, n - 1);
    }

    /** {@return how many ranks} */
    public long items() {
        return n;
    }

    /** {@return the skew} */
    public double theta() {
        return theta;
    }

    /** {@return the probability of rank 0 (how hot the hottest key is)} */
    public double hottestProbability() {
        return 1.0 / zetaN;
    }

    /**
     * {@code zeta(n, theta) = sum_{i=1..n} 1 / i^theta}. Exact for up to {@link #EXACT_ZETA_TERMS}
     * terms; the rest of the sum is replaced by its Euler-Maclaurin estimate (integral plus two
     * correction terms), whose error for a smooth decreasing term this far out is far below the
     * rounding error of the exact part.
     */
    static double zeta(long n, double theta) {
        long exact = Math.min(n, EXACT_ZETA_TERMS);
        double sum = 0;
        // Smallest terms first: less rounding error in the double sum.
        for (long i = exact; i >= 1; i--) {
            sum += Math.pow(i, -theta);
        }
        if (n > exact) {
            double m = exact;
            double nn = n;
            double integral = (Math.pow(nn, 1 - theta) - Math.pow(m, 1 - theta)) / (1 - theta);
            double ends = (Math.pow(nn, -theta) - Math.pow(m, -theta)) / 2;
            double slopes = (-theta * Math.pow(nn, -theta - 1) + theta * Math.pow(m, -theta - 1)) / 12;
            sum += integral + ends + slopes;
        }
        return sum;
    }
}
