package org.gphash.spi;

import java.util.concurrent.locks.LockSupport;

/**
 * How an engine's thread waits, in rounds, for something another thread or the GPU finishes soon:
 * spin first (the wait is expected to last microseconds, and a spinning thread sees the change at
 * once), then yield (with more threads than cores, the thread waited for may be off its core for a
 * time slice), then park (a long wait should not hold a core). As Agrona's idle strategies, with the
 * round passed in rather than kept, so that one constant serves every thread and waiting allocates
 * nothing.
 *
 * <pre>{@code
 * for (int round = 0; !done(); round++) {
 *     IdleStrategy.SPIN_THEN_YIELD.idle(round);
 * }
 * }</pre>
 *
 * @param spins     rounds that spin ({@link Thread#onSpinWait()}) before the first yield
 * @param yields    rounds that yield ({@link Thread#yield()}) after the spins, before parking
 * @param parkNanos how long each later round parks ({@link LockSupport#parkNanos(long)})
 */
public record IdleStrategy(int spins, int yields, long parkNanos) {

    /** Spins without end: for waits on the GPU a caller is measured by, which must not lose a time slice. */
    public static final IdleStrategy BUSY_SPIN = new IdleStrategy(Integer.MAX_VALUE, 0, 0);

    /**
     * Spins a few tens of microseconds, then yields: for a lock holder waiting for other threads'
     * short work outside the lock (a host read, issuing a small batch).
     */
    public static final IdleStrategy SPIN_THEN_YIELD = new IdleStrategy(1 << 12, Integer.MAX_VALUE, 0);

    /**
     * Spins a hundred rounds, then parks 20 µs a round: for a writer waiting for readers to leave an
     * epoch, who may wait for a whole operation on a loaded machine.
     */
    public static final IdleStrategy SPIN_THEN_PARK = new IdleStrategy(100, 0, 20_000);

    /** Refuses negative settings. */
    public IdleStrategy {
        if (spins < 0 || yields < 0 || parkNanos < 0) {
            throw new IllegalArgumentException("spins, yields and parkNanos must not be negative, got " + spins + ", "
                    + yields + ", " + parkNanos);
        }
    }

    /**
     * Waits one round.
     *
     * @param round the rounds waited so far in this wait, from 0
     */
    public void idle(int round) {
        switch (phase(round)) {
            case SPIN -> Thread.onSpinWait();
            case YIELD -> Thread.yield();
            case PARK -> LockSupport.parkNanos(parkNanos);
        }
    }

    /** What a round of waiting does. */
    public enum Phase {
        /** {@link Thread#onSpinWait()}. */
        SPIN,
        /** {@link Thread#yield()}. */
        YIELD,
        /** {@link LockSupport#parkNanos(long)} for {@link IdleStrategy#parkNanos()}. */
        PARK
    }

    /**
     * {@return what round {@code round} of a wait does}
     *
     * @param round the rounds waited so far in this wait, from 0
     */
    public Phase phase(int round) {
        if (round < spins) {
            return Phase.SPIN;
        }
        return (long) round - spins < yields ? Phase.YIELD : Phase.PARK;
    }
}
