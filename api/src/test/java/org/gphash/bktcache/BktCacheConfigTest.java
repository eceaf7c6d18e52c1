package org.gphash.bktcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

class BktCacheConfigTest {

    @Test
    void defaults() {
        BktCacheConfig c = BktCacheConfig.defaults();
        assertEquals(0.20, c.share());
        assertEquals(CachePolicy.LFU, c.policy());
        assertEquals(4_194_304L, c.reloadEveryOperations());
        assertEquals(Duration.ZERO, c.reloadEvery());
        assertTrue(c.concurrentFetch());
        assertFalse(c.scanGuard());
        assertEquals(2, c.counterSampleShift());
        assertTrue(c.enabled());
        assertEquals(c, BktCacheConfig.builder().build());
    }

    @Test
    void disabledHasShareZeroAndHoldsNothing() {
        BktCacheConfig c = BktCacheConfig.DISABLED;
        assertEquals(0.0, c.share());
        assertFalse(c.enabled());
        assertEquals(0, c.capacityFor(1_000_000));
        assertEquals(BktCacheConfig.defaults().toBuilder().share(0).build(), c);
    }

    @Test
    void shareIsValidated() {
        assertRejected(() -> BktCacheConfig.builder().share(Double.NaN), "share", "NaN");
        assertRejected(() -> BktCacheConfig.builder().share(-0.1), "share", "-0.1");
        assertRejected(() -> BktCacheConfig.builder().share(1.0001), "share", "1.0001");
        assertRejected(() -> BktCacheConfig.builder().share(Double.POSITIVE_INFINITY), "share", "Infinity");
        assertEquals(1.0, BktCacheConfig.builder().share(1).build().share());
    }

    @Test
    void reloadSettingsAreValidated() {
        assertRejected(() -> BktCacheConfig.builder().reloadEveryOperations(-1), "reloadEveryOperations", "-1");
        assertRejected(() -> BktCacheConfig.builder().reloadEvery(Duration.ofMillis(-5)), "reloadEvery", "PT-0.005S");
        NullPointerException npe = assertThrows(NullPointerException.class,
                () -> BktCacheConfig.builder().reloadEvery(null));
        assertTrue(npe.getMessage().contains("reloadEvery"), npe.getMessage());
        assertEquals(0, BktCacheConfig.builder().reloadEveryOperations(0).build().reloadEveryOperations());
    }

    @Test
    void counterSampleShiftIsValidated() {
        assertRejected(() -> BktCacheConfig.builder().counterSampleShift(-1), "counterSampleShift", "-1");
        assertRejected(() -> BktCacheConfig.builder().counterSampleShift(9), "counterSampleShift", "9");
        assertEquals(0, BktCacheConfig.builder().counterSampleShift(0).build().counterSampleShift());
        assertEquals(8, BktCacheConfig.builder().counterSampleShift(8).build().counterSampleShift());
    }

    @Test
    void policyMustNotBeNull() {
        NullPointerException npe = assertThrows(NullPointerException.class,
                () -> BktCacheConfig.builder().policy(null));
        assertTrue(npe.getMessage().contains("policy"), npe.getMessage());
    }

    @Test
    void capacityFor() {
        BktCacheConfig fifth = BktCacheConfig.defaults();
        assertEquals(200, fifth.capacityFor(1000));
        assertEquals(2, fifth.capacityFor(13)); // floor(2.6)
        assertEquals(1, fifth.capacityFor(1)); // floor(0.2) = 0, but an enabled cache holds something
        assertEquals(0, fifth.capacityFor(0));

        BktCacheConfig all = BktCacheConfig.builder().share(1).build();
        assertEquals(12345, all.capacityFor(12345));
        assertEquals(Long.MAX_VALUE, all.capacityFor(Long.MAX_VALUE));

        BktCacheConfig tiny = BktCacheConfig.builder().share(1e-9).build();
        assertEquals(1, tiny.capacityFor(100));
        assertEquals(0, tiny.capacityFor(0));

        assertRejected(() -> fifth.capacityFor(-1), "totalBuckets", "-1");
    }

    /**
     * Issue 53: a bucket's copy holds its values at the pool's value size, so the share alone asks a
     * pool of 1 MiB values for thousands of times the memory it asks a pool of 128-byte values.
     */
    @Test
    void capacityForIsBoundedByBytes() {
        BktCacheConfig fifth = BktCacheConfig.defaults();
        long small = 8 * 160;  // a bucket of 8 slots of 128-byte values
        long large = 8L * (1 << 20);  // of 1 MiB values
        long free = 100L << 30;
        assertEquals(200_000, fifth.capacityFor(1_000_000, small, free));  // the share binds
        assertEquals((25L << 30) / large, fifth.capacityFor(1_000_000, large, free));  // a quarter of the free memory
        BktCacheConfig capped = fifth.toBuilder().maxBytes(1L << 30).build();
        assertEquals((1L << 30) / large, capped.capacityFor(1_000_000, large, free));  // the bound set
        assertEquals(200_000, capped.capacityFor(1_000_000, small, 0));  // the bound set, not the free memory
        assertEquals(0, capped.capacityFor(1_000_000, 2L << 30, free));  // not one bucket fits
        assertEquals(0, fifth.capacityFor(1_000_000, small, 0));
        assertEquals(0, BktCacheConfig.DISABLED.capacityFor(1_000_000, small, free));
        assertRejected(() -> fifth.capacityFor(10, 0, free), "bucketBytes", "0");
        assertRejected(() -> fifth.capacityFor(10, small, -1), "freeGpuBytes", "-1");
        assertRejected(() -> BktCacheConfig.builder().maxBytes(-1), "maxBytes", "-1");
    }

    @Test
    void builderRoundTripAndEquality() {
        BktCacheConfig c = BktCacheConfig.builder()
                .share(0.35)
                .policy(CachePolicy.LRU)
                .reloadEveryOperations(1000)
                .reloadEvery(Duration.ofMillis(250))
                .concurrentFetch(false)
                .scanGuard(true)
                .counterSampleShift(5)
                .maxBytes(1L << 30)
                .build();
        BktCacheConfig copy = c.toBuilder().build();
        assertEquals(c, copy);
        assertEquals(c.hashCode(), copy.hashCode());
        assertEquals(0.35, copy.share());
        assertEquals(CachePolicy.LRU, copy.policy());
        assertEquals(1000, copy.reloadEveryOperations());
        assertEquals(Duration.ofMillis(250), copy.reloadEvery());
        assertFalse(copy.concurrentFetch());
        assertTrue(copy.scanGuard());
        assertEquals(5, copy.counterSampleShift());
        assertEquals(1L << 30, copy.maxBytes());

        assertNotEquals(c, c.toBuilder().share(0.36).build());
        assertNotEquals(c, c.toBuilder().policy(CachePolicy.RANDOM).build());
        assertNotEquals(c, c.toBuilder().reloadEveryOperations(1001).build());
        assertNotEquals(c, c.toBuilder().reloadEvery(Duration.ofMillis(251)).build());
        assertNotEquals(c, c.toBuilder().concurrentFetch(true).build());
        assertNotEquals(c, c.toBuilder().scanGuard(false).build());
        assertNotEquals(c, c.toBuilder().counterSampleShift(4).build());
        assertNotEquals(c, c.toBuilder().maxBytes(0).build());
        assertNotEquals(c, "not a config");

        // -0.0 passes the range check; it must not make an otherwise equal config unequal.
        assertEquals(BktCacheConfig.DISABLED, BktCacheConfig.builder().share(-0.0).build());
    }

    @Test
    void toStringNamesEveryField() {
        String s = BktCacheConfig.defaults().toString();
        for (String part : new String[] {"share=0.2", "policy=LFU", "reloadEveryOperations=4194304",
                "reloadEvery=PT0S", "concurrentFetch=true", "scanGuard=false", "counterSampleShift=2", "maxBytes=0"}) {
            assertTrue(s.contains(part), s + " lacks " + part);
        }
    }

    private static void assertRejected(Executable e, String field, String value) {
        IllegalArgumentException ex = assertThrows(IllegalArgumentException.class, e);
        assertTrue(ex.getMessage().contains(field), ex.getMessage() + " does not name " + field);
        assertTrue(ex.getMessage().contains(value), ex.getMessage() + " does not show " + value);
    }
}
