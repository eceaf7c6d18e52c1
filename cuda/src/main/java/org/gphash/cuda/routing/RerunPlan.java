package org.gphash.cuda.routing;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.Map;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.Outcome;

/**
 * What a host batch runs again after a resize, so that its results stay those of batch order. A
 * chunk's group of operations on one key whose insert found every candidate bucket full does
 * nothing and runs again, whole, after a resize; the key was absent when the chunk began. But the
 * batch's later chunks were queued behind it and ran meanwhile, so their operations on that key saw
 * it absent too: a get found nothing, a delete deleted nothing, a put may even have found a slot a
 * delete freed. Those later operations run again as well, in batch order after the deferred ones,
 * so that each key's operations from its deferred group on run once more, in order. Where one of
 * them changed the key in its first run (that put), the key is deleted first, back to absent as the
 * deferred group found it; otherwise the key is as the group found it, or as another thread's batch
 * running alongside left it, which this batch may follow. (A key deleted first that another thread's
 * batch wrote meanwhile loses that write to this batch's, as if this batch ran after it; a crash
 * before the rerun would leave the key absent.) Found with batches of 150,000 (two and three chunks)
 * killed and checked by {@code crashtest --backend gpu}: a later chunk's operations returned what
 * the acknowledged history denies. Operations on other keys are independent of these and stay as
 * run.
 *
 * @param ops         positions in the batch to run again, ascending
 * @param deleteFirst positions whose keys are deleted before {@link #ops} run (one per key a later
 *                    operation changed), ascending; mostly empty
 */
public record RerunPlan(int[] ops, int[] deleteFirst) {

    private static final int[] NONE = new int[0];

    /**
     * The plan for {@code batch} whose chunks deferred the operations at {@code deferred} (ascending
     * positions, every chunk's, oldest chunk first), with {@code result} holding what every chunk's
     * run returned. Scans the batch's keys after the first deferred operation (only when something
     * was deferred: a resize, which costs far more).
     */
    public static RerunPlan of(Batch batch, BatchResult result, int[] deferred) {
        if (deferred.length == 0) {
            return new RerunPlan(deferred, NONE);
        }
        int n = batch.size();
        Map<ByteBuffer, Integer> firstDeferred = new HashMap<>();
        BitSet isDeferred = new BitSet(n);
        int from = Integer.MAX_VALUE;
        for (int p : deferred) {
            firstDeferred.putIfAbsent(ByteBuffer.wrap(batch.key(p)), p);
            isDeferred.set(p);
            from = Math.min(from, p);
        }
        int[] later = new int[16];
        int laterCount = 0;
        Map<ByteBuffer, Integer> conflicted = new HashMap<>();
        for (int p = from + 1; p < n; p++) {
            if (isDeferred.get(p)) {
                continue;
            }
            ByteBuffer k = ByteBuffer.wrap(batch.key(p));
            Integer first = firstDeferred.get(k);
            if (first != null && p > first) {
                if (laterCount == later.length) {
                    later = Arrays.copyOf(later, laterCount * 2);
                }
                later[laterCount++] = p;
                if (changedTheKey(result.outcome(p))) {
                    conflicted.putIfAbsent(k, first);
                }
            }
        }
        if (laterCount == 0) {
            return new RerunPlan(deferred, NONE);
        }
        int[] ops = new int[deferred.length + laterCount];
        System.arraycopy(deferred, 0, ops, 0, deferred.length);
        System.arraycopy(later, 0, ops, deferred.length, laterCount);
        Arrays.sort(ops);
        int[] deleteFirst = conflicted.values().stream().mapToInt(Integer::intValue).sorted().toArray();
        return new RerunPlan(ops, deleteFirst);
    }

    /** Whether an operation that returned {@code o} changed its key (its value, or whether it is there). */
    static boolean changedTheKey(Outcome o) {
        return switch (o) {
            case INSERTED, UPDATED, DELETED, REPLACED -> true;
            case NOT_APPLIED, FOUND, NOT_FOUND, EXISTS -> false;
        };
    }
}
