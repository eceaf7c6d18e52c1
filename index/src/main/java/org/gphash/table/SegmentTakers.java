package org.gphash.table;

import java.lang.ref.WeakReference;
import java.util.Arrays;
import java.util.concurrent.ConcurrentLinkedQueue;

import org.gphash.format.ValueClasses;

/**
 * The threads that take blocks from a {@link SizeClassHeap}, each with its segment per class: the
 * segment it takes that class's blocks from (-1: none yet), counted in the segment's holders
 * ({@link HeapSegments#hold}) until the thread moves to another, or ends ({@link #forgetEnded}).
 * Each thread may so keep a segment per class with room in it.
 *
 * <p>Why the threads are listed: nothing runs when a thread ends, so its counts would stay, and the
 * heap's search for a segment no thread holds would pass its segments over for free ones for good. A
 * pool written by a new set of threads each round (one bench round after another, a pool of workers
 * that renews itself) held 2.12x its live bytes at worst over ten rounds, 1.57x once ended threads'
 * segments were given up (`ValueLengthsBench 400000 10 16 mixed` on 2 cores). Looked at under the
 * heap's lock, off the takes' path: a check of a name per segment at every move (threads move at
 * almost every take under updates) cost {@code HeapBench}'s pairs of 128-byte blocks from 16 threads
 * 16.1 against 18.3 M/s, five runs each.
 */
final class SegmentTakers {

    /**
     * How often, at most, {@link #forgetEnded} looks: each look visits every thread that has taken a
     * block and not ended (hundreds, from YCSB's client).
     */
    private static final long LOOK_NANOS = 10_000_000L;

    /** A thread and its segment per class. */
    private record Taker(WeakReference<Thread> thread, int[] segments) {
        boolean ended() {
            Thread t = thread.get();
            return t == null || !t.isAlive();
        }
    }

    private final ThreadLocal<int[]> mine = ThreadLocal.withInitial(this::register);
    /** Every thread that has an array of {@link #mine}: added by the thread, removed by {@link #forgetEnded}. */
    private final ConcurrentLinkedQueue<Taker> takers = new ConcurrentLinkedQueue<>();
    /** When {@link #forgetEnded} last looked (under the heap's lock). */
    private long looked = System.nanoTime();

    /** {@return this thread's segment per class} The thread alone writes it while it runs. */
    int[] mine() {
        return mine.get();
    }

    private int[] register() {
        int[] segments = new int[ValueClasses.COUNT];
        Arrays.fill(segments, -1);
        takers.add(new Taker(new WeakReference<>(Thread.currentThread()), segments));
        return segments;
    }

    /**
     * Under the heap's lock, every {@link #LOOK_NANOS} at most: gives up the segments of {@code g}
     * that threads which have ended held, and forgets those threads.
     */
    void forgetEnded(HeapSegments g) {
        long now = System.nanoTime();
        if (now - looked < LOOK_NANOS) {
            return;
        }
        looked = now;
        takers.removeIf(t -> {
            if (!t.ended()) {
                return false;
            }
            int[] segments = t.segments();
            for (int c = 0; c < segments.length; c++) {
                if (segments[c] >= 0 && segments[c] < g.count) {
                    g.holders.decrementAndGet(segments[c]);
                }
                segments[c] = -1;
            }
            return true;
        });
    }
}
