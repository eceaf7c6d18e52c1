package org.gphash.frontend;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
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

    /**
     * The values of a merged caller batch's {@code n} results, operations {@code i..i+n-1} of the engine
     * batch's {@code result}, into the caller's {@code to}: in one copy where both hold each value in
     * a place of the value size and every value has it, else one by one at their lengths.
     */
    private void handOutValues(BatchResult result, int i, BatchResult to, int n) {
        MemorySegment values = result.valueBlock();
        if (!result.valuesPacked() && !to.valuesPacked() && !result.hasShorterValues()) {
            MemorySegment.copy(values, (long) i * valueSize, to.values(), 0, (long) n * valueSize);
            return;
        }
        MemorySegment codes = result.outcomeCodes();
        for (int k = 0; k < n; k++) {
            byte code = codes.get(ValueLayout.JAVA_BYTE, i + k);
            if (code == Outcome.FOUND.code() || code == Outcome.REPLACED.code()) {
                to.putValue(k, values, result.valueOffset(i + k), result.valueLength(i + k));
            }
        }
    }

    /** Hands out the result of the engine batch built from {@code done}, in order, and wakes the callers. */
    void deliver(CoalescedRequest[] done, BatchResult result) {
        complete(done, handOut(done, result));
    }

    /** Copies each caller's part of the engine batch's result to where it asked: outcomes, values, merged batches' results. */
    private Outcome[] handOut(CoalescedRequest[] done, BatchResult result) {
        MemorySegment values = result.valueBlock();
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
                r.batchResult.reset(r.batch);
                MemorySegment.copy(codes, i, r.batchResult.outcomeCodes(), 0, n);
                if (r.returnsValues) {
                    handOutValues(result, i, r.batchResult, n);
                }
                outcomes[j] = Outcome.FOUND;  // unused: the caller reads its BatchResult
                continue;
            }
            Outcome o = result.outcome(i);
            if (r.kind == OpKind.GET && o == Outcome.FOUND) {
                r.length = result.valueLength(i);
                long from = result.valueOffset(i);
                if (r.out != null) {
                    // The caller's place of the value size gets the value and, past a shorter one, zeros.
                    MemorySegment.copy(values, from, r.out, 0, r.length);
                    if (r.length < valueSize) {
                        r.out.asSlice(r.length, Math.min(r.out.byteSize(), valueSize) - r.length).fill((byte) 0);
                    }
                } else {
                    r.valueOut = SegmentBytes.copyOf(values, from, r.length);
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
