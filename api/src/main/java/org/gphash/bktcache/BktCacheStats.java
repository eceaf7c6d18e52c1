package org.gphash.bktcache;

import java.io.Serializable;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * A snapshot of BktCache's counters.
 *
 * @param policy           the ranking policy in force
 * @param share            the configured fraction of buckets to cache, 0 to 1
 * @param capacityBuckets  buckets the cache may hold for the table's current size
 * @param cachedBuckets    buckets it holds now
 * @param hits             operations whose bucket was in the cache
 * @param misses           operations whose bucket was not
 * @param reloads          loading phases completed
 * @param lastReloadNanos  duration of the last load, 0 before the first
 * @param totalReloadNanos duration of all loads together
 * @param abandonedFetches loads whose fetch was dropped before it was installed (for instance because
 *                         the table resized under it)
 */
public record BktCacheStats(
        CachePolicy policy,
        double share,
        long capacityBuckets,
        long cachedBuckets,
        long hits,
        long misses,
        long reloads,
        long lastReloadNanos,
        long totalReloadNanos,
        long abandonedFetches) implements Serializable {

    private static final BktCacheStats DISABLED = new BktCacheStats(CachePolicy.LFU, 0, 0, 0, 0, 0, 0, 0, 0, 0);

    /** Checks the figures: none may be negative, the share lies in [0, 1]. */
    public BktCacheStats {
        Objects.requireNonNull(policy, "policy must not be null");
        if (!(share >= 0 && share <= 1)) {
            throw new IllegalArgumentException("share must be in [0, 1], was " + share);
        }
        requireNonNegative("capacityBuckets", capacityBuckets);
        requireNonNegative("cachedBuckets", cachedBuckets);
        requireNonNegative("hits", hits);
        requireNonNegative("misses", misses);
        requireNonNegative("reloads", reloads);
        requireNonNegative("lastReloadNanos", lastReloadNanos);
        requireNonNegative("totalReloadNanos", totalReloadNanos);
        requireNonNegative("abandonedFetches", abandonedFetches);
    }

    /** {@return the stats of a cache that is off: all zero, policy LFU, share 0} */
    public static BktCacheStats disabled() {
        return DISABLED;
    }

    /** {@return hits / (hits + misses), or 0 before any operation} */
    public double hitRate() {
        double lookups = (double) hits + (double) misses;
        return lookups == 0 ? 0 : hits / lookups;
    }

    /**
     * The figures of several caches as one (a sharded index's shards, each with its own cache): counts,
     * buckets and load times summed, the last load the longest of the last loads, the policy and share
     * the first's (a sharded index gives every shard the same configuration).
     *
     * @param caches at least one cache's figures
     * @return their total
     */
    public static BktCacheStats total(List<BktCacheStats> caches) {
        if (caches.isEmpty()) {
            throw new IllegalArgumentException("no caches to total");
        }
        long capacity = 0;
        long cached = 0;
        long hits = 0;
        long misses = 0;
        long reloads = 0;
        long last = 0;
        long total = 0;
        long abandoned = 0;
        for (BktCacheStats c : caches) {
            capacity += c.capacityBuckets;
            cached += c.cachedBuckets;
            hits += c.hits;
            misses += c.misses;
            reloads += c.reloads;
            last = Math.max(last, c.lastReloadNanos);
            total += c.totalReloadNanos;
            abandoned += c.abandonedFetches;
        }
        BktCacheStats first = caches.get(0);
        return new BktCacheStats(first.policy, first.share, capacity, cached, hits, misses, reloads, last, total, abandoned);
    }

    /**
     * For example {@code bktcache: LFU 20% 1234/5000 buckets, hit rate 0.873 (hits=873 misses=127),
     * reloads=3 (last 12.3 ms, total 30.1 ms), abandoned fetches=0}.
     */
    @Override
    public String toString() {
        return String.format(Locale.ROOT,
                "bktcache: %s %s%% %d/%d buckets, hit rate %.3f (hits=%d misses=%d), reloads=%d "
                        + "(last %.1f ms, total %.1f ms), abandoned fetches=%d",
                policy, percent(share), cachedBuckets, capacityBuckets, hitRate(), hits, misses, reloads,
                lastReloadNanos / 1e6, totalReloadNanos / 1e6, abandonedFetches);
    }

    /** 0.2 as "20", 0.125 as "12.5": at most two decimals, none that are zero. */
    private static String percent(double share) {
        return BigDecimal.valueOf(share * 100).setScale(2, RoundingMode.HALF_UP).stripTrailingZeros()
                .toPlainString();
    }

    private static void requireNonNegative(String name, long value) {
        if (value < 0) {
            throw new IllegalArgumentException(name + " must be >= 0, was " + value);
        }
    }
}
