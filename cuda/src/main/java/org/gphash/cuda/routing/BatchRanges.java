package org.gphash.cuda.routing;

import java.lang.foreign.MemorySegment;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.spi.Engine;

/**
 * Part of a batch run as a batch of its own, its results put in place in the whole batch's result:
 * what the host route does with the operations after one that needs the GPU, and what the host-first
 * open does with runs of distinct keys.
 */
public final class BatchRanges {

    private BatchRanges() {
    }

    /** Runs operations {@code from} (inclusive) to {@code to} (exclusive) of {@code batch} on {@code engine}, into {@code result}'s places for them. */
    public static void run(Engine engine, Batch batch, int from, int to, BatchResult result) {
        int m = to - from;
        long v = batch.valueSize();
        Batch part = Batch.create(batch.keySize(), batch.valueSize(), m).addRange(batch, from, to);
        BatchResult r = new BatchResult(batch.valueSize(), m);
        engine.execute(part, r);
        MemorySegment.copy(r.outcomeCodes(), 0, result.outcomeCodes(), from, m);
        MemorySegment.copy(r.values(), 0, result.values(), from * v, m * v);
    }
}
