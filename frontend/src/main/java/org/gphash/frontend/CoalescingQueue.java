package org.gphash.frontend;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.gphash.Coalescing;
import org.gphash.spi.IdleStrategy;
import org.gphash.spi.SegmentBytes;

/**
 * The coalescer's queue, and how the dispatcher gathers the next engine batch from it: whatever is
 * waiting, up to the batch limit, after the linger (a fixed time) or the adaptive wait (until as many
 * callers as the last batch had are back, for a quarter of its run time). Callers add requests from
 * any thread; everything else runs on the dispatcher's thread only.
 *
 * <p>Behind an engine that does not apply a batch's operations on one key in batch order (the GPU
 * engine without its index mirror), a batch ends before a request whose key it holds already, so
 * that one caller's operations on a key never share a batch.
 */
final class CoalescingQueue {

    /** The adaptive wait's ceiling. */
    private static final long MAX_ADAPTIVE_WAIT_NANOS = 200_000;

    private final LinkedBlockingQueue<CoalescedRequest> queue = new LinkedBlockingQueue<>();
    private final long spinNanos;
    private final long lingerNanos;
    private final boolean adaptive;
    /** Operations in one engine batch, at most. */
    private final int max;
    /** A request the last batch could not take (see {@link #fits}): the first of the next one. */
    private CoalescedRequest carried;
    /** The batch being gathered: its requests, their operations and (when keys must not repeat) their keys. */
    private final List<CoalescedRequest> taken = new ArrayList<>();
    private int takenOps;
    private final Set<HostReadCache.KeyBytes> takenKeys;
    private boolean stop;
    private long lastRunNanos;
    private int lastSize;

    CoalescingQueue(Coalescing config, int max, boolean orderedPerKey) {
        this.spinNanos = config.spin().toNanos();
        this.lingerNanos = config.linger().toNanos();
        this.adaptive = config.adaptive();
        this.max = max;
        this.takenKeys = orderedPerKey ? null : new HashSet<>();
    }

    /** Queues a request (any thread). */
    void add(CoalescedRequest r) {
        queue.add(r);
    }

    /** Asks the dispatcher to stop once it has run what is queued before this call. */
    void poison() {
        queue.add(CoalescedRequest.POISON);
    }

    /** Takes what is still queued (after the dispatcher stopped). */
    List<CoalescedRequest> drain() {
        List<CoalescedRequest> left = new ArrayList<>();
        queue.drainTo(left);
        return left;
    }

    /**
     * The next engine batch's requests, in queue order: at least one, waited for, unless
     * {@code batchInFlight} (its callers are not back yet, so nothing is waited for, and null is
     * returned when nothing is queued). The list is reused by the next call. After it,
     * {@link #stopRequested} says whether the stop request came (it is not in the list).
     */
    List<CoalescedRequest> gather(boolean batchInFlight) throws InterruptedException {
        taken.clear();
        takenOps = 0;
        if (takenKeys != null) {
            takenKeys.clear();
        }
        CoalescedRequest first = carried != null ? carried : batchInFlight ? queue.poll() : next();
        carried = null;
        if (first == null) {
            return null;
        }
        take(first);
        drainUpTo();
        long wait = batchInFlight ? 0 : lingerNanos > 0 ? lingerNanos
                : adaptive ? Math.min(MAX_ADAPTIVE_WAIT_NANOS, lastRunNanos / 4) : 0;
        int want = lingerNanos > 0 ? max : Math.min(max, lastSize);
        if (wait > 0 && taken.size() < want && !stop) {
            long deadline = System.nanoTime() + wait;
            long left;
            while (taken.size() < want && (left = deadline - System.nanoTime()) > 0) {
                CoalescedRequest r = queue.poll(left, TimeUnit.NANOSECONDS);
                if (r == null) {
                    break;
                }
                if (!fits(r)) {
                    carried = r;  // first of the next batch
                    break;
                }
                take(r);
                if (stop) {
                    break;
                }
                drainUpTo();
            }
        }
        return taken;
    }

    /** {@return whether the last {@link #gather} took the stop request} */
    boolean stopRequested() {
        return stop;
    }

    /** Notes how long the last batch ran and how many requests it had: the adaptive wait's measure. */
    void ran(long nanos, int requests) {
        lastRunNanos = nanos;
        lastSize = requests;
    }

    /** The next request: polled for up to the spin time (no wake-up to pay when one comes soon), then waited for. */
    private CoalescedRequest next() throws InterruptedException {
        if (spinNanos > 0) {
            long deadline = System.nanoTime() + spinNanos;
            int round = 0;
            do {
                CoalescedRequest r = queue.poll();
                if (r != null) {
                    return r;
                }
                IdleStrategy.BUSY_SPIN.idle(round++);
            } while (System.nanoTime() - deadline < 0);
        }
        return queue.take();
    }

    /** Whether {@code r} may join the batch being gathered: within the limit, and on keys it does not hold where that matters. */
    private boolean fits(CoalescedRequest r) {
        if (r == CoalescedRequest.POISON) {
            return true;
        }
        if (takenOps + r.operations() > max) {
            return false;
        }
        if (takenKeys != null) {
            for (int i = 0; i < r.operations(); i++) {
                if (takenKeys.contains(keyOf(r, i))) {
                    return false;
                }
            }
        }
        return true;
    }

    /** Adds {@code r} to the batch being gathered (the stop request only sets {@link #stop}). */
    private void take(CoalescedRequest r) {
        if (r == CoalescedRequest.POISON) {
            stop = true;
            return;
        }
        taken.add(r);
        takenOps += r.operations();
        if (takenKeys != null) {
            for (int i = 0; i < r.operations(); i++) {
                takenKeys.add(keyOf(r, i));
            }
        }
    }

    /** Key {@code i} of a request (0 for a single operation). */
    private static HostReadCache.KeyBytes keyOf(CoalescedRequest r, int i) {
        return new HostReadCache.KeyBytes(r.batch == null ? SegmentBytes.copyOf(r.key) : r.batch.key(i));
    }

    /** Moves waiting requests into the batch while they fit (one that does not stays first in line). */
    private void drainUpTo() {
        CoalescedRequest next;
        while (!stop && (next = queue.peek()) != null && fits(next)) {
            if (queue.poll() != next) {
                break;  // single consumer: cannot happen, but never lose a request
            }
            take(next);
        }
    }
}
