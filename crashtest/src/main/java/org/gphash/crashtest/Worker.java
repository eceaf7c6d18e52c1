package org.gphash.crashtest;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import org.gphash.Backend;
import org.gphash.GPHashIndex;
import org.gphash.spi.CrashPoint;
import org.gphash.persistence.PoolFile;

/**
 * The worker JVM the driver forks and kills: opens the pool (running recovery), then runs the
 * workload one operation at a time, appending each to the acknowledgement log after the engine
 * returned and forcing it before the next operation. Single-threaded on purpose: at any moment at
 * most one operation is unacknowledged, so the driver can say exactly what a crash may have left.
 *
 * <p>Arguments are {@code name=value} pairs written by {@link Driver}; this is not a user command.
 */
public final class Worker {

    private Worker() {
    }

    public static void main(String[] args) throws IOException {
        Map<String, String> a = new HashMap<>();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            a.put(arg.substring(0, eq), arg.substring(eq + 1));
        }
        exitWithParent();
        Path pool = Path.of(a.get("pool"));
        Path site = Path.of(a.get("site"));
        PhaseBoard board = PhaseBoard.open(Path.of(a.get("board")));
        Workload workload = new Workload(Long.parseLong(a.get("seed")), Long.parseLong(a.get("keys")));
        long seq = Long.parseLong(a.get("start"));
        CrashPoint target = a.containsKey("target") ? CrashPoint.valueOf(a.get("target")) : null;
        int[] countdown = {Integer.parseInt(a.getOrDefault("targetCount", "1"))};
        // What happens at the targeted crash point: park for the driver's SIGKILL, or (power-fail
        // mode) discard every unpersisted store and halt.
        Runnable atTarget = () -> {
            board.state(PhaseBoard.PARKED);
            parkUntilKilled();
        };
        if (a.containsKey("failAtPersist")) {
            String[] label = {null};
            ShadowPersistence shadow = new ShadowPersistence(Long.parseLong(a.get("failAtPersist")), a.get("failSite"),
                    Integer.parseInt(a.getOrDefault("failSiteCount", "0")),
                    Boolean.parseBoolean(a.getOrDefault("dropMetaPersists", "false")), () -> {
                        try {
                            Files.writeString(site, label[0] != null ? label[0] : "persist in " + ShadowPersistence.callSite());
                        } catch (IOException ignored) {
                            // the driver then reports the site as unknown
                        }
                        // The board keeps its state (opening or running): the exit status says power failure.
                    });
            PoolFile.decoratePersisters(shadow);
            atTarget = () -> {
                label[0] = "crash point " + target;
                shadow.powerFail();
            };
        }
        Runnable onTarget = atTarget;
        org.gphash.Durability durability = org.gphash.Durability.valueOf(a.getOrDefault("durability", "PER_BATCH"));
        int batchSize = Integer.parseInt(a.getOrDefault("batch", "1"));
        GPHashIndex.Builder builder = GPHashIndex.from(GPHashIndex.builder(pool)
                .durability(durability)
                .backend(Backend.valueOf(a.get("backend").toUpperCase(java.util.Locale.ROOT)))
                .config().withCrashHook(point -> {
                    board.point(point.ordinal() + 1);
                    if (point == CrashPoint.RESIZE_LEVEL_ALLOCATED) {
                        board.inResize(true);
                    }
                    if (point == target && --countdown[0] == 0) {
                        onTarget.run();
                    }
                }));
        board.state(PhaseBoard.OPENING);
        GPHashIndex index = builder.open();
        board.point(0);
        board.inResize(false);
        board.state(PhaseBoard.RUNNING);
        // ON_CLOSE_OR_SYNC promises durability at sync(): the worker syncs before it acknowledges.
        boolean syncBeforeAck = durability == org.gphash.Durability.ON_CLOSE_OR_SYNC;
        try (AckLog log = AckLog.create(Path.of(a.get("ack")))) {
            if (batchSize > 1) {
                runBatches(index, workload, seq, batchSize, syncBeforeAck, board, log);
            }
            for (;; seq++) {
                Workload.Op op = workload.op(seq);
                byte[] value = Workload.value(op.key(), seq);
                int outcome = switch (op.kind()) {
                    case PUT -> index.put(op.key(), value) ? Outcomes.INSERTED : Outcomes.UPDATED;
                    case INSERT -> index.insert(op.key(), value) ? Outcomes.INSERTED : Outcomes.EXISTS;
                    case UPDATE -> index.update(op.key(), value) ? Outcomes.UPDATED : Outcomes.NOT_FOUND;
                    case DELETE -> index.delete(op.key()) ? Outcomes.DELETED : Outcomes.NOT_FOUND;
                };
                board.point(0);
                board.inResize(false);
                if (syncBeforeAck) {
                    index.sync();
                }
                log.append(seq, op.key(), op.kind(), outcome);
            }
        }
    }

    /** Batches of {@code size} operations, each acknowledged (one forced append) once execute returned. */
    private static void runBatches(GPHashIndex index, Workload workload, long start, int size, boolean syncBeforeAck,
                                   PhaseBoard board, AckLog log) throws IOException {
        org.gphash.Batch batch = index.newBatch(size);
        org.gphash.BatchResult result = new org.gphash.BatchResult(index.valueSize(), size);
        Workload.Op[] ops = new Workload.Op[size];
        long[] seqs = new long[size];
        for (long seq = start;; seq += size) {
            batch.clear();
            for (int i = 0; i < size; i++) {
                Workload.Op op = workload.op(seq + i);
                ops[i] = op;
                seqs[i] = seq + i;
                byte[] value = Workload.value(op.key(), seq + i);
                switch (op.kind()) {
                    case PUT -> batch.put(op.key(), value);
                    case INSERT -> batch.insert(op.key(), value);
                    case UPDATE -> batch.update(op.key(), value);
                    case DELETE -> batch.delete(op.key());
                }
            }
            index.execute(batch, result);
            board.point(0);
            board.inResize(false);
            if (syncBeforeAck) {
                index.sync();
            }
            long first = seq;
            log.appendAll(seqs, ops, i -> switch (result.outcome(i)) {
                case INSERTED -> Outcomes.INSERTED;
                case UPDATED -> Outcomes.UPDATED;
                case EXISTS -> Outcomes.EXISTS;
                case NOT_FOUND -> Outcomes.NOT_FOUND;
                case DELETED -> Outcomes.DELETED;
                default -> throw new IllegalStateException("operation " + (first + i) + ": outcome " + result.outcome(i));
            });
        }
    }

    /**
     * A worker outlives its driver only by mistake (the driver was itself killed): then nobody will
     * ever kill it, so it stops itself rather than run or stay parked forever.
     */
    private static void exitWithParent() {
        ProcessHandle parent = ProcessHandle.current().parent().orElse(null);
        Thread watchdog = new Thread(() -> {
            for (;;) {
                if (parent == null || !parent.isAlive()) {
                    Runtime.getRuntime().halt(3);
                }
                try {
                    Thread.sleep(500);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "driver-watchdog");
        watchdog.setDaemon(true);
        watchdog.start();
    }

    /** Waits for the driver's SIGKILL; never returns. */
    private static void parkUntilKilled() {
        for (;;) {
            try {
                Thread.sleep(1000);
            } catch (InterruptedException ignored) {
                // keep waiting: only the kill ends this
            }
        }
    }

    /** Outcome codes in the ack log. */
    static final class Outcomes {
        static final int INSERTED = 1;
        static final int UPDATED = 2;
        static final int EXISTS = 3;
        static final int NOT_FOUND = 4;
        static final int DELETED = 5;

        private Outcomes() {
        }
    }
}
