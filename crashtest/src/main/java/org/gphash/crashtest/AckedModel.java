package org.gphash.crashtest;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.gphash.GPHashIndex;

/**
 * What the acknowledged history says every key holds, and the check of a recovered pool against
 * it: each worker thread's acknowledgements replayed onto the model (an outcome the history denies
 * is lost), then every key compared, allowing what an operation in flight at the kill, or one after
 * the last sync, may have left whole. What the check finds goes into the run's {@link Tally}.
 */
final class AckedModel {

    private final RunOptions o;
    private final Workload workload;
    private final Tally tally;
    private final PrintStream log;
    /** Where the worker records the last acknowledgement a sync covered ({@code Worker.Syncs}). */
    private final Path synced;
    /** model[key] = sequence number of its value, 0 = absent. */
    private final long[] model;
    /** The most items any round's pool held, for the check of heap growth. */
    private long maxItems;

    AckedModel(RunOptions o, Workload workload, Tally tally, PrintStream log, Path synced) {
        this.o = o;
        this.workload = workload;
        this.tally = tally;
        this.log = log;
        this.synced = synced;
        this.model = new long[(int) o.keys + 1];
    }

    /** A new pool: every key absent. */
    void clear() {
        Arrays.fill(model, 0);
        maxItems = 0;
    }

    /** Before a round's acknowledgements are replayed: nothing is in doubt yet. */
    void startRound() {
        durableModel = null;
    }

    /** {@return the most items any round's pool held since the pool was made} */
    long maxItems() {
        return maxItems;
    }

    /**
     * Applies one worker thread's acknowledged operations (from {@code start}) to the model, counting
     * each whose outcome the history denies as lost; returns the thread's first unacknowledged operation.
     */
    Workload.Op replayAcks(Path ackLog, long start, int r) throws IOException {
        List<AckLog.Ack> acks = AckLog.read(ackLog, start);
        // ON_CLOSE_OR_SYNC syncing every few acknowledgements (one thread only): what the last sync
        // covered must survive; the acknowledged operations after it are in doubt, like an
        // unacknowledged batch.
        long syncedThrough = o.syncEvery > 1 ? Math.max(start - 1, Worker.Syncs.read(synced)) : Long.MAX_VALUE;
        for (AckLog.Ack a : acks) {
            if (durableModel == null && a.seq() > syncedThrough) {
                durableModel = model.clone();
                firstInDoubt = a.seq();
            }
            Workload.Op op = workload.op(a.seq());
            if (op.key() != a.key() || op.kind() != a.kind()) {
                throw new IllegalStateException("ack log record " + a + " does not match the workload's " + op);
            }
            int expected = apply(op, true);
            if (a.outcome() != expected) {
                tally.lost++;
                log.printf("round %d: acknowledged op %d %s key %d returned outcome %d but the acknowledged history says %d%n",
                        r + 1, a.seq(), a.kind(), a.key(), a.outcome(), expected);
            }
        }
        tally.opsVerified += acks.size();
        tally.opsVerifiedByThread.merge(Workload.threadOf(start), (long) acks.size(), Long::sum);
        return workload.op(start + acks.size());
    }

    /** The model as of the last sync, when acknowledged operations after it are in doubt; else null. */
    private long[] durableModel;
    /** The first acknowledged operation after the last sync (meaningful with {@link #durableModel}). */
    private long firstInDoubt;

    /**
     * Every key against the model: the acknowledged value, or the whole result of an operation in
     * flight in the thread whose key it is ({@code inflight}, by thread).
     */
    void compare(GPHashIndex index, Workload.Op[] inflights, int r) {
        windows.clear();
        long items = 0;
        for (long key = 1; key <= o.keys; key++) {
            Workload.Op inflight = inflights[workload.ownerOf(key)];
            byte[] v = index.get(key);
            long expected = model[(int) key];
            if (v != null) {
                items++;
            }
            if (v == null ? expected == 0 : Workload.whole(key, v) && Workload.seqOf(v) == expected) {
                continue;
            }
            if (durableModel != null) {
                // Its value at the last sync, or what one operation since (acknowledged or not) left.
                long durable = durableModel[(int) key];
                boolean asSynced = v == null ? durable == 0 : Workload.whole(key, v) && Workload.seqOf(v) == durable;
                if (asSynced || leftBy(firstInDoubt, inflight.seq() + o.batch, key, v)) {
                    model[(int) key] = v == null ? 0 : Workload.seqOf(v);
                    tally.inflightApplied++;
                    continue;
                }
            }
            if (o.batch == 1 && key == inflight.key() && matchesAfter(inflight, v)) {
                apply(inflight, true);
                tally.inflightApplied++;
                continue;
            }
            if (o.batch > 1 && leftByUnacknowledged(inflight.seq(), key, v)) {
                model[(int) key] = v == null ? 0 : Workload.seqOf(v);
                tally.inflightApplied++;
                continue;
            }
            if (v != null && !Workload.whole(key, v)) {
                tally.torn++;
                log.printf("round %d: key %d holds a torn value%n", r + 1, key);
            } else {
                tally.lost++;
                log.printf("round %d: key %d holds %s, but the last acknowledged operation left %s (in flight: %s)%n",
                        r + 1, key, v == null ? "nothing" : "the value of op " + Workload.seqOf(v),
                        expected == 0 ? "nothing" : "the value of op " + expected, inflight);
                model[(int) key] = v == null ? 0 : Workload.seqOf(v);
            }
        }
        maxItems = Math.max(maxItems, items);
    }

    /**
     * Batches: whether {@code v} is what one of the unacknowledged operations {@code [first, first +
     * batch)} on {@code key} left, whole: its value, or nothing after a delete. Which of them were
     * applied is not known (their meta words persist in any order), so any of them may be last.
     */
    private boolean leftByUnacknowledged(long first, long key, byte[] v) {
        return leftBy(first, first + o.batch, key, v);
    }

    /** Whether {@code v} is what one of the operations {@code [first, end)} on {@code key} left, whole. */
    private boolean leftBy(long first, long end, long key, byte[] v) {
        for (long s : window(first, end).seqsOn(key)) {
            Workload.Op op = workload.op(s);
            if (v == null ? op.kind() == Workload.Kind.DELETE
                    : op.kind() != Workload.Kind.DELETE && Workload.whole(key, v) && Workload.seqOf(v) == s) {
                return true;
            }
        }
        return false;
    }

    /**
     * The operations {@code [first, end)} by key, built once per window and round: each key not as
     * acknowledged looks up its operations in the window instead of scanning it (several threads'
     * batches of 100,000 left hundreds of thousands of keys in doubt, and a scan each took the
     * driver minutes a round).
     */
    private Window window(long first, long end) {
        for (Window w : windows) {
            if (w.first == first && w.end == end) {
                return w;
            }
        }
        Window w = new Window(first, end, workload);
        windows.add(w);
        return w;
    }

    /** The windows of the round being verified ({@link #window}); cleared before each comparison. */
    private final List<Window> windows = new ArrayList<>();

    /** Which operations of a run of sequence numbers touched each key, in order. */
    private static final class Window {
        final long first;
        final long end;
        private final Map<Long, List<Long>> byKey = new HashMap<>();

        Window(long first, long end, Workload workload) {
            this.first = first;
            this.end = end;
            for (long s = first; s < end; s++) {
                byKey.computeIfAbsent(workload.op(s).key(), k -> new ArrayList<>()).add(s);
            }
        }

        List<Long> seqsOn(long key) {
            return byKey.getOrDefault(key, List.of());
        }
    }

    /** Whether {@code v} is what the in-flight operation would have left had it completed. */
    private boolean matchesAfter(Workload.Op op, byte[] v) {
        boolean present = model[(int) op.key()] != 0;
        boolean writes = switch (op.kind()) {
            case PUT -> true;
            case INSERT -> !present;
            case UPDATE -> present;
            case DELETE -> false;
        };
        if (op.kind() == Workload.Kind.DELETE) {
            return v == null && present;
        }
        return writes && v != null && Workload.whole(op.key(), v) && Workload.seqOf(v) == op.seq();
    }

    /** Applies {@code op} to the model (if {@code mutate}) and returns the outcome it must have had. */
    private int apply(Workload.Op op, boolean mutate) {
        int k = (int) op.key();
        boolean present = model[k] != 0;
        int outcome;
        long next = model[k];
        switch (op.kind()) {
            case PUT -> {
                outcome = present ? Worker.Outcomes.UPDATED : Worker.Outcomes.INSERTED;
                next = op.seq();
            }
            case INSERT -> {
                outcome = present ? Worker.Outcomes.EXISTS : Worker.Outcomes.INSERTED;
                next = present ? model[k] : op.seq();
            }
            case UPDATE -> {
                outcome = present ? Worker.Outcomes.UPDATED : Worker.Outcomes.NOT_FOUND;
                next = present ? op.seq() : 0;
            }
            default -> {
                outcome = present ? Worker.Outcomes.DELETED : Worker.Outcomes.NOT_FOUND;
                next = 0;
            }
        }
        if (mutate) {
            model[k] = next;
        }
        return outcome;
    }
}
