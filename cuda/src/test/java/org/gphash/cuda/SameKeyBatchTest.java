package org.gphash.cuda;

import static org.gphash.cuda.GpuTestSupport.key;
import static org.gphash.cuda.GpuTestSupport.value;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The documented rule for several operations on one key in one GPU batch (see {@link Batch}): each
 * operation is atomic and the batch behaves as if its operations ran one after another in some
 * order. For every key the test searches the orders of that key's operations for one that explains
 * every outcome, every returned value and the key's state afterwards; one must exist.
 *
 * <p>Generated groups let at most one operation insert a key that is absent when the batch starts:
 * two racing inserts of an absent key may both report INSERTED (the valid-item rule every engine
 * shares), which no serial order explains; {@link ContentionTest} covers that race.
 */
class SameKeyBatchTest {

    record Op(OpKind kind, byte[] value, Outcome outcome, byte[] returned) {
    }

    @BeforeEach
    void gpu() {
        GpuTestSupport.assumeGpu();
    }

    @Test
    void everyKeyOfABatchIsExplainedBySomeSerialOrder() {
        try (GpuTestSupport t = GpuTestSupport.create();
             GpuEngine gpu = GpuEngines.create(GpuTestSupport.config(t.pool("gpu"), Backend.GPU, 8, 2, 2, 8, 4096, 11))) {
            Random random = new Random(11);
            Map<Long, byte[]> model = new HashMap<>();
            long version = 0;
            BatchResult result = new BatchResult(GpuTestSupport.VALUE_SIZE, 1);
            OpKind[] kinds = GpuTestSupport.PLAIN_KINDS;
            for (int round = 0; round < 30; round++) {
                Batch batch = Batch.create(8, GpuTestSupport.VALUE_SIZE, 4096);
                Map<Long, List<Integer>> groups = new HashMap<>();
                for (int g = 0; g < 1000; g++) {
                    long k = random.nextInt(3000);
                    if (groups.containsKey(k)) {
                        continue;
                    }
                    int size = 1 + random.nextInt(4);
                    boolean inserterChosen = false;
                    List<Integer> ops = new ArrayList<>();
                    for (int j = 0; j < size; j++) {
                        OpKind kind = kinds[random.nextInt(kinds.length)];
                        boolean inserts = kind == OpKind.PUT || kind == OpKind.INSERT;
                        if (inserts && !model.containsKey(k)) {
                            if (inserterChosen) {
                                kind = OpKind.UPDATE;
                            }
                            inserterChosen = true;
                        }
                        ops.add(batch.size());
                        batch.add(kind, key(k, 8), kind.hasValue() ? value(k, ++version) : null);
                    }
                    groups.put(k, ops);
                }
                // Shuffle positions are already mixed: groups interleave across warps by insertion order.
                gpu.execute(batch, result);
                Batch reads = Batch.create(8, GpuTestSupport.VALUE_SIZE, groups.size());
                List<Long> keys = new ArrayList<>(groups.keySet());
                for (long k : keys) {
                    reads.get(key(k, 8));
                }
                BatchResult after = new BatchResult(GpuTestSupport.VALUE_SIZE, 1);
                gpu.execute(reads, after);
                for (int i = 0; i < keys.size(); i++) {
                    long k = keys.get(i);
                    List<Op> ops = new ArrayList<>();
                    for (int idx : groups.get(k)) {
                        byte[] v = batch.kind(idx).hasValue() ? valueOf(batch, idx) : null;
                        ops.add(new Op(batch.kind(idx), v, result.outcome(idx), result.value(idx)));
                    }
                    byte[] finalValue = after.outcome(i) == Outcome.FOUND ? after.value(i) : null;
                    if (!explainable(model.get(k), ops, finalValue)) {
                        fail("round " + round + " key " + k + ": no serial order explains " + describe(ops)
                                + " from " + (model.get(k) == null ? "absent" : "v" + GpuTestSupport.versionOf(model.get(k)))
                                + " to " + (finalValue == null ? "absent" : "v" + GpuTestSupport.versionOf(finalValue)));
                    }
                    if (finalValue == null) {
                        model.remove(k);
                    } else {
                        model.put(k, finalValue);
                    }
                }
            }
            assertTrue(gpu.diagnostics().verify().sound());
        }
    }

    private static byte[] valueOf(Batch batch, int i) {
        return batch.values().asSlice((long) i * GpuTestSupport.VALUE_SIZE, GpuTestSupport.VALUE_SIZE)
                .toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
    }

    private static String describe(List<Op> ops) {
        StringBuilder b = new StringBuilder();
        for (Op o : ops) {
            b.append(o.kind()).append(o.value() == null ? "" : "(v" + GpuTestSupport.versionOf(o.value()) + ")")
                    .append("->").append(o.outcome())
                    .append(o.returned() == null ? "" : "[v" + GpuTestSupport.versionOf(o.returned()) + "]").append(' ');
        }
        return b.toString();
    }

    /** Whether some order of {@code ops} applied to {@code initial} yields every outcome and {@code end}. */
    static boolean explainable(byte[] initial, List<Op> ops, byte[] end) {
        int[] order = new int[ops.size()];
        for (int i = 0; i < order.length; i++) {
            order[i] = i;
        }
        return permute(order, 0, initial, ops, end);
    }

    private static boolean permute(int[] order, int at, byte[] initial, List<Op> ops, byte[] end) {
        if (at == order.length) {
            return replays(order, initial, ops, end);
        }
        for (int i = at; i < order.length; i++) {
            swap(order, at, i);
            if (permute(order, at + 1, initial, ops, end)) {
                return true;
            }
            swap(order, at, i);
        }
        return false;
    }

    private static void swap(int[] a, int i, int j) {
        int x = a[i];
        a[i] = a[j];
        a[j] = x;
    }

    private static boolean replays(int[] order, byte[] initial, List<Op> ops, byte[] end) {
        byte[] state = initial;
        for (int i : order) {
            Op op = ops.get(i);
            Outcome expected;
            byte[] returned = null;
            switch (op.kind()) {
                case GET -> {
                    expected = state != null ? Outcome.FOUND : Outcome.NOT_FOUND;
                    returned = state;
                }
                case PUT -> {
                    expected = state == null ? Outcome.INSERTED : Outcome.UPDATED;
                    state = op.value();
                }
                case INSERT -> {
                    expected = state == null ? Outcome.INSERTED : Outcome.EXISTS;
                    if (state == null) {
                        state = op.value();
                    }
                }
                case UPDATE -> {
                    expected = state != null ? Outcome.UPDATED : Outcome.NOT_FOUND;
                    if (state != null) {
                        state = op.value();
                    }
                }
                case DELETE -> {
                    expected = state != null ? Outcome.DELETED : Outcome.NOT_FOUND;
                    state = null;
                }
                case READ_MODIFY_WRITE -> {
                    expected = state != null ? Outcome.REPLACED : Outcome.NOT_FOUND;
                    returned = state;
                    if (state != null) {
                        state = op.value();
                    }
                }
                default -> throw new IllegalStateException();
            }
            if (expected != op.outcome()) {
                return false;
            }
            if ((expected == Outcome.FOUND || expected == Outcome.REPLACED) && !Arrays.equals(returned, op.returned())) {
                return false;
            }
        }
        return Arrays.equals(state, end);
    }
}
