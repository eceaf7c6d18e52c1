package org.gphash.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Map;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.OpKind;
import org.gphash.Outcome;

/**
 * A plain map as the model of an index's plain operations (no conditional ones) on values of any
 * length, for tests that run batches against it in order: what each operation's outcome must be, the
 * map changed as the operation changes the index, and a batch's results checked against that.
 */
final class PlainOperationModel {

    private PlainOperationModel() {
    }

    /**
     * Operation {@code i} of a batch, {@code kind} on key {@code k} (with value {@code v} where the kind
     * carries one), run now against {@code model}, which it then changes as the index would: its
     * outcome into {@code want[i]}, the value it must read (or null) into {@code wantValue[i]}.
     */
    static void apply(Map<Long, byte[]> model, OpKind kind, long k, byte[] v, Outcome[] want, byte[][] wantValue, int i) {
        want[i] = apply(model, kind, k, v, wantValue, i);
    }

    private static Outcome apply(Map<Long, byte[]> model, OpKind kind, long k, byte[] v, byte[][] wantValue, int i) {
        byte[] old = model.get(k);
        wantValue[i] = kind == OpKind.GET || kind == OpKind.READ_MODIFY_WRITE ? old : null;
        Outcome want = switch (kind) {
            case GET -> old != null ? Outcome.FOUND : Outcome.NOT_FOUND;
            case PUT -> old == null ? Outcome.INSERTED : Outcome.UPDATED;
            case INSERT -> old == null ? Outcome.INSERTED : Outcome.EXISTS;
            case UPDATE -> old != null ? Outcome.UPDATED : Outcome.NOT_FOUND;
            case DELETE -> old != null ? Outcome.DELETED : Outcome.NOT_FOUND;
            case READ_MODIFY_WRITE -> old != null ? Outcome.REPLACED : Outcome.NOT_FOUND;
            default -> throw new IllegalArgumentException(kind + " is not a plain operation");
        };
        switch (kind) {
            case PUT -> model.put(k, v);
            case INSERT -> model.putIfAbsent(k, v);
            case UPDATE, READ_MODIFY_WRITE -> model.computeIfPresent(k, (x, y) -> v);
            case DELETE -> model.remove(k);
            default -> { }
        }
        return want;
    }

    /**
     * Checks {@code result} of {@code batch}: operation i's outcome {@code want[i]}, and its value read
     * {@code wantValue[i]} at its length where that is not null; {@code where} leads each message.
     */
    static void check(Batch batch, BatchResult result, Outcome[] want, byte[][] wantValue, String where) {
        for (int i = 0; i < batch.size(); i++) {
            String at = where + ", batch of " + batch.size() + ", operation " + i + " (" + batch.kind(i) + ")";
            assertEquals(want[i], result.outcome(i), at);
            if (wantValue[i] != null) {
                assertArrayEquals(wantValue[i], result.value(i), at + ": the value at its length");
            }
        }
    }
}
