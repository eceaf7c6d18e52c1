package org.gphash.journal;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.IntStream;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.EntryChunk;
import org.gphash.JournalReplay;
import org.gphash.Journaling;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.RecoveryReport;
import org.gphash.spi.Engine;
import org.gphash.spi.ForwardingEngine;
import org.gphash.spi.JournalFactory;
import org.gphash.spi.ScanState;
import org.gphash.spi.SubmittedBatch;

/**
 * An engine whose every acknowledged write is in the journal: each write runs on the engine under
 * its key's stripe, its effect is appended (the sequence number taken before the stripe is let go),
 * and the call returns once the flush policy is met (with {@link Journaling.Flush#PER_CALL}, once the
 * record is durable, which one group-commit flush does for every waiting caller). Reads go straight
 * to the engine and never wait for the journal. A checkpointer thread writes checkpoints on the
 * configured interval and journal size.
 */
final class JournaledEngine extends ForwardingEngine implements JournalFactory.Checkpointing {

    private static final System.Logger LOG = System.getLogger("org.gphash.journal");

    private final Journal journal;
    private final Path dir;
    private final long journalId;
    private final Journaling settings;
    private final KeyStripes stripes;
    private final JournalReplay replay;
    private final FileChannel lockFile;
    private final int keySize;
    private final int valueSize;
    /** Whether the engine's values have any length: the journal's records and checkpoints then keep each one's. */
    private final boolean valueLengths;
    private final boolean waitPerCall;
    private final Object checkpointMonitor = new Object();
    private final Thread checkpointer;
    private volatile boolean closed;
    private volatile long bytesAtCheckpoint;
    private volatile long lastCheckpointSeq = -1;
    private volatile long checkpointPauseNanos;

    JournaledEngine(Engine engine, Journal journal, Path dir, long journalId, Journaling settings, JournalReplay replay,
                    FileChannel lockFile, boolean checkpointNow) {
        super(engine);
        this.journal = journal;
        this.dir = dir;
        this.journalId = journalId;
        this.settings = settings;
        this.replay = replay;
        this.lockFile = lockFile;
        this.keySize = engine.geometry().keySize();
        this.valueSize = engine.geometry().valueSize();
        this.valueLengths = engine.valueLengths();
        this.stripes = new KeyStripes(keySize);
        this.waitPerCall = settings.flush() == Journaling.Flush.PER_CALL;
        List<Path> cps = JournalFiles.list(dir, true);
        if (!cps.isEmpty()) {
            lastCheckpointSeq = JournalFiles.seqOf(cps.get(cps.size() - 1), true);
        }
        this.checkpointer = Thread.ofPlatform().daemon().name("gphash-checkpointer").start(() -> checkpointLoop(checkpointNow));
    }

    /** Passes the engine's lengths through: the journal's records and checkpoints keep each value's. */
    @Override
    public boolean valueLengths() {
        return valueLengths;
    }

    // ------------------------------------------------------------------ single writes

    @Override
    public Outcome put(MemorySegment key, MemorySegment value) {
        return single(OpKind.PUT, key, null, value);
    }

    @Override
    public Outcome insert(MemorySegment key, MemorySegment value) {
        return single(OpKind.INSERT, key, null, value);
    }

    @Override
    public Outcome update(MemorySegment key, MemorySegment value) {
        return single(OpKind.UPDATE, key, null, value);
    }

    @Override
    public Outcome delete(MemorySegment key) {
        return single(OpKind.DELETE, key, null, null);
    }

    @Override
    public Outcome compareAndSet(MemorySegment key, MemorySegment expected, MemorySegment value) {
        return single(OpKind.COMPARE_AND_SET, key, expected, value);
    }

    @Override
    public Outcome compareAndDelete(MemorySegment key, MemorySegment expected) {
        return single(OpKind.COMPARE_AND_DELETE, key, expected, null);
    }

    /** Runs one single write under its key's stripe, appends its effect, and waits as the flush policy says. */
    private Outcome single(OpKind kind, MemorySegment key, MemorySegment expected, MemorySegment value) {
        int s = stripes.stripeOf(key, 0);
        stripes.lock(s);
        long seq;
        Outcome o;
        try {
            o = engine.write(kind, key, value, expected);
            seq = journalOne(o, key, value);
        } finally {
            stripes.unlock(s);
        }
        awaitDurable(seq);
        return o;
    }

    /** Appends the effect of one call that ended with {@code o}; returns its sequence number, or -1 if it changed nothing. */
    private long journalOne(Outcome o, MemorySegment key, MemorySegment value) {
        byte effect = RecordBody.effectOf(o.code());
        if (effect == 0) {
            return -1;
        }
        RecordBody body = journal.body();
        try {
            if (effect == RecordFormat.PUT) {
                body.put(key, 0, value, 0, (int) value.byteSize());
            } else {
                body.delete(key, 0);
            }
            body.seal();
            return journal.append(body);
        } finally {
            journal.release(body);
        }
    }

    // ------------------------------------------------------------------ batches

    @Override
    public void execute(Batch batch, BatchResult result) {
        if (batch.onlyGets()) {
            engine.execute(batch, result);
            return;
        }
        long t0 = System.nanoTime();
        long[] held = stripes.lock(batch);
        long t1 = System.nanoTime();
        long last = -1;
        long t2 = t1;
        try {
            if (batch.size() >= ALONGSIDE_MIN && onlyPutsAndDeletes(batch)) {
                long[] engineDone = {0};
                last = executeJournalingAlongside(batch, result, engineDone);
                t2 = engineDone[0];   // the engine's end; the journal's stage is what it took after that
            } else {
                try {
                    engine.execute(batch, result);
                } finally {
                    t2 = System.nanoTime();
                    // A batch that failed part way journals what it did (outcomes other than NOT_APPLIED).
                    last = journalBatch(batch, result);
                }
            }
            if (!engine.ordersOperationsOnAKey()) {
                last = Math.max(last, journalRepeatedKeysAsNow(batch));
            }
        } finally {
            stripes.unlock(held);
        }
        long t3 = System.nanoTime();
        awaitDurable(last);
        long t4 = System.nanoTime();
        stages.batch(t1 - t0, t2 - t1, t3 - t2, t4 - t3);
    }

    /** Where writing batches spent their time, for benchmarks ({@link Journals#stages}). */
    final Stages stages = new Stages();

    /** Time of writing batches by stage: stripes, the engine, encoding and appending the records, the wait for the flush. */
    static final class Stages {
        private final LongAdder batches = new LongAdder();
        private final LongAdder lock = new LongAdder();
        private final LongAdder engine = new LongAdder();
        private final LongAdder journal = new LongAdder();
        final LongAdder encode = new LongAdder();
        private final LongAdder flush = new LongAdder();

        void batch(long l, long e, long j, long f) {
            batches.increment();
            lock.add(l);
            engine.add(e);
            journal.add(j);
            flush.add(f);
        }

        @Override
        public String toString() {
            long n = Math.max(1, batches.sum());
            return String.format(Locale.ROOT, "per writing batch (%d): stripes %.2f ms, engine %.2f ms, "
                    + "journal append %.2f ms (of it gathering and checksumming %.2f ms), waiting for the flush %.2f ms",
                    batches.sum(), lock.sum() / 1e6 / n, engine.sum() / 1e6 / n, journal.sum() / 1e6 / n,
                    encode.sum() / 1e6 / n, flush.sum() / 1e6 / n);
        }
    }

    @Override
    public SubmittedBatch submit(Batch batch, BatchResult result) {
        if (batch.onlyGets()) {
            return engine.submit(batch, result);   // reads keep the engine's batches in flight
        }
        execute(batch, result);
        return SubmittedBatch.DONE;
    }

    @Override
    public Outcome getAlongside(MemorySegment key, MemorySegment valueOut) {
        return engine.getAlongside(key, valueOut);
    }

    /** Reads go to the pool, as gets do, with each value's length. */
    @Override
    public int read(MemorySegment key, MemorySegment valueOut) {
        return engine.read(key, valueOut);
    }

    /** Batches of puts and deletes at least this large are journaled while the engine runs them. */
    private static final int ALONGSIDE_MIN = 1 << 12;

    /** The engine's work and the journal's overlap: the records are written from the batch's kinds (its effects are known before it runs). */
    private long executeJournalingAlongside(Batch batch, BatchResult result, long[] engineDone) {
        CompletableFuture<Long> journaled = CompletableFuture.supplyAsync(
                () -> journalBatch(batch, null), appender);
        try {
            engine.execute(batch, result);
        } catch (RuntimeException e) {
            // Part of the batch did not run, but all of it is in the journal: journal what the keys
            // of the operations that did not run hold now, so that a replay ends where memory is.
            engineDone[0] = System.nanoTime();
            join(journaled);
            journalCurrent(batch, result, e);
            throw e;
        }
        engineDone[0] = System.nanoTime();
        return join(journaled);
    }

    private static long join(CompletableFuture<Long> f) {
        try {
            return f.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw e;
        }
    }

    /**
     * After a failed batch journaled in advance: each key whose operation did not run, as it is now.
     * A failure to journal one is added to {@code failure}, which the caller throws.
     */
    private void journalCurrent(Batch batch, BatchResult result, RuntimeException failure) {
        IntStream notRun = IntStream.range(0, batch.size())
                .filter(i -> i >= result.size() || result.outcome(i) == Outcome.NOT_APPLIED);
        try {
            journalAsNow(batch, notRun.toArray());
        } catch (RuntimeException e) {
            failure.addSuppressed(e);
        }
    }

    /**
     * An engine that does not order a batch's operations on one key (the GPU engine's pool path) may
     * leave a key the batch writes more than once as any of those operations left it, where the
     * batch's records replay them in batch order: each such key is journaled once more, as it is
     * now, so that a replay ends where memory is. The batch's stripes are still held, so nothing
     * else writes these keys meanwhile. Returns the last record's sequence number, or -1.
     */
    private long journalRepeatedKeysAsNow(Batch batch) {
        // The writes' key hashes in an open-addressed table: a key seen a second time is journaled
        // again. Two keys that share a hash only cost a record of what memory holds, which is true.
        int n = batch.size();
        long[] seen = new long[Integer.highestOneBit(Math.max(1, n) * 2 - 1) * 2];
        boolean[] again = new boolean[seen.length];
        int mask = seen.length - 1;
        int[] repeated = new int[n];
        int count = 0;
        MemorySegment keys = batch.keys();
        MemorySegment kinds = batch.kinds();
        for (int i = 0; i < n; i++) {
            if (kinds.get(ValueLayout.JAVA_BYTE, i) == (byte) OpKind.GET.ordinal()) {
                continue;   // a get changes nothing
            }
            long h = stripes.keyHash(keys, (long) i * keySize) | 1;   // 0 marks a free place
            int at = (int) (h ^ (h >>> 32)) & mask;
            while (seen[at] != 0 && seen[at] != h) {
                at = (at + 1) & mask;
            }
            if (seen[at] == 0) {
                seen[at] = h;
            } else if (!again[at]) {
                again[at] = true;
                repeated[count++] = i;   // once a key: the record holds its state after the whole batch
            }
        }
        return journalAsNow(batch, Arrays.copyOf(repeated, count));
    }

    /** One record for the key of each of {@code positions} of {@code batch}, as the engine holds it now; the last's sequence number, or -1. */
    private long journalAsNow(Batch batch, int[] positions) {
        MemorySegment keys = batch.keys();
        MemorySegment value = MemorySegment.ofArray(new byte[valueSize]);
        long last = -1;
        for (int i : positions) {
            MemorySegment key = keys.asSlice((long) i * keySize, keySize);
            int length = engine.read(key, value);
            RecordBody body = journal.body();
            try {
                if (length >= 0) {
                    body.put(key, 0, value, 0, length);
                } else {
                    body.delete(key, 0);
                }
                body.seal();
                last = journal.append(body);
            } finally {
                journal.release(body);
            }
        }
        return last;
    }

    private static boolean onlyPutsAndDeletes(Batch batch) {
        MemorySegment kinds = batch.kinds();
        byte put = (byte) OpKind.PUT.ordinal();
        byte delete = (byte) OpKind.DELETE.ordinal();
        for (int i = 0; i < batch.size(); i++) {
            byte k = kinds.get(ValueLayout.JAVA_BYTE, i);
            if (k != put && k != delete) {
                return false;
            }
        }
        return true;
    }

    /** Runs the journal's side of batches journaled alongside the engine. */
    private final ExecutorService appender = Executors.newCachedThreadPool(
            r -> Thread.ofPlatform().daemon().name("gphash-journal-appender").unstarted(r));

    /**
     * Appends the effects of a batch, as records of at most {@link RecordFormat#MAX_BODY}: from its
     * outcomes, or (result null) from its kinds. The records are gathered first, checksummed in
     * parallel where there are several (a batch of 2^20 puts is about 35), then appended in order.
     * Returns the last one's sequence number or -1.
     */
    private long journalBatch(Batch batch, BatchResult result) {
        long e0 = System.nanoTime();
        int n = result == null ? batch.size() : Math.min(batch.size(), result.size());
        List<RecordBody> bodies = new ArrayList<>();
        try {
            for (int i = 0; i < n; ) {
                RecordBody body = journal.body();
                bodies.add(body);
                i = body.addEffects(batch, result, i);
            }
            bodies.removeIf(b -> {
                if (b.count() == 0) {
                    journal.release(b);
                    return true;
                }
                return false;
            });
            if (bodies.size() > 1) {
                bodies.parallelStream().forEach(RecordBody::seal);
            } else {
                bodies.forEach(RecordBody::seal);
            }
            stages.encode.add(System.nanoTime() - e0);
            long last = -1;
            for (RecordBody b : bodies) {
                last = journal.append(b);
            }
            return last;
        } finally {
            bodies.forEach(journal::release);
        }
    }

    private void awaitDurable(long seq) {
        if (seq >= 0 && waitPerCall) {
            journal.awaitDurable(seq);
        }
    }

    // ------------------------------------------------------------------ checkpoints

    @Override
    public long checkpoint() {
        synchronized (checkpointMonitor) {
            if (closed) {
                throw new org.gphash.IndexClosedException(dir);
            }
            long s0 = journal.nextSeq();
            if (s0 == lastCheckpointSeq) {
                return lastCheckpointSeq;   // nothing journaled since the last checkpoint
            }
            long bytesAtStart = journal.bytesWritten();
            Path written;
            try (Checkpoint.Writer w = new Checkpoint.Writer(dir, s0, keySize, valueSize, valueLengths, journalId)) {
                // Small chunks: an engine may hold off its batches while it reads one (the GPU engine reads the
                // pool between batches), so a chunk of about 512 KiB bounds what a batch can wait.
                int cap = Math.max(1, Math.min(1 << 12, (512 << 10) / (keySize + valueSize)));
                EntryChunk chunk = new EntryChunk(keySize, valueSize, cap);
                ScanState scan = engine.startScan();
                while (!scan.done()) {
                    chunk.clear();
                    engine.readEntries(scan, chunk);
                    w.chunk(chunk);
                    if (closed) {
                        throw new org.gphash.IndexClosedException(dir);
                    }
                }
                // Every write the scan saw was applied before its record got a number: holding every
                // stripe, the next number is past all of them. The pause is a few lock handoffs.
                long t0 = System.nanoTime();
                long s1;
                stripes.lockAll();
                try {
                    s1 = journal.nextSeq();
                } finally {
                    stripes.unlockAll();
                }
                checkpointPauseNanos = System.nanoTime() - t0;
                if (journal.durableSeq() < s1 - 1) {
                    journal.forceNow();
                }
                written = w.finish(s1 - 1);
            }
            for (Path old : JournalFiles.list(dir, true)) {
                if (!old.equals(written)) {
                    try {
                        Files.deleteIfExists(old);
                    } catch (IOException e) {
                        LOG.log(System.Logger.Level.WARNING, "cannot remove old checkpoint " + old + ": " + e.getMessage());
                    }
                }
            }
            JournalFiles.fsyncDirectory(dir);
            journal.dropBefore(s0);
            lastCheckpointSeq = s0;
            bytesAtCheckpoint = bytesAtStart;
            return s0;
        }
    }

    /** How long the last checkpoint held every stripe (writers waited at most that long for it). */
    long lastCheckpointPauseNanos() {
        return checkpointPauseNanos;
    }

    private void checkpointLoop(boolean now) {
        long intervalNanos = settings.checkpointInterval().toNanos();
        long last = System.nanoTime();
        boolean due = now;
        while (!closed) {
            if (!due) {
                LockSupport.parkNanos(50_000_000L);
                if (closed) {
                    return;
                }
                due = intervalNanos > 0 && System.nanoTime() - last >= intervalNanos
                        || journal.bytesWritten() - bytesAtCheckpoint >= settings.checkpointAfterBytes();
            }
            if (due) {
                try {
                    checkpoint();
                } catch (RuntimeException e) {
                    if (!closed) {
                        LOG.log(System.Logger.Level.WARNING, "checkpoint in " + dir + " failed (retried at the next "
                                + "interval; the journal keeps every write meanwhile): " + e.getMessage());
                    }
                }
                last = System.nanoTime();
                due = false;
            }
        }
    }

    // ------------------------------------------------------------------ the rest

    @Override
    public RecoveryReport lastRecovery() {
        return engine.lastRecovery().withJournal(replay);
    }

    @Override
    public void sync() {
        journal.forceNow();
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        stopCheckpointer();
        try {
            journal.close();
        } finally {
            try {
                engine.close();
            } finally {
                releaseLock();
            }
        }
    }

    @Override
    public void abandon() {
        closed = true;
        stopCheckpointer();
        journal.abandon();
        try {
            engine.abandon();
        } finally {
            releaseLock();
        }
    }

    private void stopCheckpointer() {
        appender.shutdown();
        LockSupport.unpark(checkpointer);
        synchronized (checkpointMonitor) {
            // waits for a checkpoint under way to see closed and give up
        }
        try {
            checkpointer.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void releaseLock() {
        try {
            lockFile.close();
        } catch (IOException ignored) {
            // the lock goes with the process anyway
        }
    }

    @Override
    public String toString() {
        return "journaled(" + engine + ", journal " + dir + ")";
    }
}
