package org.gphash.cuda;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;

import org.gphash.spi.IdleStrategy;

/**
 * One thread runs a step that many threads need at once; the others wait for it outside any lock
 * and then look again at what they needed, rather than queueing on the lock the step takes.
 *
 * <p>Why: the GPU engine's host writers all need the pool lent to the host ({@link HostOperations});
 * at the first write after an open, or after the GPU took the pool back, every writer asked for the
 * lend at once and queued on the engine's monitor, which then let them in one by one, each finding
 * the pool lent already. With 256 client threads on 16 cores each hand-over of the monitor waited for
 * a time slice: YCSB's workload B waited 14 to 69 s in all (55 to 270 ms a thread) for one lend of 10
 * ms, and ran at 0.54-0.77x of the CPU backend without the open
 * (docs/lab/2026-11-29-issue-57-host-writes.md, call 40).
 */
final class SingleFlight {

    /** A lend waits for the GPU's work in flight (up to a batch, milliseconds): spin briefly, then park. */
    private static final IdleStrategy WAIT = IdleStrategy.SPIN_THEN_PARK;

    private final AtomicBoolean running = new AtomicBoolean();
    /** The monitor the step takes: a thread that holds it already runs the step itself. */
    private final Object lock;

    /** A single flight of a step that takes {@code lock}'s monitor. */
    SingleFlight(Object lock) {
        this.lock = lock;
    }

    /**
     * Runs {@code step} on this thread if no other thread is running it now; else waits until that
     * run ends or {@code stopWaiting} holds, without running it. Either way the caller then looks
     * again at what it needed (the run it waited for may have ended without giving it, or given it
     * and lost it since).
     *
     * <p>A caller that holds the step's lock runs the step at once, beside the flag: the runner may
     * be blocked on that lock, and waiting for it would never end (a write the GPU's routes run under
     * the engine's lock that the router sends to the host, which lends the pool: YCSB's A at 256 threads
     * hung so).
     *
     * @return whether this thread ran {@code step}
     */
    boolean runOrAwait(Runnable step, BooleanSupplier stopWaiting) {
        if (Thread.holdsLock(lock)) {
            step.run();
            return true;
        }
        if (running.compareAndSet(false, true)) {
            try {
                step.run();
            } finally {
                running.set(false);
            }
            return true;
        }
        for (int round = 0; running.get() && !stopWaiting.getAsBoolean(); round++) {
            WAIT.idle(round);
        }
        return false;
    }
}
