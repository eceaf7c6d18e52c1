package org.gphash.bktcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class BktCacheStatsTest {

    @Test
    void toStringReadsAsOneLine() {
        BktCacheStats s = new BktCacheStats(CachePolicy.LFU, 0.2, 5000, 1234, 873, 127, 3,
                12_300_000, 30_100_000, 0);
        assertEquals("bktcache: LFU 20% 1234/5000 buckets, hit rate 0.873 (hits=873 misses=127), "
                + "reloads=3 (last 12.3 ms, total 30.1 ms), abandoned fetches=0", s.toString());
        assertTrue(new BktCacheStats(CachePolicy.LRU, 0.125, 8, 8, 0, 0, 0, 0, 0, 2).toString()
                .startsWith("bktcache: LRU 12.5% 8/8 buckets, hit rate 0.000"));
    }

    @Test
    void hitRate() {
        assertEquals(0.0, BktCacheStats.disabled().hitRate());
        assertEquals(0.75, new BktCacheStats(CachePolicy.RANDOM, 1, 1, 1, 3, 1, 0, 0, 0, 0).hitRate());
        assertEquals(0.5, new BktCacheStats(CachePolicy.LFU, 1, 1, 1, Long.MAX_VALUE, Long.MAX_VALUE, 0, 0, 0, 0)
                .hitRate(), 1e-12);
    }

    @Test
    void severalCachesTotalTheirCountsAndKeepTheLongestLastLoad() {
        BktCacheStats a = new BktCacheStats(CachePolicy.LFU, 0.2, 100, 80, 30, 10, 2, 5, 9, 1);
        BktCacheStats b = new BktCacheStats(CachePolicy.LFU, 0.2, 200, 150, 60, 20, 3, 7, 11, 0);
        assertEquals(new BktCacheStats(CachePolicy.LFU, 0.2, 300, 230, 90, 30, 5, 7, 20, 1),
                BktCacheStats.total(java.util.List.of(a, b)));
        assertEquals(0.75, BktCacheStats.total(java.util.List.of(a, b)).hitRate());
        assertEquals(BktCacheStats.disabled(), BktCacheStats.total(java.util.List.of(BktCacheStats.disabled())));
        assertThrows(IllegalArgumentException.class, () -> BktCacheStats.total(java.util.List.of()));
    }

    @Test
    void disabledIsAllZero() {
        assertEquals(new BktCacheStats(CachePolicy.LFU, 0, 0, 0, 0, 0, 0, 0, 0, 0), BktCacheStats.disabled());
    }

    @Test
    void negativeFieldsAreRejectedByName() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new BktCacheStats(CachePolicy.LFU, 0.2, 10, 5, 1, -7, 0, 0, 0, 0));
        assertTrue(e.getMessage().contains("misses") && e.getMessage().contains("-7"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> new BktCacheStats(CachePolicy.LFU, 0.2, 10, 5, 1, 1, 0, 0, -1, 0));
        assertTrue(e.getMessage().contains("totalReloadNanos"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> new BktCacheStats(CachePolicy.LFU, 1.5, 10, 5, 1, 1, 0, 0, 0, 0));
        assertTrue(e.getMessage().contains("share") && e.getMessage().contains("1.5"), e.getMessage());
        assertThrows(NullPointerException.class, () -> new BktCacheStats(null, 0.2, 0, 0, 0, 0, 0, 0, 0, 0));
    }
}
