package org.gphash.crashtest;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.gphash.Backend;
import org.gphash.GPHashIndex;
import org.gphash.journal.Journals;
import org.gphash.persistence.PoolFile;
import org.gphash.spi.CrashPoint;

/**
 * The worker JVM the driver forks and kills: opens the pool (running recovery), then runs the
 * workload one operation (or batch) at a time, appending each to the acknowledgement log after the
 * engine returned and forcing it before the next operation. Each worker thread has keys of its own
 * and an acknowledgement log of its own ({@link Workload}: one thread by default), so at any moment
 * at most one operation or batch per thread is unacknowledged, and the driver can say exactly what a
 * crash may have left; with several threads their batches run on the engine concurrently.
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
        int threads = Integer.parseInt(a.getOrDefault("threads", "1"));
        Workload workload = new Workload(Long.parseLong(a.get("seed")), Long.parseLong(a.get("keys")), threads);
        long[] starts = Arrays.stream(a.get("start").split(",")).mapToLong(Long::parseLong).toArray();
        CrashPoint target = a.containsKey("target") ? CrashPoint.valueOf(a.get("target")) : null;
        AtomicInteger countdown = new AtomicInteger(
                Integer.parseInt(a.getOrDefault("targetCount", "1")));
        // What happens at the targeted crash point: park for the driver's SIGKILL, or (power-fail
        // mode) discard every unpersisted store and halt.
        Runnable atTarget = () -> {
            board.state(PhaseBoard.PARKED);
            parkUntilKilled();
        };
        ShadowPersistence shadow = null;
        if (a.containsKey("failAtPersist")) {
            String[] label = {null};
            shadow = new ShadowPersistence(Long.parseLong(a.get("failAtPersist")), a.get("failSite"),
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
            ShadowPersistence s = shadow;
            atTarget = () -> {
                label[0] = "crash point " + target;
                s.powerFail();
            };
        }
        Runnable onTarget = atTarget;
        org.gphash.Durability durability = org.gphash.Durability.valueOf(a.getOrDefault("durability", "PER_BATCH"));
        int batchSize = Integer.parseInt(a.getOrDefault("batch", "1"));
        boolean mixed = Boolean.parseBoolean(a.getOrDefault("mixed", "false"));
        GPHashIndex.Builder journaled = GPHashIndex.builder(pool);
        if (a.containsKey("journal")) {
            recordFlushes(Path.of(a.get("flushed")));
            journaled.journal(org.gphash.Journaling.in(Path.of(a.get("journal")))
                    .checkpointEvery(Duration.ofMillis(Long.parseLong(a.getOrDefault("checkpointMillis", "500")))));
        }
        GPHashIndex.Builder builder = GPHashIndex.from(journaled
                .durability(durability)
                .backend(Backend.valueOf(a.get("backend").toUpperCase(Locale.ROOT)))
                .config().withCrashHook(point -> {
                    board.point(point.ordinal() + 1);
                    if (point == CrashPoint.RESIZE_LEVEL_ALLOCATED) {
                        board.inResize(true);
                    }
                    if (point == target && countdown.decrementAndGet() == 0) {
                        onTarget.run();
                    }
                }));
        board.state(PhaseBoard.OPENING);
        GPHashIndex index = builder.open();
        board.point(0);
        board.inResize(false);
        board.state(PhaseBoard.RUNNING);
        // ON_CLOSE_OR_SYNC promises durability at sync(): the worker syncs before it acknowledges, or
        // (syncEvery > 1) after every syncEvery acknowledgements, recording how far each sync reached.
        boolean onSync = durability == org.gphash.Durability.ON_CLOSE_OR_SYNC;
        int syncEvery = Integer.parseInt(a.getOrDefault("syncEvery", "1"));
        Syncs syncs = new Syncs(index, onSync, syncEvery, onSync && syncEvery > 1 ? Path.of(a.get("synced")) : null);
        // A close round: after closeAfter acknowledged operations the worker closes the pool (in
        // power-fail mode with the power failing at the closeFailAt-th persist of close) and exits.
        long closeAfter = Long.parseLong(a.getOrDefault("closeAfter", "0"));
        int closeFailAt = Integer.parseInt(a.getOrDefault("closeFailAt", "0"));
        ShadowPersistence closeShadow = shadow;
        Runnable close = () -> {
            board.state(PhaseBoard.CLOSING);
            if (closeShadow != null && closeFailAt > 0) {
                closeShadow.failAfter(closeFailAt);
            }
            index.close();
            Runtime.getRuntime().halt(CLOSED_EXIT);
        };
        // Thread 0 closes the pool in a close round; the others' operations then fail as closed.
        long closeAt = closeAfter > 0 ? starts[0] + closeAfter : Long.MAX_VALUE;
        Path ack = Path.of(a.get("ack"));
        if (threads == 1) {
            runThread(index, workload, starts[0], mixed ? 1 : batchSize, syncs, board, ack, closeAt, close);
            return;
        }
        AtomicReference<Throwable> failed = new AtomicReference<>();
        List<Thread> running = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            long start = starts[t];
            int size = mixed && t % 2 == 0 ? 1 : batchSize;  // --mixed: even-numbered threads make single calls
            long closeOwn = t == 0 ? closeAt : Long.MAX_VALUE;
            Path own = ackLogOf(ack, t);
            running.add(Thread.ofPlatform().name("crashtest-worker-" + t).start(() -> {
                try {
                    runThread(index, workload, start, size, syncs, board, own, closeOwn, close);
                } catch (org.gphash.IndexClosedException closing) {
                    parkUntilKilled();  // thread 0 is closing the pool and will halt the worker
                } catch (Throwable e) {
                    if (failed.compareAndSet(null, e)) {
                        e.printStackTrace();
                        Runtime.getRuntime().halt(1);  // a worker that fails is a harness failure, as with one thread
                    }
                }
            }));
        }
        for (Thread t : running) {
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /**
     * Records every journal force in {@code file}, for the driver's simulated power cut: the segment
     * forced and its durable bytes, 16 bytes written in one call (a SIGKILL cannot tear it).
     */
    static void recordFlushes(Path file) throws IOException {
        FileChannel marks = FileChannel.open(file,
                StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        ByteBuffer mark = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN);
        Journals.observeFlushes((segment, bytes) -> {
            synchronized (mark) {
                try {
                    marks.write(mark.clear().putLong(0, segment).putLong(8, bytes), 0);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        });
    }

    /** Worker thread {@code t}'s acknowledgement log: the driver's path for thread 0, with {@code .t} added for the others. */
    static Path ackLogOf(Path ack, int t) {
        return t == 0 ? ack : ack.resolveSibling(ack.getFileName() + "." + t);
    }

    /** One worker thread's operations from {@code seq} on, each acknowledged in {@code ack} once it returned. */
    private static void runThread(GPHashIndex index, Workload workload, long seq, int batchSize, Syncs syncs,
                                  PhaseBoard board, Path ack, long closeAt, Runnable close) throws IOException {
        try (AckLog log = AckLog.create(ack)) {
            if (batchSize > 1) {
                runBatches(index, workload, seq, batchSize, syncs, board, log, closeAt, close);
            }
            for (;; seq++) {
                if (seq >= closeAt) {
                    close.run();
                }
                Workload.Op op = workload.op(seq);
                byte[] value = Workload.value(op.key(), seq,
                        index.valueLengths() ? Workload.lengthOf(op.key(), seq, index.valueSize()) : index.valueSize());
                int outcome = switch (op.kind()) {
                    case PUT -> index.put(op.key(), value) ? Outcomes.INSERTED : Outcomes.UPDATED;
                    case INSERT -> index.insert(op.key(), value) ? Outcomes.INSERTED : Outcomes.EXISTS;
                    case UPDATE -> index.update(op.key(), value) ? Outcomes.UPDATED : Outcomes.NOT_FOUND;
                    case DELETE -> index.delete(op.key()) ? Outcomes.DELETED : Outcomes.NOT_FOUND;
                };
                board.point(0);
                board.inResize(false);
                syncs.beforeAck();
                log.append(seq, op.key(), op.kind(), outcome);
                syncs.afterAck(seq);
            }
        }
    }

    /** Exit status of a worker that closed its pool cleanly (a close round the crash did not reach). */
    static final int CLOSED_EXIT = 5;

    /**
     * When the worker syncs (ON_CLOSE_OR_SYNC): before each acknowledgement, or after every
     * {@code every} of them, writing the last sequence number each sync covered to {@code marks}
     * (8 bytes, forced) so the driver knows which acknowledged operations must have survived.
     */
    static final class Syncs {
        private final GPHashIndex index;
        private final boolean onSync;
        private final int every;
        private final FileChannel marks;
        private long acks;

        Syncs(GPHashIndex index, boolean onSync, int every, Path marks) throws IOException {
            this.index = index;
            this.onSync = onSync;
            this.every = every;
            this.marks = marks == null ? null : FileChannel.open(marks, StandardOpenOption.CREATE,
                    StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING);
        }

        void beforeAck() {
            if (onSync && every <= 1) {
                index.sync();
            }
        }

        /** After the acknowledgement of everything up to {@code lastSeq}. */
        void afterAck(long lastSeq) throws IOException {
            if (marks == null || ++acks % every != 0) {
                return;
            }
            index.sync();
            ByteBuffer b = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(0, lastSeq);
            marks.write(b, 0);
            marks.force(false);
        }

        /** The last sequence number a completed sync covered, as the worker recorded it; -1 if none. */
        static long read(Path marks) throws IOException {
            if (!Files.exists(marks) || Files.size(marks) < 8) {
                return -1;
            }
            return ByteBuffer.wrap(Files.readAllBytes(marks)).order(ByteOrder.LITTLE_ENDIAN).getLong(0);
        }
    }

    /** Batches of {@code size} operations, each acknowledged (one forced append) once execute returned. */
    private static void runBatches(GPHashIndex index, Workload workload, long start, int size, Syncs syncs,
                                   PhaseBoard board, AckLog log, long closeAt, Runnable close) throws IOException {
        org.gphash.Batch batch = index.newBatch(size);
        org.gphash.BatchResult result = new org.gphash.BatchResult(index.valueSize(), size);
        Workload.Op[] ops = new Workload.Op[size];
        long[] seqs = new long[size];
        for (long seq = start;; seq += size) {
            if (seq >= closeAt) {
                close.run();
            }
            batch.clear();
            for (int i = 0; i < size; i++) {
                Workload.Op op = workload.op(seq + i);
                ops[i] = op;
                seqs[i] = seq + i;
                byte[] value = Workload.value(op.key(), seq + i,
                        index.valueLengths() ? Workload.lengthOf(op.key(), seq + i, index.valueSize()) : index.valueSize());
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
            syncs.beforeAck();
            long first = seq;
            log.appendAll(seqs, ops, i -> switch (result.outcome(i)) {
                case INSERTED -> Outcomes.INSERTED;
                case UPDATED -> Outcomes.UPDATED;
                case EXISTS -> Outcomes.EXISTS;
                case NOT_FOUND -> Outcomes.NOT_FOUND;
                case DELETED -> Outcomes.DELETED;
                default -> throw new IllegalStateException("operation " + (first + i) + ": outcome " + result.outcome(i));
            });
            syncs.afterAck(seq + size - 1);
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
