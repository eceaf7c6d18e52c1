package org.gphash.bktcache.loading;

import java.util.Objects;
import java.util.function.LongSupplier;

import org.gphash.bktcache.BktCacheConfig;

/**
 * Decides when the next loading phase is due: once {@link BktCacheConfig#reloadEveryOperations()}
 * operations ran since the last load, or once {@link BktCacheConfig#reloadEvery()} passed, whichever
 * comes first (each only when set). A disabled cache is never due.
 *
 * <p>The schedule starts as if a load had just completed, so the first load comes one period after
 * construction, when the counters have something to rank.
 *
 * <p>Not thread-safe: the engine calls it under its own lock.
 */
public final class ReloadSchedule {

    private final boolean enabled;
    private final long everyOperations;
    /** reloadEvery in nanoseconds, 0 when not by time; saturated for durations beyond ~292 years. */
    private final long everyNanos;
    private final LongSupplier nanoClock;

    private long operationsSinceLoad;
    private long lastLoadNanos;

    /**
     * A schedule for {@code config}'s periods, starting now.
     *
     * @param config    the cache's settings (reloadEveryOperations, reloadEvery)
     * @param nanoClock a monotonic clock in nanoseconds, like {@code System::nanoTime}; only differences
     *                  of its readings are used
     */
    public ReloadSchedule(BktCacheConfig config, LongSupplier nanoClock) {
        Objects.requireNonNull(config, "config");
        this.nanoClock = Objects.requireNonNull(nanoClock, "nanoClock");
        this.enabled = config.enabled();
        this.everyOperations = config.reloadEveryOperations();
        this.everyNanos = saturatedNanos(config);
        this.lastLoadNanos = nanoClock.getAsLong();
    }

    /**
     * Records that {@code n} more operations ran. The count saturates at {@code Long.MAX_VALUE}.
     *
     * @param n operations
     * @throws IllegalArgumentException if {@code n} is negative
     */
    public void operationsRan(long n) {
        if (n < 0) {
            throw new IllegalArgumentException("n must be >= 0, was " + n);
        }
        long sum = operationsSinceLoad + n;
        operationsSinceLoad = sum < 0 ? Long.MAX_VALUE : sum;
    }

    /** {@return whether a load should start now} */
    public boolean due() {
        if (!enabled) {
            return false;
        }
        if (everyOperations > 0 && operationsSinceLoad >= everyOperations) {
            return true;
        }
        // Compare the difference, not the readings: nanoTime-style clocks may wrap.
        return everyNanos > 0 && nanoClock.getAsLong() - lastLoadNanos >= everyNanos;
    }

    /** Records that a load completed now: both the operation count and the time start over. */
    public void loaded() {
        operationsSinceLoad = 0;
        lastLoadNanos = nanoClock.getAsLong();
    }

    /** {@return operations recorded since the last load (or since construction)} */
    public long operationsSinceLoad() {
        return operationsSinceLoad;
    }

    private static long saturatedNanos(BktCacheConfig config) {
        try {
            return config.reloadEvery().toNanos();
        } catch (ArithmeticException tooLong) {
            return Long.MAX_VALUE;
        }
    }
}
