package org.gphash.cuda.routing;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.cuda.runtime.KernelParams;

/**
 * Runs a batch that holds conditional operations ({@link OpKind#COMPARE_AND_SET},
 * {@link OpKind#COMPARE_AND_DELETE}) on the GPU engine, whose kernels know the six plain kinds.
 * It runs under the engine's lock, which every write to the pool and the GPU takes, so nothing
 * writes between its steps; per segment of the batch:
 * <ol>
 *   <li>one batch of gets reads the current values of the segment's conditional keys;
 *   <li>each conditional operation is compared on the host and becomes the plain operation it
 *   amounts to: a matching compare-and-set an UPDATE, a matching compare-and-delete a DELETE, any
 *   other a GET (which changes nothing; its outcome is then EXISTS or NOT_FOUND);
 *   <li>the segment runs as one plain batch, with the same-key semantics of every batch.
 * </ol>
 * The gets see the pool as the segment starts, so a segment ends before a conditional operation
 * whose key an earlier operation of the segment touched: there the pool may not yet hold the state
 * the conditional operation must compare with. A batch whose conditional keys are distinct and
 * appear nowhere earlier in it is one segment, two GPU round trips. Keys are told apart by a 64-bit
 * hash: two keys that collide only cut the batch once more, which is never wrong.
 *
 * <p>Every route of the engine (the pipeline on the index mirror, the pool path, the small-batch
 * shortcuts) runs the plain batches, so one class covers them all. Device-resident batches carry no
 * expected values and take the six plain kinds only.
 */
public final class ConditionalBatches {

    /** Runs a plain batch (no conditional operations) under the engine's lock, into a result reset to its size. */
    @FunctionalInterface
    public interface PlainRunner {
        void run(Batch batch, BatchResult result);
    }

    private ConditionalBatches() {
    }

    /**
     * Runs {@code batch} into {@code result} (already reset to the batch's size) through
     * {@code runner}. If a plain batch throws, the segments before it were applied, and the
     * operations of its own segment that ran have their outcomes in {@code result}.
     */
    public static void execute(Batch batch, BatchResult result, PlainRunner runner) {
        int n = batch.size();
        MemorySegment kinds = batch.kinds();
        MemorySegment keys = batch.keys();
        // Each operation's key hashed once, and whether it is conditional, for every segment to read.
        long[] hash = new long[n];
        boolean[] conditional = new boolean[n];
        BatchKeys.LongSet conditionalKeys = new BatchKeys.LongSet(n);
        for (int i = 0; i < n; i++) {
            hash[i] = BatchKeys.hash(keys, batch.keySize(), i);
            conditional[i] = OpKind.ofOrdinal(kinds.get(ValueLayout.JAVA_BYTE, i)).isConditional();
            if (conditional[i]) {
                conditionalKeys.add(hash[i]);
            }
        }
        BatchKeys.LongSet touched = new BatchKeys.LongSet(n);
        int start = 0;
        while (start < n) {
            int end = segmentEnd(hash, conditional, start, conditionalKeys, touched);
            runSegment(batch, conditional, start, end, result, runner);
            start = end;
        }
    }

    /**
     * The end of the segment that starts at {@code start}: the first conditional operation after it
     * whose key an earlier operation of the segment touched, or the batch's end.
     */
    private static int segmentEnd(long[] hash, boolean[] conditional, int start, BatchKeys.LongSet conditionalKeys,
                                  BatchKeys.LongSet touched) {
        touched.clear();
        for (int i = start; i < hash.length; i++) {
            long h = hash[i];
            if (!conditionalKeys.contains(h)) {
                continue;  // no conditional operation has this key: its order with them is kept by the plain batch
            }
            if (conditional[i] && touched.contains(h)) {
                return i;
            }
            touched.add(h);
        }
        return hash.length;
    }

    private static void runSegment(Batch batch, boolean[] conditional, int start, int end, BatchResult result,
                                   PlainRunner runner) {
        int m = end - start;
        int keySize = batch.keySize();
        int valueSize = batch.valueSize();
        boolean packed = batch.valuesPacked();
        MemorySegment kinds = batch.kinds();

        // 1. The current values of the conditional keys.
        int conditionals = 0;
        for (int i = start; i < end; i++) {
            conditionals += conditional[i] ? 1 : 0;
        }
        Batch reads = Batch.create(keySize, valueSize, conditionals, packed);
        int[] at = new int[conditionals];
        for (int i = start, c = 0; i < end; i++) {
            if (conditional[i]) {
                reads.get(batch.key(i));
                at[c++] = i - start;
            }
        }
        BatchResult current = BatchResult.create(valueSize, conditionals, packed);
        current.reset(reads);
        if (conditionals > 0) {
            runner.run(reads, current);
        }

        // 2. What each conditional operation amounts to, and the outcome of each that does not act.
        OpKind[] plainKinds = new OpKind[conditionals];
        Outcome[] refused = new Outcome[conditionals];
        for (int c = 0; c < conditionals; c++) {
            int i = start + at[c];
            OpKind kind = OpKind.ofOrdinal(kinds.get(ValueLayout.JAVA_BYTE, i));
            boolean found = current.outcome(c) == Outcome.FOUND;
            boolean matches = found && sameValue(current, c, batch, i);
            plainKinds[c] = !matches ? OpKind.GET : kind == OpKind.COMPARE_AND_SET ? OpKind.UPDATE : OpKind.DELETE;
            refused[c] = matches ? null : found ? Outcome.EXISTS : Outcome.NOT_FOUND;
        }
        Batch plain = packed ? packedSegment(batch, start, m, at, plainKinds) : fixedSegment(batch, start, m, at, plainKinds);

        // 3. The segment, with the outcomes moved into the caller's result (also when it fails part way).
        BatchResult segment = BatchResult.create(valueSize, m, packed);
        segment.reset(plain);
        try {
            runner.run(plain, segment);
        } finally {
            BatchRanges.moveResults(segment, m, result, start, valueSize);
            MemorySegment codes = result.outcomeCodes();
            for (int c = 0; c < conditionals; c++) {
                int i = start + at[c];
                // A code that is no outcome (the batch failed before this operation ran) is left for
                // the engine's failure handling to mark NOT_APPLIED.
                int ran = segment.outcomeCodes().get(ValueLayout.JAVA_BYTE, at[c]) & KernelParams.CODE_MASK;
                if (refused[c] != null && ran >= Outcome.FOUND.code() && ran <= Outcome.REPLACED.code()) {
                    codes.set(ValueLayout.JAVA_BYTE, i, refused[c].code());
                }
            }
        }
    }

    /**
     * Whether the value {@code current} read for conditional {@code c} is operation {@code i}'s expected
     * value: packed, its length and bytes; else the whole place of the value size, as a get gives it
     * (a shorter value followed by zeros).
     */
    private static boolean sameValue(BatchResult current, int c, Batch batch, int i) {
        if (!batch.valuesPacked()) {
            long v = (long) c * batch.valueSize();
            long e = (long) i * batch.valueSize();
            return MemorySegment.mismatch(current.values(), v, v + batch.valueSize(), batch.expectedValues(), e,
                    e + batch.valueSize()) == -1;
        }
        int length = batch.expectedLength(i);
        if (current.valueLength(c) != length) {
            return false;
        }
        long v = current.valueOffset(c);
        long e = batch.expectedOffset(i);
        return MemorySegment.mismatch(current.valueBlock(), v, v + length, batch.expectedValues(), e, e + length) == -1;
    }

    /** Operations {@code start..start+m} of a batch of values of the value size, the conditional ones ({@code at}) as {@code plainKinds}. */
    private static Batch fixedSegment(Batch batch, int start, int m, int[] at, OpKind[] plainKinds) {
        int keySize = batch.keySize();
        int valueSize = batch.valueSize();
        Batch plain = Batch.create(keySize, valueSize, m).setSize(m);
        MemorySegment.copy(batch.kinds(), start, plain.kinds(), 0, m);
        MemorySegment.copy(batch.keys(), (long) start * keySize, plain.keys(), 0, (long) m * keySize);
        MemorySegment.copy(batch.values(), (long) start * valueSize, plain.values(), 0, (long) m * valueSize);
        for (int c = 0; c < at.length; c++) {
            plain.kinds().set(ValueLayout.JAVA_BYTE, at[c], (byte) plainKinds[c].ordinal());
        }
        return plain;
    }

    /**
     * The same for a batch of values of any length (packed), operation by operation: a compare-and-set
     * that acts writes its new value at its length.
     */
    private static Batch packedSegment(Batch batch, int start, int m, int[] at, OpKind[] plainKinds) {
        int keySize = batch.keySize();
        Batch plain = Batch.create(keySize, batch.valueSize(), m, true);
        MemorySegment keys = batch.keys();
        for (int j = 0, c = 0; j < m; j++) {
            int i = start + j;
            OpKind kind = c < at.length && at[c] == j ? plainKinds[c++] : OpKind.ofOrdinal(batch.kinds().get(ValueLayout.JAVA_BYTE, i));
            MemorySegment value = kind.hasValue() ? batch.values().asSlice(batch.valueOffset(i), batch.valueLength(i)) : null;
            plain.add(kind, keys.asSlice((long) i * keySize, keySize), value);
        }
        return plain;
    }
}
