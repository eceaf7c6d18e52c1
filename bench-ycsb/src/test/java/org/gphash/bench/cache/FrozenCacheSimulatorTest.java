package org.gphash.bench.cache;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.gphash.bench.cache.FrozenCacheSimulator.SimResult;
import org.gphash.bktcache.BktCacheConfig;
import org.gphash.bktcache.CachePolicy;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class FrozenCacheSimulatorTest {

    private static final int BUCKETS = 50_000;
    private static final int ACCESSES = 400_000;
    /** 20 loads over the trace: enough accesses per period for the counters to rank the hot set. */
    private static final long PERIOD = 20_000;

    private static int[] zipf;

    @BeforeAll
    static void trace() {
        zipf = ZipfTrace.generate(BUCKETS, ACCESSES, 0.99, 7);
    }

    private static double frozen(int[] trace, CachePolicy policy, boolean guard) {
        BktCacheConfig config = BktCacheConfig.builder().share(0.2).policy(policy).scanGuard(guard).build();
        return FrozenCacheSimulator.simulate(trace, BUCKETS, config, PERIOD).hitRate();
    }

    @Test
    void lfuBeatsRandomClearlyAndComesCloseToCaffeine() {
        double lfu = frozen(zipf, CachePolicy.LFU, false);
        double random = frozen(zipf, CachePolicy.RANDOM, false);
        double caffeine = FrozenCacheSimulator.caffeineHitRate(zipf, 10_000);
        assertTrue(lfu > random + 0.3, "LFU " + lfu + " vs RANDOM " + random);
        // RANDOM caches a random fifth of the buckets, so a fifth of the accesses after the first period.
        assertEquals(0.2 * 19 / 20, random, 0.02);
        assertTrue(Math.abs(lfu - caffeine) < 0.1, "LFU " + lfu + " vs Caffeine " + caffeine);
    }

    @Test
    void scanGuardProtectsLruFromAHeavyScan() {
        int[] scanned = FrozenCacheSimulator.withScan(zipf, 2, BUCKETS);
        double lru = frozen(scanned, CachePolicy.LRU, false);
        double guarded = frozen(scanned, CachePolicy.LRU, true);
        assertTrue(guarded > lru + 0.05, "LRU + guard " + guarded + " vs LRU " + lru);
    }

    @Test
    void lfuByHand() {
        // 4 buckets at share 0.25: one cached bucket; a load before accesses 4 and 8.
        BktCacheConfig config = BktCacheConfig.builder().share(0.25).build();
        int[] trace = {2, 2, 2, 1, /* load: b2 (3 vs 1); halving leaves b2 = 1, b1 = 0 */
                1, 1, 2, 0, /* load: b1 and b2 tie at 2 (without halving b2 would lead, 4 to 3); b1 has the lower id */
                1};
        assertEquals(new SimResult(2 / 9.0, 2, 7, 2), FrozenCacheSimulator.simulate(trace, 4, config, 4));
    }

    @Test
    void lruByHand() {
        BktCacheConfig config = BktCacheConfig.builder().share(0.25).policy(CachePolicy.LRU).build();
        int[] trace = {0, 0, 0, 0, 3, /* load: both stamped 1, the tie goes to b0 */
                3, 0, 3, 2, 3, /* load: b0, b2 and b3 all stamped 2; the tie goes to b0 again */
                3, 3, 3, 3, 3, /* load: only b3 carries stamp 3 */
                3};
        assertEquals(new SimResult(2 / 16.0, 2, 14, 3), FrozenCacheSimulator.simulate(trace, 4, config, 5));
    }

    @Test
    void randomAtFullShareCachesEverythingAfterTheFirstLoad() {
        BktCacheConfig config = BktCacheConfig.builder().share(1).policy(CachePolicy.RANDOM).build();
        SimResult r = FrozenCacheSimulator.simulate(zipf, BUCKETS, config, PERIOD);
        assertEquals(ACCESSES - PERIOD, r.hits(), "no random score may be 0");
        assertEquals(ACCESSES / PERIOD - 1, r.loads());
    }

    @Test
    void disabledCacheNeverHits() {
        SimResult r = FrozenCacheSimulator.simulate(zipf, BUCKETS, BktCacheConfig.DISABLED, PERIOD);
        assertEquals(0, r.hits());
        assertEquals(ACCESSES, r.misses());
        assertEquals(0.0, r.hitRate());
    }

    @Test
    void caffeineByHand() {
        assertEquals(2 / 3.0, FrozenCacheSimulator.caffeineHitRate(new int[] {1, 1, 1}, 1));
        assertEquals(0.0, FrozenCacheSimulator.caffeineHitRate(new int[0], 1));
    }

    @Test
    void withScanReplacesEveryNthAccess() {
        int[] trace = {9, 9, 9, 9, 9, 9, 9};
        assertArrayEquals(new int[] {9, 0, 9, 1, 9, 2, 9}, FrozenCacheSimulator.withScan(trace, 2, 3));
        assertArrayEquals(new int[] {0, 1, 2, 0, 1, 2, 0}, FrozenCacheSimulator.withScan(trace, 1, 3));
        assertEquals(9, trace[1], "the input is left alone");
    }

    @Test
    void rejectsBadInput() {
        BktCacheConfig config = BktCacheConfig.defaults();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> FrozenCacheSimulator.simulate(new int[] {0, 4}, 4, config, 1));
        assertTrue(e.getMessage().contains("trace[1]") && e.getMessage().contains("4"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> FrozenCacheSimulator.simulate(new int[] {0}, 4, config, 0));
        assertTrue(e.getMessage().contains("period"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> FrozenCacheSimulator.caffeineHitRate(new int[0], -1));
    }
}
