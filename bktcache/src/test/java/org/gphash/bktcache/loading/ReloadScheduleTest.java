package org.gphash.bktcache.loading;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;

import org.gphash.bktcache.BktCacheConfig;
import org.junit.jupiter.api.Test;

class ReloadScheduleTest {

    /** A clock the test moves by hand. */
    private static final class FakeClock {
        long nanos;

        long read() {
            return nanos;
        }
    }

    private final FakeClock clock = new FakeClock();

    private ReloadSchedule schedule(BktCacheConfig.Builder config) {
        return new ReloadSchedule(config.build(), clock::read);
    }

    @Test
    void dueAfterTheConfiguredOperations() {
        ReloadSchedule s = schedule(BktCacheConfig.builder().reloadEveryOperations(100));
        assertFalse(s.due());
        s.operationsRan(60);
        s.operationsRan(39);
        assertFalse(s.due());
        assertEquals(99, s.operationsSinceLoad());
        s.operationsRan(1);
        assertTrue(s.due());
        s.operationsRan(50);
        assertTrue(s.due(), "stays due until a load completes");
        s.loaded();
        assertFalse(s.due());
        assertEquals(0, s.operationsSinceLoad());
    }

    @Test
    void dueAfterTheConfiguredTime() {
        clock.nanos = 1_000;
        ReloadSchedule s = schedule(BktCacheConfig.builder().reloadEveryOperations(0)
                .reloadEvery(Duration.ofMillis(10)));
        s.operationsRan(1_000_000_000);
        assertFalse(s.due(), "count alone never triggers when reloadEveryOperations is 0");
        clock.nanos += 9_999_999;
        assertFalse(s.due());
        clock.nanos += 1;
        assertTrue(s.due());
        s.loaded();
        assertFalse(s.due(), "the time restarts at the load");
        clock.nanos += 10_000_000;
        assertTrue(s.due());
    }

    @Test
    void whicheverComesFirst() {
        ReloadSchedule s = schedule(BktCacheConfig.builder().reloadEveryOperations(100)
                .reloadEvery(Duration.ofSeconds(1)));
        clock.nanos += 1_000_000_000;
        assertTrue(s.due());
        s.loaded();
        s.operationsRan(100);
        assertTrue(s.due());
        s.loaded();
        assertEquals(0, s.operationsSinceLoad());
        clock.nanos += 999_999_999;
        assertFalse(s.due(), "loaded() restarts the clock too");
    }

    @Test
    void neverDueWhenDisabledOrUnscheduled() {
        ReloadSchedule off = schedule(BktCacheConfig.DISABLED.toBuilder().reloadEveryOperations(1)
                .reloadEvery(Duration.ofNanos(1)));
        off.operationsRan(10);
        clock.nanos += 10;
        assertFalse(off.due());

        ReloadSchedule unscheduled = schedule(BktCacheConfig.builder().reloadEveryOperations(0));
        unscheduled.operationsRan(Long.MAX_VALUE);
        clock.nanos += Long.MAX_VALUE / 2;
        assertFalse(unscheduled.due());
    }

    @Test
    void operationCountSaturatesAndRejectsNegatives() {
        ReloadSchedule s = schedule(BktCacheConfig.builder());
        s.operationsRan(Long.MAX_VALUE);
        s.operationsRan(Long.MAX_VALUE);
        assertEquals(Long.MAX_VALUE, s.operationsSinceLoad());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> s.operationsRan(-1));
        assertTrue(e.getMessage().contains("-1"), e.getMessage());
    }

    @Test
    void clockThatWrapsAround() {
        clock.nanos = Long.MAX_VALUE - 5;
        ReloadSchedule s = schedule(BktCacheConfig.builder().reloadEveryOperations(0)
                .reloadEvery(Duration.ofNanos(10)));
        clock.nanos += 9; // wraps to a negative reading
        assertFalse(s.due());
        clock.nanos += 1;
        assertTrue(s.due());
    }

    @Test
    void durationBeyondTheNanosecondRangeIsNeverReached() {
        ReloadSchedule s = schedule(BktCacheConfig.builder().reloadEveryOperations(0)
                .reloadEvery(Duration.ofSeconds(Long.MAX_VALUE)));
        clock.nanos += Long.MAX_VALUE - 1;
        assertFalse(s.due());
    }
}
