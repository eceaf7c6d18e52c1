package org.gphash.frontend;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.CompletableFuture;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.OpKind;
import org.gphash.Outcome;

/**
 * One operation queued at the coalescer, or a caller's whole batch merged with others, and where its
 * result goes: the future completes with the operation's outcome once the engine batch holding it has
 * run (a merged batch's caller reads its {@link BatchResult} instead).
 */
final class CoalescedRequest extends CompletableFuture<Outcome> {

    /** What tells the dispatcher to stop; never completed. */
    static final CoalescedRequest POISON = new CoalescedRequest(OpKind.GET, null, null, null);

    final OpKind kind;
    final MemorySegment key;
    /** A write's key as the host cache knows it (null without a cache). */
    HostReadCache.KeyBytes cacheKey;
    /** A get that missed the host cache: its key there, and the stripe it noted (null: none). */
    HostReadCache.KeyBytes missedKey;
    long missedStamp;
    final MemorySegment value;
    /** Where a GET's value is copied (null: into {@link #valueOut}, a fresh array). */
    final MemorySegment out;
    byte[] valueOut;
    /** A found GET's value length (the value size, or less where the engine's values have any length). */
    int length;

    /** A caller's whole batch, merged with others into one engine batch (null: a single operation). */
    final Batch batch;
    final BatchResult batchResult;
    /**
     * Whether the merged batch reads values back (a get or a read-modify-write): only then are the
     * engine batch's values copied into its result. A batch of updates' 17,487 values copied back for
     * nothing took a fifth of the dispatcher's time in the DLRM replay (issue 57).
     */
    final boolean returnsValues;

    CoalescedRequest(OpKind kind, MemorySegment key, MemorySegment value, MemorySegment out) {
        this.kind = kind;
        this.key = key;
        this.value = value;
        this.out = out;
        this.batch = null;
        this.batchResult = null;
        this.returnsValues = kind == OpKind.GET;
    }

    CoalescedRequest(Batch batch, BatchResult result) {
        this.kind = null;
        this.key = null;
        this.value = null;
        this.out = null;
        this.batch = batch;
        this.batchResult = result;
        this.returnsValues = returnsValues(batch.kinds(), batch.size());
    }

    /** Whether any of the first {@code n} {@code kinds} returns a value in the result. */
    private static boolean returnsValues(MemorySegment kinds, int n) {
        for (int i = 0; i < n; i++) {
            byte k = kinds.get(ValueLayout.JAVA_BYTE, i);
            if (k == GET || k == READ_MODIFY_WRITE) {
                return true;
            }
        }
        return false;
    }

    private static final byte GET = (byte) OpKind.GET.ordinal();
    private static final byte READ_MODIFY_WRITE = (byte) OpKind.READ_MODIFY_WRITE.ordinal();

    /** {@return the operations this request adds to an engine batch} */
    int operations() {
        return batch == null ? 1 : batch.size();
    }
}
