package org.gphash.bench.cache;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import org.gphash.bktcache.BktCacheConfig;
import org.gphash.bktcache.CachePolicy;
import org.gphash.bktcache.loading.TopBuckets;
import org.gphash.cli.Cli;
import org.gphash.cli.ToolVersion;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * Host-only hit-rate simulator of the frozen cache, for the sensitivity study of &sect;4.6: replays a
 * trace of bucket ids against a cache whose membership only changes at loading phases, and against
 * Caffeine, the dynamic cache (W-TinyLFU admission) that the frozen design gives up in exchange for
 * lookups that never write to GPU memory.
 *
 * <p>The frozen cache, given {@code k = config.capacityFor(totalBuckets)}:
 * <ul>
 *   <li>records each access exactly (no sampling: {@link BktCacheConfig#counterSampleShift()} is not
 *       used): LFU adds one to the bucket's counter, LRU stamps it with the current period number
 *       (1 for the first period), RANDOM records nothing;</li>
 *   <li>runs a load before every {@code period}-th access (never before the first), choosing the
 *       buckets with {@link TopBuckets#select} on the policy's scores, the scan guard as configured;
 *       LFU then halves every counter, RANDOM scores each bucket by a hash of its id and the load's
 *       sequence number;</li>
 *   <li>counts a hit when the accessed bucket is in the cache. The cache starts empty, so the first
 *       period is all misses; loads are instantaneous, so the timing settings are not used either.</li>
 * </ul>
 */
public final class FrozenCacheSimulator {

    private FrozenCacheSimulator() {
    }

    /**
     * The outcome of one replay.
     *
     * @param hitRate hits / (hits + misses), 0 for an empty trace
     * @param hits    accesses that found their bucket cached
     * @param misses  accesses that did not
     * @param loads   loading phases run (0 for Caffeine, which has none)
     */
    public record SimResult(double hitRate, long hits, long misses, long loads) {
        /** Checks the counts: none may be negative. */
        public SimResult {
            if (hits < 0 || misses < 0 || loads < 0) {
                throw new IllegalArgumentException("hits, misses and loads must be >= 0, were " + hits + ", "
                        + misses + ", " + loads);
            }
        }

        static SimResult of(long hits, long misses, long loads) {
            long lookups = hits + misses;
            return new SimResult(lookups == 0 ? 0 : (double) hits / lookups, hits, misses, loads);
        }
    }

    /**
     * Replays {@code trace} against a frozen cache.
     *
     * @param trace        bucket ids, each in [0, totalBuckets)
     * @param totalBuckets buckets in the table
     * @param config       share, policy and scan guard of the cache; its reload settings are not used
     * @param period       accesses between two loads, at least 1
     *
     * @return hit rate, hits, misses and loads
     */
    public static SimResult simulate(int[] trace, int totalBuckets, BktCacheConfig config, long period) {
        Objects.requireNonNull(trace, "trace");
        Objects.requireNonNull(config, "config");
        if (totalBuckets < 0) {
            throw new IllegalArgumentException("totalBuckets must be >= 0, was " + totalBuckets);
        }
        if (period < 1) {
            throw new IllegalArgumentException("period must be >= 1, was " + period);
        }
        long capacity = config.capacityFor(totalBuckets);
        CachePolicy policy = config.policy();
        boolean guard = config.scanGuard();
        int[] scores = new int[totalBuckets];
        boolean[] cached = new boolean[totalBuckets];
        boolean[] previouslyHot = guard ? new boolean[totalBuckets] : null;
        boolean[] nowHot = guard ? new boolean[totalBuckets] : null;
        long hits = 0;
        long loads = 0;
        for (int i = 0; i < trace.length; i++) {
            if (i > 0 && i % period == 0) {
                if (policy == CachePolicy.RANDOM) {
                    randomScores(scores, loads);
                }
                long[] chosen = TopBuckets.select(scores, capacity, guard, previouslyHot, nowHot);
                Arrays.fill(cached, false);
                for (long b : chosen) {
                    cached[(int) b] = true;
                }
                if (guard) {
                    boolean[] t = previouslyHot;
                    previouslyHot = nowHot;
                    nowHot = t;
                }
                if (policy == CachePolicy.LFU) {
                    for (int b = 0; b < totalBuckets; b++) {
                        scores[b] >>>= 1;
                    }
                }
                loads++;
            }
            int b = trace[i];
            if (b < 0 || b >= totalBuckets) {
                throw new IllegalArgumentException("trace[" + i + "] must be in [0, " + totalBuckets + "), was "
                        + b);
            }
            if (cached[b]) {
                hits++;
            }
            switch (policy) {
                case LFU -> {
                    if (scores[b] != -1) { // saturate at 2^32 - 1
                        scores[b]++;
                    }
                }
                case LRU -> scores[b] = (int) (loads + 1);
                case RANDOM -> { }
            }
        }
        return SimResult.of(hits, trace.length - hits, loads);
    }

    /**
     * Hit rate of {@code trace} through a Caffeine cache of {@code capacity} entries: a hit when the
     * bucket is present before the access, and a miss inserts it. Maintenance runs on the calling thread
     * ({@code executor(Runnable::run)}); since every miss's insert then drains the buffered reads at
     * once, the result depends only on the trace, apart from the rare random admission Caffeine uses
     * against hash flooding.
     *
     * @param trace    bucket ids
     * @param capacity entries the cache holds
     * @return hits / accesses
     */
    public static double caffeineHitRate(int[] trace, long capacity) {
        Objects.requireNonNull(trace, "trace");
        if (capacity < 0) {
            throw new IllegalArgumentException("capacity must be >= 0, was " + capacity);
        }
        Cache<Integer, Boolean> cache = Caffeine.newBuilder()
                .maximumSize(capacity)
                .executor(Runnable::run)
                .build();
        long hits = 0;
        for (int b : trace) {
            Integer key = b;
            if (cache.getIfPresent(key) != null) {
                hits++;
            } else {
                cache.put(key, Boolean.TRUE);
            }
        }
        return trace.length == 0 ? 0 : (double) hits / trace.length;
    }

    /**
     * A copy of {@code trace} in which every {@code every}-th access (the {@code every-1}-th, the
     * {@code 2*every-1}-th, ...) is replaced by the next bucket of a scan that cycles through all
     * buckets from 0: the pattern a scan guard has to resist.
     *
     * @param trace        bucket ids
     * @param every        one access in this many is replaced
     * @param totalBuckets buckets the scan cycles through
     * @return the new trace
     */
    public static int[] withScan(int[] trace, int every, int totalBuckets) {
        Objects.requireNonNull(trace, "trace");
        if (every < 1) {
            throw new IllegalArgumentException("every must be >= 1, was " + every);
        }
        if (totalBuckets < 1) {
            throw new IllegalArgumentException("totalBuckets must be >= 1, was " + totalBuckets);
        }
        int[] mixed = trace.clone();
        int next = 0;
        for (int i = every - 1; i < mixed.length; i += every) {
            mixed[i] = next;
            next = next + 1 == totalBuckets ? 0 : next + 1;
        }
        return mixed;
    }

    /** Scores of RANDOM: a hash of (bucket, load sequence), never 0 since 0 means "never cache". */
    private static void randomScores(int[] scores, long loadSequence) {
        for (int b = 0; b < scores.length; b++) {
            int score = (int) (mix64(loadSequence * 0x9E37_79B9_7F4A_7C15L + b) >>> 32);
            scores[b] = score == 0 ? 1 : score;
        }
    }

    /** The SplitMix64 finaliser (Steele, Lea and Flood): every input bit affects every output bit. */
    private static long mix64(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58_476D_1CE4_E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D0_49BB_1331_11EBL;
        return z ^ (z >>> 31);
    }

    // ------------------------------------------------------------------ command line

    /** The command line ({@link Cli}: picocli). */
    @Command(versionProvider = ToolVersion.class, name = "./gphash run org.gphash.bench.cache.FrozenCacheSimulator", sortOptions = false,
            usageHelpAutoWidth = false, description = {"Frozen-cache hit rates (each policy, with and without scan "
                    + "guard) against Caffeine's, for a zipfian trace of bucket ids."})
    static final class Line {
        @Option(names = "--buckets", paramLabel = "N", description = "distinct buckets; default 1m")
        int buckets = 1_000_000;
        @Option(names = "--accesses", paramLabel = "N", description = "accesses in the trace; default 5m")
        int accesses = 5_000_000;
        @Option(names = "--shares", paramLabel = "LIST", split = ",", description = "cache shares; default 0.1,0.2,0.4")
        List<Double> shares;
        @Option(names = "--theta", paramLabel = "X", description = "zipfian constant, 0 < X < 1; default 0.99")
        double theta = 0.99;
        @Option(names = "--period", paramLabel = "N", description = "accesses between loads; default accesses / 50")
        Long period;
        @Option(names = "--scan-every", paramLabel = "N", description = {"0: no scan; N: a second table where every "
                + "N-th access is the next bucket of a cyclic scan; default 0"})
        int scanEvery;
        @Option(names = "--seed", paramLabel = "S", description = "default 42")
        long seed = 42;
        @Mixin
        Cli.Help help = new Cli.Help();
    }

    /**
     * Prints frozen-cache hit rates (each policy, with and without scan guard) against Caffeine's for a
     * zipfian trace; {@code --help} lists the options.
     *
     * @param args the command line
     */
    public static void main(String[] args) {
        Line l;
        try {
            l = Cli.parse(new Line(), args);
            Cli.range("--buckets", l.buckets, 2, Integer.MAX_VALUE);
            Cli.range("--accesses", l.accesses, 1, Integer.MAX_VALUE);
            Cli.range("--scan-every", l.scanEvery, 0, Integer.MAX_VALUE);
            Cli.theta("--theta", l.theta);
            for (double share : l.shares == null ? List.<Double>of() : l.shares) {
                Cli.proportion("--shares", share);
            }
        } catch (Cli.UsageException e) {
            System.err.println("FrozenCacheSimulator: " + e.getMessage());
            System.exit(2);
            return;
        }
        if (l.help.requested()) {
            System.out.print(Cli.usage(l));
            return;
        }
        int buckets = l.buckets;
        int accesses = l.accesses;
        double theta = l.theta;
        long seed = l.seed;
        int scanEvery = l.scanEvery;
        long period = l.period != null ? Math.max(1, l.period) : Math.max(1, accesses / 50);
        List<Double> shares = l.shares == null ? List.of(0.1, 0.2, 0.4) : l.shares;

        int[] trace = ZipfTrace.generate(buckets, accesses, theta, seed);
        System.out.printf(Locale.ROOT, "zipf theta=%s, %d buckets, %d accesses, a load every %d accesses%n",
                theta, buckets, accesses, period);
        printTable("no scan", trace, buckets, period, shares);
        if (scanEvery > 0) {
            printTable("1 access in " + scanEvery + " scans", withScan(trace, scanEvery, buckets), buckets,
                    period, shares);
        }
    }

    private static void printTable(String title, int[] trace, int buckets, long period, List<Double> shares) {
        StringBuilder header = new StringBuilder(String.format(Locale.ROOT, "%n%-22s", title));
        for (double share : shares) {
            header.append(String.format(Locale.ROOT, " %11s", "share " + share));
        }
        System.out.println(header);
        for (CachePolicy policy : CachePolicy.values()) {
            for (boolean guard : new boolean[] {false, true}) {
                StringBuilder row = new StringBuilder(String.format(Locale.ROOT, "%-22s",
                        "frozen " + policy + (guard ? " + guard" : "")));
                for (double share : shares) {
                    BktCacheConfig config = BktCacheConfig.builder().share(share).policy(policy).scanGuard(guard)
                            .build();
                    row.append(String.format(Locale.ROOT, " %11.3f",
                            simulate(trace, buckets, config, period).hitRate()));
                }
                System.out.println(row);
            }
        }
        StringBuilder row = new StringBuilder(String.format(Locale.ROOT, "%-22s", "Caffeine (W-TinyLFU)"));
        for (double share : shares) {
            long capacity = BktCacheConfig.builder().share(share).build().capacityFor(buckets);
            row.append(String.format(Locale.ROOT, " %11.3f", caffeineHitRate(trace, capacity)));
        }
        System.out.println(row);
    }
}
