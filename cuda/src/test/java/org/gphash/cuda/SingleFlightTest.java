package org.gphash.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The one-runner step the GPU engine's host writers share for a lend of the pool, without a GPU (CI):
 * many threads asking at once run it once, the others leave as soon as what they wait for holds even
 * while the runner is still inside (a queue on the runner's lock would hold them to its end), a caller
 * holding the step's lock runs it itself, and a step that throws lets the next caller run it again.
 */
class SingleFlightTest {

    @Test
    @Timeout(60)
    void threadsAskingAtOnceRunTheStepOnceAndLeaveWhenItHasWhatTheyNeed() throws Exception {
        Object lock = new Object();
        SingleFlight flight = new SingleFlight(lock);
        AtomicBoolean lent = new AtomicBoolean();
        AtomicInteger runs = new AtomicInteger();
        long holdAfter = TimeUnit.SECONDS.toNanos(3);
        AtomicLong lentAt = new AtomicLong();
        Runnable lend = () -> {
            synchronized (lock) {
                runs.incrementAndGet();
                sleepNanos(TimeUnit.MILLISECONDS.toNanos(50));
                lentAt.set(System.nanoTime());
                lent.set(true);
                sleepNanos(holdAfter);  // the runner stays in its lock: waiters need not
            }
        };
        int threads = 32;
        CountDownLatch start = new CountDownLatch(1);
        AtomicLong latestReturn = new AtomicLong();
        AtomicInteger ran = new AtomicInteger();
        List<Thread> callers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            callers.add(Thread.ofPlatform().start(() -> {
                awaitQuietly(start);
                while (!lent.get()) {
                    if (flight.runOrAwait(lend, lent::get)) {
                        ran.incrementAndGet();
                        return;
                    }
                }
                latestReturn.accumulateAndGet(System.nanoTime(), Math::max);
            }));
        }
        start.countDown();
        for (Thread c : callers) {
            c.join();
        }
        assertEquals(1, runs.get(), "the step ran once for every thread that asked meanwhile");
        assertEquals(1, ran.get());
        long waitedAfterLend = latestReturn.get() - lentAt.get();
        assertTrue(waitedAfterLend < holdAfter / 2, "waiters left " + waitedAfterLend / 1_000_000
                + " ms after the step gave them what they needed; the runner held its lock " + holdAfter / 1_000_000 + " ms more");
    }

    @Test
    @Timeout(30)
    void aStepThatThrowsLetsTheNextCallerRunIt() {
        SingleFlight flight = new SingleFlight(new Object());
        AtomicInteger runs = new AtomicInteger();
        assertThrows(IllegalStateException.class, () -> flight.runOrAwait(() -> {
            runs.incrementAndGet();
            throw new IllegalStateException("the GPU failed");
        }, () -> false));
        assertTrue(flight.runOrAwait(runs::incrementAndGet, () -> false), "not stuck as running after a throw");
        assertEquals(2, runs.get());
    }

    @Test
    @Timeout(30)
    void aWaiterLeavesWhenToldToStop() throws Exception {
        SingleFlight flight = new SingleFlight(new Object());
        CountDownLatch inside = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Thread runner = Thread.ofPlatform().start(() -> flight.runOrAwait(() -> {
            inside.countDown();
            awaitQuietly(release);
        }, () -> false));
        inside.await();
        AtomicBoolean closed = new AtomicBoolean();
        Thread waiter = Thread.ofPlatform().start(() -> assertFalse(flight.runOrAwait(() -> {
            throw new AssertionError("a second runner while the first is inside");
        }, closed::get)));
        Thread.sleep(100);
        assertTrue(waiter.isAlive(), "the waiter waits while the step runs");
        closed.set(true);  // the engine closed
        waiter.join(10_000);
        assertFalse(waiter.isAlive(), "the waiter left once told to stop, the step still running");
        release.countDown();
        runner.join();
    }

    /**
     * A caller already inside the step's lock (a write the GPU's routes run under the engine's lock,
     * sent by the router to the host, which lends the pool) runs the step itself: the runner is
     * blocked on that very lock, and waiting for it would never end.
     */
    @Test
    @Timeout(30)
    void aCallerHoldingTheStepsLockRunsItWhileTheRunnerIsBlockedOnThatLock() throws Exception {
        Object lock = new Object();
        SingleFlight flight = new SingleFlight(lock);
        AtomicInteger runs = new AtomicInteger();
        Runnable step = () -> {
            synchronized (lock) {
                runs.incrementAndGet();
            }
        };
        CountDownLatch runnerStarted = new CountDownLatch(1);
        AtomicBoolean ranInside = new AtomicBoolean();
        Thread holder = Thread.ofPlatform().start(() -> {
            synchronized (lock) {
                Thread runner = Thread.ofPlatform().start(() -> {
                    runnerStarted.countDown();
                    flight.runOrAwait(step, () -> false);  // takes the flag, then blocks on the lock
                });
                awaitQuietly(runnerStarted);
                while (runner.getState() != Thread.State.BLOCKED) {
                    Thread.onSpinWait();
                }
                ranInside.set(flight.runOrAwait(step, () -> false));
            }
        });
        holder.join(10_000);
        assertFalse(holder.isAlive(), "the lock holder waited for a runner blocked on its own lock");
        assertTrue(ranInside.get());
        for (int round = 0; runs.get() < 2 && round < 10_000; round++) {
            Thread.sleep(1);
        }
        assertEquals(2, runs.get(), "the runner ran too, once the holder let the lock go");
    }

    private static void sleepNanos(long nanos) {
        try {
            TimeUnit.NANOSECONDS.sleep(nanos);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
