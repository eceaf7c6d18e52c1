package org.gphash.frontend;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.ForkJoinPool;

import org.gphash.BatchResult;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.spi.SegmentBytes;

/**
 * Hands a finished engine batch of the coalescer to its callers: each caller's outcome, the value a
 * get found (into the caller's segment or a fresh array), a merged caller batch's outcomes and values
 * in its own numbering; then wakes them. Dispatcher thread only.
 */
final class CallerCompletions {

    /** Callers woken by the dispatcher itself; beyond, pool threads wake them in chunks of this many. */
    private static final int COMPLETE_INLINE = 8;
    private static final int COMPLETE_CHUNK = 16;

    private final int valueSize;
    /** The host cache, whose entries for the keys written are dropped once the writes have run; or null. */
    private final HostReadCache hostCache;

    CallerCompletions(int valueSize, HostReadCache hostCache) {
        this.valueSize = valueSize;
        this.hostCache = hostCache;
    }

    /** Hands out the result of the engine batch built from {@code done}, in order, and wakes the callers. */
    void deliver(CoalescedRequest[] done, BatchResult result) {
        complete(done, handOut(done, result));
    }

    /** Copies each caller's part of the engine batch's result to where it asked: outcomes, values, merged batches' results. */
    private Outcome[] handOut(CoalescedRequest[] done, BatchResult result) {
        MemorySegment values = result.values();
        MemorySegment codes = result.outcomeCodes();
        Outcome[] outcomes = new Outcome[done.length];
        int at = 0;
        for (int j = 0; j < done.length; j++) {
            CoalescedRequest r = done[j];
            int i = at;
            at += r.operations();
            if (r.batch != null) {
                // A merged caller batch: its outcomes and values, in its own numbering.
                int n = r.batch.size();
                r.batchResult.reset(n);
                MemorySegment.copy(codes, i, r.batchResult.outcomeCodes(), 0, n);
                if (r.returnsValues) {
                    MemorySegment.copy(values, (long) i * valueSize, r.batchResult.values(), 0, (long) n * valueSize);
                    for (int k = 0; k < n; k++) {
                        int length = result.valueLength(i + k);
                        if (length < valueSize) {
                            r.batchResult.setValueLength(k, length);
                        }
                    }
                }
                outcomes[j] = Outcome.FOUND;  // unused: the caller reads its BatchResult
                continue;
            }
            Outcome o = result.outcome(i);
            if (r.kind == OpKind.GET && o == Outcome.FOUND) {
                // A shorter value's place is zeroed past it: the whole place is copied to an output segment.
                r.length = result.valueLength(i);
                if (r.out != null) {
                    MemorySegment.copy(values, (long) i * valueSize, r.out, 0, valueSize);
                } else {
                    r.valueOut = SegmentBytes.copyOf(values, (long) i * valueSize, r.length);
                }
            }
            if (r.cacheKey != null) {
                hostCache.written(r.cacheKey);  // the write has run: nothing read before it may stay cached
            }
            outcomes[j] = o;
        }
        return outcomes;
    }

    /**
     * Wakes the callers. Waking a parked thread costs the waker microseconds, and a batch may hold
     * thousands of callers: beyond a few, chunks are woken by pool threads while the dispatcher goes
     * on to the next batch (results are all in place already; each caller's own order is unaffected,
     * since a caller has at most one synchronous operation waiting, and async ones were queued in order
     * into this batch or an earlier one).
     */
    private static void complete(CoalescedRequest[] done, Outcome[] outcomes) {
        int n = done.length;
        if (n <= COMPLETE_INLINE) {
            for (int i = 0; i < n; i++) {
                done[i].complete(outcomes[i]);
            }
            return;
        }
        for (int from = 0; from < n; from += COMPLETE_CHUNK) {
            int start = from;
            int end = Math.min(n, from + COMPLETE_CHUNK);
            ForkJoinPool.commonPool().execute(() -> {
                for (int i = start; i < end; i++) {
                    done[i].complete(outcomes[i]);
                }
            });
        }
    }
}
