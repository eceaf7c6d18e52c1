package org.gphash.cuda;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;

import jcuda.CudaException;
import org.gphash.BatchResult;
import org.gphash.Outcome;
import org.gphash.PoolFullException;
import org.gphash.cuda.runtime.GpuFailure;
import org.gphash.cuda.runtime.KernelParams;

/**
 * What the caller of a batch that failed part way is told: a CUDA failure as the engine's
 * {@link GpuFailure}, a full pool with the operations that did not run marked NOT_APPLIED in the
 * result and counted in the message, anything else as it was thrown.
 */
final class BatchFailures {

    private BatchFailures() {
    }

    /**
     * What a failure of a batch of {@code n} operations on {@code pool} is reported as;
     * {@code positions}: where a part's operations lie in {@code result} (null: the whole result is the
     * batch's).
     */
    static RuntimeException of(RuntimeException e, Path pool, int n, BatchResult result, MemorySegment positions) {
        if (e instanceof CudaException c) {
            return GpuFailure.of(pool, "a batch of " + n + " operations", c);
        }
        if (e instanceof PoolFullException) {
            return new PoolFullException(e.getMessage() + "; " + markNotApplied(result, positions, n)
                    + " operations of the batch were not applied (NOT_APPLIED in the result), the others were", result, e);
        }
        return e;
    }

    /**
     * After a batch failed part way: every operation whose code is not an outcome (it waited for a
     * resize that failed, or its chunk never ran) becomes NOT_APPLIED, and flags the kernels set
     * come off the others. Returns how many did not run.
     */
    static int markNotApplied(BatchResult result) {
        return markNotApplied(result, null, result.size());
    }

    /** The same for the {@code n} operations at {@code positions} of {@code result} (null: its first n). */
    static int markNotApplied(BatchResult result, MemorySegment positions, int n) {
        MemorySegment codes = result.outcomeCodes();
        int notApplied = 0;
        for (int j = 0; j < n; j++) {
            int i = positions == null ? j : positions.getAtIndex(ValueLayout.JAVA_INT_UNALIGNED, j);
            int code = codes.get(ValueLayout.JAVA_BYTE, i) & KernelParams.CODE_MASK;
            if (code < Outcome.FOUND.code() || code > Outcome.REPLACED.code()) {
                codes.set(ValueLayout.JAVA_BYTE, i, Outcome.NOT_APPLIED.code());
                notApplied++;
            } else {
                codes.set(ValueLayout.JAVA_BYTE, i, (byte) code);
            }
        }
        return notApplied;
    }
}
