package org.gphash.frontend;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * Tells a burst of large writing batches from a steady stream of them, by the spacing of their
 * arrivals: a batch is in a burst when the {@code othersBefore}th batch before it came at most
 * {@code windowNanos} earlier. Callers' parts of one batch started together (the PageRank replay from
 * 16 threads: 16 parts of 4096 writes handed to a pool of threads at once) come as a burst and gain
 * from one merged GPU batch; 16 threads each running its own stream of batches of 16384 (bench ycsb,
 * a batch finishing every 0.3 ms or so) run faster each on its own (issue 57;
 * docs/lab/2026-12-02-host-route-timers-and-turns.md, "Left").
 *
 * <p>Lock-free and approximate: two arrivals at once may each read the other's slot before or after
 * it is written, which only moves the verdict of one batch near the window's edge.
 */
final class WritingBursts {
    /** How many arrivals before this one must fall inside the window, by default. */
    static final int OTHERS_BEFORE = 4;
    /** The window by default: well under one batch's GPU time, over a pool's spread of wake-ups. */
    static final long WINDOW_NANOS = 50_000;

    private final int othersBefore;
    private final long windowNanos;
    /** The last {@link #othersBefore} arrivals' times, a ring indexed by {@link #arrivals}. */
    private final AtomicLongArray times;
    private final AtomicLong arrivals = new AtomicLong();
    private final LongAdder inBursts = new LongAdder();

    /**
     * The default rule, or the one the system property {@code gphash.coalescing.burst} names as
     * {@code OTHERS/MICROS} (for measuring other rules on a GPU machine without a rebuild).
     */
    WritingBursts() {
        this(othersBefore(System.getProperty("gphash.coalescing.burst")),
                windowNanos(System.getProperty("gphash.coalescing.burst")));
    }

    /** With a window of {@code windowNanos} after {@link #OTHERS_BEFORE} others (tests: a window that catches every arrival, or none). */
    WritingBursts(long windowNanos) {
        this(OTHERS_BEFORE, windowNanos);
    }

    WritingBursts(int othersBefore, long windowNanos) {
        if (othersBefore < 1) {
            throw new IllegalArgumentException("a burst needs at least one arrival before: " + othersBefore);
        }
        this.othersBefore = othersBefore;
        this.windowNanos = windowNanos;
        this.times = new AtomicLongArray(othersBefore);
        // Long ago: no batch before the first othersBefore is in a burst.
        for (int i = 0; i < othersBefore; i++) {
            times.set(i, Long.MIN_VALUE / 2);
        }
    }

    private static int othersBefore(String rule) {
        return rule == null ? OTHERS_BEFORE : Integer.parseInt(rule.substring(0, rule.indexOf('/')).strip());
    }

    private static long windowNanos(String rule) {
        return rule == null ? WINDOW_NANOS : Long.parseLong(rule.substring(rule.indexOf('/') + 1).strip()) * 1000;
    }

    /** Records an arrival at {@code nanos} ({@link System#nanoTime}); whether it came in a burst. */
    boolean arrived(long nanos) {
        int slot = (int) (arrivals.getAndIncrement() % othersBefore);
        long earlier = times.getAndSet(slot, nanos);
        boolean burst = nanos - earlier <= windowNanos;
        if (burst) {
            inBursts.increment();
        }
        return burst;
    }

    /** Arrivals so far. */
    long arrivals() {
        return arrivals.get();
    }

    /** Of them, those in a burst. */
    long inBursts() {
        return inBursts.sum();
    }

    @Override
    public String toString() {
        return othersBefore + " within " + windowNanos / 1000 + " us";
    }
}
