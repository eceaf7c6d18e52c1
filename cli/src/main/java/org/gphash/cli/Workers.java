package org.gphash.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Runs one phase of the demo on a fixed number of worker threads and times it. All workers are
 * started and ready before the clock starts, so thread start-up is not counted as work; the clock
 * stops when the last worker is done, so the phase time is what a client would wait for.
 */
public final class Workers {

    /** The work of one thread; {@code worker} is 0..threads-1, {@code tally} is its own. */
    @FunctionalInterface
    public interface Task {
        void run(int worker, PhaseTally tally) throws Exception;
    }

    /** All workers' tallies merged, and the phase's wall-clock time. */
    public record Timed(PhaseTally tally, long nanos) {
    }

    private Workers() {
    }

    /** Runs {@code task} on {@code threads} threads; rethrows the first failure of any of them. */
    public static Timed run(String phase, int threads, Task task) throws Exception {
        CountDownLatch ready = new CountDownLatch(threads);
        CountDownLatch go = new CountDownLatch(1);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<PhaseTally> tallies = new ArrayList<>(threads);
        List<Thread> started = new ArrayList<>(threads);
        for (int w = 0; w < threads; w++) {
            PhaseTally tally = new PhaseTally();
            tallies.add(tally);
            int worker = w;
            Thread t = new Thread(() -> {
                ready.countDown();
                try {
                    go.await();
                    task.run(worker, tally);
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }, "gphash-demo-" + phase + "-" + w);
            t.setDaemon(true);
            t.start();
            started.add(t);
        }
        ready.await();
        long start = System.nanoTime();
        go.countDown();
        for (Thread t : started) {
            t.join();
        }
        long nanos = System.nanoTime() - start;
        Throwable f = failure.get();
        if (f instanceof Exception e) {
            throw e;
        }
        if (f instanceof Error e) {
            throw e;
        }
        return new Timed(PhaseTally.merge(tallies), nanos);
    }
}
