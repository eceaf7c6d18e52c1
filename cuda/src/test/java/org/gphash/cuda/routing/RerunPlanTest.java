package org.gphash.cuda.routing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.junit.jupiter.api.Test;

/**
 * What a host batch runs again after a resize ({@link RerunPlan}, CI: no GPU needed): the deferred
 * operations, plus every later operation on their keys outside the deferred groups, in batch order;
 * a key deleted first only where such a later operation changed it. Operations on other keys, and
 * earlier ones on the same keys, stay as they ran.
 */
class RerunPlanTest {

    private static byte[] key(long k) {
        return ByteBuffer.allocate(8).putLong(k).array();
    }

    /** A batch of (kind, key) pairs, every one with a value where its kind carries one. */
    private static Batch batch(Object... kindsAndKeys) {
        Batch b = Batch.create(8, 16, kindsAndKeys.length / 2);
        for (int i = 0; i < kindsAndKeys.length; i += 2) {
            OpKind kind = (OpKind) kindsAndKeys[i];
            b.add(kind, key((Integer) kindsAndKeys[i + 1]), kind.hasValue() ? new byte[16] : null);
        }
        return b;
    }

    /** A result in which operation i returned outcomes[i]. */
    private static BatchResult result(Outcome... outcomes) {
        BatchResult r = new BatchResult(16, outcomes.length);
        r.reset(outcomes.length);
        for (int i = 0; i < outcomes.length; i++) {
            r.outcomeCodes().set(ValueLayout.JAVA_BYTE, i, outcomeCode(outcomes[i]));
        }
        return r;
    }

    private static byte outcomeCode(Outcome o) {
        for (byte c = 0; c < 8; c++) {
            if (Outcome.ofCode(c) == o) {
                return c;
            }
        }
        throw new AssertionError(o);
    }

    @Test
    void nothingDeferredRunsNothing() {
        RerunPlan plan = RerunPlan.of(batch(OpKind.PUT, 1), result(Outcome.INSERTED), new int[0]);
        assertArrayEquals(new int[0], plan.ops());
        assertArrayEquals(new int[0], plan.deleteFirst());
    }

    @Test
    void deferredOperationsAloneRunAloneWhenNoLaterOperationTouchesTheirKeys() {
        // chunk 0: 0..2, chunk 1: 3..5; key 1's group (0, 2) deferred; later ops on keys 2 and 3 only
        Batch b = batch(OpKind.PUT, 1, OpKind.GET, 2, OpKind.GET, 1, OpKind.PUT, 2, OpKind.DELETE, 3, OpKind.GET, 2);
        BatchResult r = result(Outcome.NOT_APPLIED, Outcome.FOUND, Outcome.NOT_APPLIED, Outcome.UPDATED, Outcome.DELETED,
                Outcome.FOUND);
        RerunPlan plan = RerunPlan.of(b, r, new int[] {0, 2});
        assertArrayEquals(new int[] {0, 2}, plan.ops());
        assertArrayEquals(new int[0], plan.deleteFirst());
    }

    @Test
    void laterOperationsOnADeferredKeyRunAgainInBatchOrder() {
        // key 1: put in chunk 0 deferred; a get and a delete of it in chunk 1 found nothing
        Batch b = batch(OpKind.GET, 1, OpKind.PUT, 1, OpKind.PUT, 7, OpKind.GET, 1, OpKind.PUT, 8, OpKind.DELETE, 1);
        BatchResult r = result(Outcome.NOT_FOUND, Outcome.NOT_APPLIED, Outcome.INSERTED, Outcome.NOT_FOUND, Outcome.INSERTED,
                Outcome.NOT_FOUND);
        RerunPlan plan = RerunPlan.of(b, r, new int[] {1});
        assertArrayEquals(new int[] {1, 3, 5}, plan.ops(), "the deferred put, then the later get and delete; not the earlier get");
        assertArrayEquals(new int[0], plan.deleteFirst(), "nothing later changed key 1");
    }

    @Test
    void aKeyALaterOperationChangedIsDeletedFirst() {
        // keys 1 and 2 deferred in chunk 0; in chunk 1 a put of key 1 found a slot, key 2 was only read,
        // and key 3's later put is another key's
        Batch b = batch(OpKind.PUT, 1, OpKind.INSERT, 2, OpKind.PUT, 1, OpKind.GET, 2, OpKind.PUT, 3, OpKind.GET, 1);
        BatchResult r = result(Outcome.NOT_APPLIED, Outcome.NOT_APPLIED, Outcome.INSERTED, Outcome.NOT_FOUND,
                Outcome.INSERTED, Outcome.FOUND);
        RerunPlan plan = RerunPlan.of(b, r, new int[] {0, 1});
        assertArrayEquals(new int[] {0, 1, 2, 3, 5}, plan.ops());
        assertArrayEquals(new int[] {0}, plan.deleteFirst(), "key 1, named by its first deferred operation");
    }

    @Test
    void laterDeferredGroupsOfTheSameKeyAreNotCountedTwice() {
        // key 1 deferred in chunk 0 (0) and again in chunk 1 (2, 3): nothing else touches it
        Batch b = batch(OpKind.PUT, 1, OpKind.GET, 5, OpKind.PUT, 1, OpKind.GET, 1);
        BatchResult r = result(Outcome.NOT_APPLIED, Outcome.FOUND, Outcome.NOT_APPLIED, Outcome.NOT_APPLIED);
        RerunPlan plan = RerunPlan.of(b, r, new int[] {0, 2, 3});
        assertArrayEquals(new int[] {0, 2, 3}, plan.ops());
        assertArrayEquals(new int[0], plan.deleteFirst());
    }

    @Test
    void whatChangesAKey() {
        for (Outcome o : Outcome.values()) {
            boolean changes = o == Outcome.INSERTED || o == Outcome.UPDATED || o == Outcome.DELETED || o == Outcome.REPLACED;
            if (changes) {
                assertTrue(RerunPlan.changedTheKey(o), o.name());
            } else {
                assertFalse(RerunPlan.changedTheKey(o), o.name());
            }
        }
    }
}
