package org.gphash.cuda;

import java.util.concurrent.atomic.AtomicIntegerArray;

import org.gphash.spi.IdleStrategy;


/**
 * Keeps the GPU engine's host operations (gets, and writes while the pool is lent to the host, run
 * by the calling threads on the mapped pool with the CPU engine's code: {@link HostOperations}) apart
 * from everything the engine does under its lock: a thread about to run a batch, resize, grow the heap
 * or close first {@link #close}s the gate, which keeps new host operations out and waits for those
 * inside; the GPU's copies (the mirror, the cache) are then refreshed from what host writes changed,
 * so the pool is whole between batches. The lock holder {@link #open}s it again once its batch is done
 * (a batch's end, or a batch of gets started under the lock).
 *
 * <p>Readers never wait for the lock: a reader counts itself in, then looks at the flag; a closer
 * sets the flag, then looks at the counts (all volatile, so one of the two sees the other). A
 * reader that finds the gate closed goes back out and is told so ({@link #tryEnter} false): the
 * coalescer then queues its get into the next batch, with the writes that closed the gate.
 *
 * <p>Readers count themselves in on stripes of their own cache line, picked by thread: one shared
 * counter took every reader's two atomics on one line, which slowed YCSB's client from 256 threads
 * below what the host cache gave. A closer sums the stripes, once per batch.
 */
final class HostReadGate {

    /** Stripes: a power of two, a cache line (16 ints) apart. */
    private static final int STRIPES = 64;
    private static final int SPACING = 16;

    private final AtomicIntegerArray inside = new AtomicIntegerArray(STRIPES * SPACING);
    private volatile boolean closed;

    /** This thread's stripe's index in {@link #inside}. */
    private static int stripe() {
        long id = Thread.currentThread().threadId();
        return (int) ((id ^ (id >>> 7)) & (STRIPES - 1)) * SPACING;
    }

    /** Comes in if the gate is open; false (and not in) while a lock holder has it closed. */
    boolean tryEnter() {
        int at = stripe();
        inside.incrementAndGet(at);
        if (!closed) {
            return true;
        }
        inside.decrementAndGet(at);
        return false;
    }

    /** Leaves, after {@link #tryEnter} returned true (on the same thread). */
    void exit() {
        inside.decrementAndGet(stripe());
    }

    /** Under the engine's lock, before its work: keeps new readers out and waits for those inside. */
    void close() {
        closed = true;
        for (int round = 0; readers() != 0; round++) {
            IdleStrategy.SPIN_THEN_YIELD.idle(round);  // a host read takes microseconds
        }
    }

    /** Readers inside now (every stripe's count). */
    private int readers() {
        int n = 0;
        for (int i = 0; i < STRIPES * SPACING; i += SPACING) {
            n += inside.get(i);
        }
        return n;
    }

    /** Under the engine's lock, with nothing of its work left running: lets readers in again. */
    void open() {
        closed = false;
    }
}
