package org.gphash.cuda.routing;

import java.lang.foreign.MemorySegment;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.Outcome;
import org.gphash.PoolFullException;
import org.gphash.spi.Engine;

/**
 * Part of a batch run as a batch of its own, its results put in place in the whole batch's result:
 * what the host route does with the operations after one that needs the GPU, and what the host-first
 * open does with runs of distinct keys.
 */
public final class BatchRanges {

    private BatchRanges() {
    }

    /**
     * Runs operations {@code from} (inclusive) to {@code to} (exclusive) of {@code batch} on
     * {@code engine}, into {@code result}'s places for them; a {@link PoolFullException} part way
     * carries {@code result}, the part's outcomes so far in place and NOT_APPLIED from where it stopped.
     */
    public static void run(Engine engine, Batch batch, int from, int to, BatchResult result) {
        int m = to - from;
        boolean packed = batch.valuesPacked();
        Batch part = Batch.create(batch.keySize(), batch.valueSize(), m, packed).addRange(batch, from, to);
        BatchResult r = BatchResult.create(batch.valueSize(), m, packed);
        try {
            engine.execute(part, r);
        } catch (PoolFullException e) {
            // The part's outcomes so far go to their places in the caller's result, whose operations
            // after the part its reset left NOT_APPLIED: the exception then holds the whole batch's
            // result, as its contract says, not the part's (whose positions the caller cannot map).
            moveResults(r, m, result, from, batch.valueSize());
            throw new PoolFullException(e.getMessage() + " (operations " + from + " to " + (to - 1) + " of a batch of "
                    + result.size() + ", run as a batch of their own; the result is the whole batch's)", result, e);
        }
        moveResults(r, m, result, from, batch.valueSize());
    }

    /**
     * Moves the first {@code m} results of {@code part} into {@code result} from position {@code at}:
     * outcomes, and each value read at its length, in either result's layout ({@link BatchResult#valuesPacked});
     * both are results of values of up to {@code valueSize} bytes.
     */
    public static void moveResults(BatchResult part, int m, BatchResult result, int at, int valueSize) {
        MemorySegment.copy(part.outcomeCodes(), 0, result.outcomeCodes(), at, m);
        if (!part.valuesPacked() && !result.valuesPacked() && !part.hasShorterValues()) {
            long v = valueSize;
            MemorySegment.copy(part.values(), 0, result.values(), at * v, m * v);  // places of the value size, whole
            return;
        }
        for (int j = 0; j < m; j++) {
            Outcome o = part.outcome(j);
            if (o == Outcome.FOUND || o == Outcome.REPLACED) {
                result.putValue(at + j, part.valueBlock(), part.valueOffset(j), part.valueLength(j));
            }
        }
    }
}
