package org.gphash.cuda;

import org.gphash.OpKind;
import org.gphash.Outcome;

/**
 * The v2 pipeline's semantics stage (pipeline/pipe_semantics.cuh) in Java, step for step: two
 * inclusive max-scans over a batch sorted by key (batch order within a key) give every operation the
 * key's presence and value source before it, and every group its net effect. The kernels run the
 * same algorithm; {@link GroupSemanticsTest} holds this model to plain serial execution, so the
 * algorithm itself is checked in CI, without a GPU.
 */
final class GroupSemanticsModel {

    /** Value source: an operation's index, or these. */
    static final int POOL = -2;
    static final int NONE = -1;

    /** What the model computes for one sorted batch. */
    record Result(Outcome[] outcomes, int[] outputSource, Net[] nets) {
    }

    /** A group's net effect: the action and, for UPDATE and INSERT, the operation whose value it writes. */
    record Net(String action, int source) {
    }

    /** One group: the key's batch-start presence and its operations in batch order. */
    record Group(boolean present0, java.util.List<OpKind> kinds) {
    }

    /** {@link #run(OpKind[], int[], boolean[])} over groups laid out one after another in sorted order. */
    static Result run(java.util.List<Group> batch) {
        int n = batch.stream().mapToInt(g -> g.kinds().size()).sum();
        OpKind[] kinds = new OpKind[n];
        int[] group = new int[n];
        boolean[] present0 = new boolean[batch.size()];
        int i = 0;
        for (int g = 0; g < batch.size(); g++) {
            present0[g] = batch.get(g).present0();
            for (OpKind k : batch.get(g).kinds()) {
                kinds[i] = k;
                group[i++] = g;
            }
        }
        return run(kinds, group, present0);
    }

    private GroupSemanticsModel() {
    }

    /**
     * @param kinds    the operations in sorted order (groups contiguous, batch order within a group)
     * @param group    each position's group (non-decreasing)
     * @param present0 per group: the key was in the table at batch start
     */
    static Result run(OpKind[] kinds, int[] group, boolean[] present0) {
        int n = kinds.length;
        int[] start = new int[n];
        for (int i = 0; i < n; i++) {
            start[i] = i == 0 || group[i] != group[i - 1] ? i : start[i - 1];
        }
        // Scan 1: the last position at or before i that sets presence (PUT, INSERT, DELETE).
        int[] lastSet = new int[n];
        for (int i = 0; i < n; i++) {
            int v = setsPresence(kinds[i]) ? i : -1;
            lastSet[i] = Math.max(i == 0 ? -1 : lastSet[i - 1], v);
        }
        // Scan 2's input needs the presence before each position (scan 1).
        int[] lastSrc = new int[n];
        for (int i = 0; i < n; i++) {
            boolean present = presence(kinds, lastSet, start[i], i - 1, present0[group[i]]);
            int v = setsSource(kinds[i], present) ? i : -1;
            lastSrc[i] = Math.max(i == 0 ? -1 : lastSrc[i - 1], v);
        }
        Outcome[] out = new Outcome[n];
        int[] source = new int[n];
        Net[] nets = new Net[n];
        for (int i = 0; i < n; i++) {
            boolean p0 = present0[group[i]];
            boolean present = presence(kinds, lastSet, start[i], i - 1, p0);
            int src = source(kinds, lastSrc, start[i], i - 1, p0);
            source[i] = NONE;
            out[i] = switch (kinds[i]) {
                case GET -> present ? Outcome.FOUND : Outcome.NOT_FOUND;
                case PUT -> present ? Outcome.UPDATED : Outcome.INSERTED;
                case INSERT -> present ? Outcome.EXISTS : Outcome.INSERTED;
                case UPDATE -> present ? Outcome.UPDATED : Outcome.NOT_FOUND;
                case DELETE -> present ? Outcome.DELETED : Outcome.NOT_FOUND;
                case READ_MODIFY_WRITE -> present ? Outcome.REPLACED : Outcome.NOT_FOUND;
                case COMPARE_AND_SET, COMPARE_AND_DELETE -> throw conditional(kinds[i]);
            };
            if (present && (kinds[i] == OpKind.GET || kinds[i] == OpKind.READ_MODIFY_WRITE)) {
                source[i] = src;
            }
            boolean last = i + 1 == n || group[i + 1] != group[i];
            if (last) {
                boolean after = presence(kinds, lastSet, start[i], i, p0);
                int srcAfter = source(kinds, lastSrc, start[i], i, p0);
                if (p0 && !after) {
                    nets[i] = new Net("DELETE", NONE);
                } else if (after && srcAfter >= 0) {
                    nets[i] = new Net(p0 ? "UPDATE" : "INSERT", srcAfter);
                } else {
                    nets[i] = new Net("NONE", NONE);
                }
            }
        }
        return new Result(out, source, nets);
    }

    private static boolean setsPresence(OpKind k) {
        return k == OpKind.PUT || k == OpKind.INSERT || k == OpKind.DELETE;
    }

    private static boolean setsSource(OpKind k, boolean present) {
        return switch (k) {
            case PUT, DELETE -> true;
            case INSERT -> !present;
            case UPDATE, READ_MODIFY_WRITE -> present;
            case GET -> false;
            case COMPARE_AND_SET, COMPARE_AND_DELETE -> throw conditional(k);
        };
    }

    /** The kernels never see a conditional operation: {@link org.gphash.cuda.routing.ConditionalBatches} turns each into another kind first. */
    private static IllegalArgumentException conditional(OpKind k) {
        return new IllegalArgumentException(k + " never reaches the kernels");
    }

    private static boolean presence(OpKind[] kinds, int[] lastSet, int start, int last, boolean p0) {
        int q = last >= start ? lastSet[last] : -1;
        return q >= start ? kinds[q] != OpKind.DELETE : p0;
    }

    private static int source(OpKind[] kinds, int[] lastSrc, int start, int last, boolean p0) {
        int q = last >= start ? lastSrc[last] : -1;
        if (q >= start) {
            return kinds[q] == OpKind.DELETE ? NONE : q;
        }
        return p0 ? POOL : NONE;
    }
}
