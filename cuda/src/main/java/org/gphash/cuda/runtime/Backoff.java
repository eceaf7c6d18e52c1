package org.gphash.cuda.runtime;

/**
 * How the engine waits, under its lock, for other threads to finish something short outside it
 * (a host read, issuing a batch of gets): spin first, since it takes microseconds, then yield, since
 * with more threads than cores the thread waited for may be off its core for a time slice.
 */
public final class Backoff {

    /** Spins before the first yield: a few tens of microseconds. */
    private static final int SPINS = 1 << 12;

    private Backoff() {
    }

    /** One round of waiting; {@code round} counts from 0. */
    public static void pause(int round) {
        if (round < SPINS) {
            Thread.onSpinWait();
        } else {
            Thread.yield();
        }
    }
}
