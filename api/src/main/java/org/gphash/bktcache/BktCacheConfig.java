package org.gphash.bktcache;

import java.time.Duration;
import java.util.Objects;

/**
 * Settings of BktCache, the frozen cache of hot buckets in GPU memory (GPHash &sect;3.3). Immutable;
 * build one with {@link #builder()} or start from {@link #defaults()}.
 *
 * <p>A loading phase ranks all buckets by the {@link #policy()}'s score and copies the best
 * {@link #capacityFor(long) share} of them into GPU memory; membership then stays frozen until the
 * next load, which runs every {@link #reloadEveryOperations()} operations and/or every
 * {@link #reloadEvery()}.
 */
public final class BktCacheConfig {

    /** Default fraction of the buckets held in GPU memory. */
    public static final double DEFAULT_SHARE = 0.20;
    /** Default operations between two loads: 2<sup>22</sup>. */
    public static final long DEFAULT_RELOAD_EVERY_OPERATIONS = 1L << 22;
    /** Default sampling: one access in 2<sup>2</sup> increments a counter. */
    public static final int DEFAULT_COUNTER_SAMPLE_SHIFT = 2;
    /** Largest accepted {@link #counterSampleShift()}: sampling 1 in 256 is already coarse. */
    public static final int MAX_COUNTER_SAMPLE_SHIFT = 8;
    /**
     * Where no {@link #maxBytes()} is set, the cache's copies take at most this fraction of the GPU
     * memory free when it is first sized.
     */
    public static final double DEFAULT_FREE_MEMORY_SHARE = 0.25;

    private static final BktCacheConfig DEFAULTS = new Builder().build();

    /** The cache turned off: share 0, everything else at its default. */
    public static final BktCacheConfig DISABLED = new Builder().share(0).build();

    private final double share;
    private final CachePolicy policy;
    private final long reloadEveryOperations;
    private final Duration reloadEvery;
    private final boolean concurrentFetch;
    private final boolean scanGuard;
    private final int counterSampleShift;
    private final long maxBytes;

    private BktCacheConfig(Builder b) {
        this.share = b.share;
        this.policy = b.policy;
        this.reloadEveryOperations = b.reloadEveryOperations;
        this.reloadEvery = b.reloadEvery;
        this.concurrentFetch = b.concurrentFetch;
        this.scanGuard = b.scanGuard;
        this.counterSampleShift = b.counterSampleShift;
        this.maxBytes = b.maxBytes;
    }

    /** {@return a builder holding the defaults ({@link #defaults()})} */
    public static Builder builder() {
        return new Builder();
    }

    /** {@return the defaults: share 0.20, LFU, a load every 2<sup>22</sup> operations, concurrent fetch, no scan guard} */
    public static BktCacheConfig defaults() {
        return DEFAULTS;
    }

    /** {@return a builder holding this configuration's values} */
    public Builder toBuilder() {
        return new Builder(this);
    }

    /** {@return the fraction of all buckets held in the cache, from 0 (off) to 1} */
    public double share() {
        return share;
    }

    /** {@return how the buckets to cache are chosen: LFU (access counts), LRU or RANDOM} */
    public CachePolicy policy() {
        return policy;
    }

    /** {@return after how many operations since the last load the next one runs; 0 means never by count} */
    public long reloadEveryOperations() {
        return reloadEveryOperations;
    }

    /** {@return after how much time since the last load the next one also runs; {@link Duration#ZERO} means never by time} */
    public Duration reloadEvery() {
        return reloadEvery;
    }

    /**
     * Whether a load copies buckets on its own stream while operations go on (true), or operations wait
     * for the load to finish (false, the paper's Figure 15 baseline).
     *
     * @return true if loads run beside operations
     */
    public boolean concurrentFetch() {
        return concurrentFetch;
    }

    /**
     * Whether a bucket needs to be among the hottest in two successive periods to be admitted (the lesson
     * of Catalyst against scans). A scan touches each bucket in one period only, so its buckets never
     * qualify and the room goes to the next hottest buckets that do; the price is that a newly hot bucket
     * waits one more period. The loading package's {@code TopBuckets} states the exact rule.
     *
     * @return true if a bucket must be hot in two periods to be admitted
     */
    public boolean scanGuard() {
        return scanGuard;
    }

    /**
     * An access increments its bucket's counter with probability 1/2<sup>shift</sup>. Sampling keeps the
     * hottest buckets, whose counters every warp would otherwise hammer, from serialising on atomics to
     * one word; the ranking survives because hot buckets are sampled often anyway.
     *
     * @return the shift
     */
    public int counterSampleShift() {
        return counterSampleShift;
    }

    /**
     * GPU memory the cached buckets' copies may take at most, 0 for the default: {@link
     * #DEFAULT_FREE_MEMORY_SHARE} of the memory free when the cache is first sized. A bucket's copy
     * holds its slots with their values at the pool's value size, so a share of the buckets that is a
     * few MiB with values of 128 bytes is thousands of times that with values of 1 MiB; this bound keeps
     * such a pool openable and a resize from failing for want of GPU memory (issue 53).
     *
     * @return the bytes, or 0 for the default
     */
    public long maxBytes() {
        return maxBytes;
    }

    /** {@return whether the cache holds anything at all: {@code share() > 0}} */
    public boolean enabled() {
        return share > 0;
    }

    /**
     * Buckets the cache holds for a table of {@code totalBuckets} buckets: {@code floor(share * total)},
     * but at least 1 when enabled and the table is not empty (a tiny share still means "cache
     * something"), and never more than the table. 0 when disabled.
     *
     * @throws IllegalArgumentException if {@code totalBuckets} is negative
     *
     * @param totalBuckets buckets of the table
     * @return buckets the cache holds
     */
    public long capacityFor(long totalBuckets) {
        if (totalBuckets < 0) {
            throw new IllegalArgumentException("totalBuckets must be >= 0, was " + totalBuckets);
        }
        if (!enabled() || totalBuckets == 0) {
            return 0;
        }
        long floor = (long) Math.floor(share * totalBuckets);
        // share * total is a double: for tables beyond 2^53 buckets it may round above the table.
        return Math.min(totalBuckets, Math.max(1, floor));
    }

    /**
     * Buckets the cache holds for a table of {@code totalBuckets} buckets whose copies take {@code
     * bucketBytes} each, where {@code freeGpuBytes} are free: {@link #capacityFor(long)}, but no more
     * than {@link #maxBytes()} (or the default's share of the free memory) holds; 0 where not even one
     * bucket fits.
     *
     * @throws IllegalArgumentException if an argument is negative, or {@code bucketBytes} is 0
     *
     * @param totalBuckets buckets of the table
     * @param bucketBytes bytes of one bucket's copy in the cache
     * @param freeGpuBytes GPU memory free when the cache is first sized
     * @return buckets the cache holds
     */
    public long capacityFor(long totalBuckets, long bucketBytes, long freeGpuBytes) {
        if (bucketBytes <= 0 || freeGpuBytes < 0) {
            throw new IllegalArgumentException("bucketBytes must be > 0 and freeGpuBytes >= 0, were " + bucketBytes
                    + " and " + freeGpuBytes);
        }
        long budget = maxBytes > 0 ? maxBytes : (long) (DEFAULT_FREE_MEMORY_SHARE * freeGpuBytes);
        return Math.min(capacityFor(totalBuckets), budget / bucketBytes);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof BktCacheConfig c
                && Double.compare(share, c.share) == 0
                && policy == c.policy
                && reloadEveryOperations == c.reloadEveryOperations
                && reloadEvery.equals(c.reloadEvery)
                && concurrentFetch == c.concurrentFetch
                && scanGuard == c.scanGuard
                && counterSampleShift == c.counterSampleShift
                && maxBytes == c.maxBytes;
    }

    @Override
    public int hashCode() {
        return Objects.hash(share, policy, reloadEveryOperations, reloadEvery, concurrentFetch, scanGuard,
                counterSampleShift, maxBytes);
    }

    @Override
    public String toString() {
        return "BktCacheConfig{share=" + share
                + ", policy=" + policy
                + ", reloadEveryOperations=" + reloadEveryOperations
                + ", reloadEvery=" + reloadEvery
                + ", concurrentFetch=" + concurrentFetch
                + ", scanGuard=" + scanGuard
                + ", counterSampleShift=" + counterSampleShift
                + ", maxBytes=" + maxBytes
                + '}';
    }

    /**
     * Builds a {@link BktCacheConfig}. Each setter checks its value at once, so a bad value is reported
     * where it was given. Not thread-safe.
     */
    public static final class Builder {

        private double share = DEFAULT_SHARE;
        private CachePolicy policy = CachePolicy.LFU;
        private long reloadEveryOperations = DEFAULT_RELOAD_EVERY_OPERATIONS;
        private Duration reloadEvery = Duration.ZERO;
        private boolean concurrentFetch = true;
        private boolean scanGuard = false;
        private int counterSampleShift = DEFAULT_COUNTER_SAMPLE_SHIFT;
        private long maxBytes;

        private Builder() {
        }

        private Builder(BktCacheConfig c) {
            this.share = c.share;
            this.policy = c.policy;
            this.reloadEveryOperations = c.reloadEveryOperations;
            this.reloadEvery = c.reloadEvery;
            this.concurrentFetch = c.concurrentFetch;
            this.scanGuard = c.scanGuard;
            this.counterSampleShift = c.counterSampleShift;
            this.maxBytes = c.maxBytes;
        }

        /**
         * Sets {@link BktCacheConfig#share()}.
         *
         * @param share from 0 (off) to 1
         * @return this builder
         */
        public Builder share(double share) {
            if (!(share >= 0 && share <= 1)) { // also rejects NaN
                throw new IllegalArgumentException("share must be in [0, 1], was " + share);
            }
            this.share = share + 0.0; // -0.0 becomes 0.0, so equal configs compare equal
            return this;
        }

        /**
         * Sets {@link BktCacheConfig#policy()}.
         *
         * @param policy LFU, LRU or RANDOM
         * @return this builder
         */
        public Builder policy(CachePolicy policy) {
            this.policy = Objects.requireNonNull(policy, "policy must not be null");
            return this;
        }

        /**
         * Sets {@link BktCacheConfig#reloadEveryOperations()}.
         *
         * @param operations operations between loads (0: never by count)
         * @return this builder
         */
        public Builder reloadEveryOperations(long operations) {
            if (operations < 0) {
                throw new IllegalArgumentException(
                        "reloadEveryOperations must be >= 0 (0 = never by count), was " + operations);
            }
            this.reloadEveryOperations = operations;
            return this;
        }

        /**
         * Sets {@link BktCacheConfig#reloadEvery()}.
         *
         * @param interval time between loads ({@link Duration#ZERO}: never by time)
         * @return this builder
         */
        public Builder reloadEvery(Duration interval) {
            Objects.requireNonNull(interval, "reloadEvery must not be null (Duration.ZERO = never by time)");
            if (interval.isNegative()) {
                throw new IllegalArgumentException(
                        "reloadEvery must be >= 0 (Duration.ZERO = never by time), was " + interval);
            }
            this.reloadEvery = interval;
            return this;
        }

        /**
         * Sets {@link BktCacheConfig#concurrentFetch()}.
         *
         * @param concurrentFetch whether loads run beside operations
         * @return this builder
         */
        public Builder concurrentFetch(boolean concurrentFetch) {
            this.concurrentFetch = concurrentFetch;
            return this;
        }

        /**
         * Sets {@link BktCacheConfig#scanGuard()}.
         *
         * @param scanGuard whether admission needs two hot periods
         * @return this builder
         */
        public Builder scanGuard(boolean scanGuard) {
            this.scanGuard = scanGuard;
            return this;
        }

        /**
         * Sets {@link BktCacheConfig#counterSampleShift()}.
         *
         * @param shift from 0 (count every access) to {@link #MAX_COUNTER_SAMPLE_SHIFT}
         * @return this builder
         */
        public Builder counterSampleShift(int shift) {
            if (shift < 0 || shift > MAX_COUNTER_SAMPLE_SHIFT) {
                throw new IllegalArgumentException("counterSampleShift must be in [0, "
                        + MAX_COUNTER_SAMPLE_SHIFT + "], was " + shift);
            }
            this.counterSampleShift = shift;
            return this;
        }

        /**
         * Sets {@link BktCacheConfig#maxBytes()}.
         *
         * @param bytes GPU memory the copies may take at most (0: the default share of the free memory)
         * @return this builder
         */
        public Builder maxBytes(long bytes) {
            if (bytes < 0) {
                throw new IllegalArgumentException("maxBytes must be >= 0 (0 = "
                        + DEFAULT_FREE_MEMORY_SHARE + " of the GPU memory free), was " + bytes);
            }
            this.maxBytes = bytes;
            return this;
        }

        /** {@return the configuration} */
        public BktCacheConfig build() {
            return new BktCacheConfig(this);
        }
    }
}
