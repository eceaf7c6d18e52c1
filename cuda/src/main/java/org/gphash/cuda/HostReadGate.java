package org.gphash.cuda;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Keeps the GPU engine's host reads (gets run by the calling thread on the mapped pool, with the
 * CPU engine's probe) apart from everything the engine does under its lock: a thread about to run
 * a batch, resize, grow the heap or close first {@link #close}s the gate, which keeps new readers
 * out and waits for those inside; the pool is complete between batches (the mirror and the cache
 * are copies), so a read inside the gate sees a whole table. The lock holder {@link #open}s it
 * again once its batch is done (a batch's end, or a batch of gets started under the lock).
 *
 * <p>Readers never wait for the lock: a reader counts itself in, then looks at the flag; a closer
 * sets the flag, then looks at the count (both volatile, so one of the two sees the other). A
 * reader that finds the gate closed goes back out and is told so ({@link #tryEnter} false): the
 * coalescer then queues its get into the next batch, with the writes that closed the gate.
 */
final class HostReadGate {

    private final AtomicInteger inside = new AtomicInteger();
    private volatile boolean closed;

    /** Comes in if the gate is open; false (and not in) while a lock holder has it closed. */
    boolean tryEnter() {
        inside.incrementAndGet();
        if (!closed) {
            return true;
        }
        inside.decrementAndGet();
        return false;
    }

    /** Leaves, after {@link #tryEnter} returned true. */
    void exit() {
        inside.decrementAndGet();
    }

    /** Under the engine's lock, before its work: keeps new readers out and waits for those inside. */
    void close() {
        closed = true;
        for (int round = 0; inside.get() != 0; round++) {
            Backoff.pause(round);  // a host read takes microseconds
        }
    }

    /** Under the engine's lock, with nothing of its work left running: lets readers in again. */
    void open() {
        closed = false;
    }
}
