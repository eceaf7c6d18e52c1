package org.gphash.bench;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;

import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.cli.PhaseTally;
import org.gphash.cli.Progress;
import org.gphash.cli.ValueCodec;
import org.gphash.cli.Workers;

/**
 * Runs one {@link OpStream} on one store with a fixed number of client threads and measures it.
 * The stream is cut into batches of the run's size; threads take the next batch from a shared
 * counter (the batches and their contents are the same for every system; which thread runs which
 * batch is not). Each store call is timed (batch latency); the phase is timed from the moment all
 * threads are ready to the last one finishing (throughput).
 *
 * <p>The client is built to cost next to nothing beside the store, so that a figure is the
 * store's: every batch is generated ahead, before the clock starts, straight into the columns the
 * store runs (when the stream's batches fit in {@link #AHEAD_BUDGET_SHARE} of the heap limit, which
 * also bounds direct memory; else each thread fills its batch as it goes, and the run says so); the
 * GPHash store runs those columns in place; results are checked in place: every outcome against
 * what the stream implies, the key embedded in one value read in {@link #VERIFY_KEY_EVERY}, and all
 * bytes of one in {@link #VERIFY_ALL_BYTES_EVERY} (the embedded key catches another key's value, the
 * full check a torn one). Nothing is allocated per operation.
 *
 * <p>Why values are sampled: checking every value read reads every value's cache line after the
 * store wrote it (a GPU's store writes them by DMA, so none is in the CPU's caches): a JFR profile
 * of a YCSB-C phase on the GPU engine found the client's threads in that check nearly all the time,
 * not in the store.
 */
final class StreamRunner {

    /** One value read in this many has its embedded key checked (a power of two). */
    static final int VERIFY_KEY_EVERY = 16;

    /** One value read in this many is checked byte for byte (a power of two, a multiple of {@link #VERIFY_KEY_EVERY}). */
    static final int VERIFY_ALL_BYTES_EVERY = 256;

    /** How results are checked, for the bench's header. */
    static final String VERIFICATION = "every outcome checked; of the values read, the embedded key of 1 in "
            + VERIFY_KEY_EVERY + " and every byte of 1 in " + VERIFY_ALL_BYTES_EVERY;

    /** The share of the heap limit (the JDK's default direct-memory limit too) batches made ahead may take. */
    static final double AHEAD_BUDGET_SHARE = 0.25;

    private static final ValueLayout.OfLong VALUE_KEY = ValueLayout.JAVA_LONG_UNALIGNED;

    private final int threads;
    private final int batchSize;
    private final Progress progress;
    /** How long the generated values are. */
    private final ValueLengths lengths;
    /** Whether the last run generated its batches ahead (false: filled inside the timed phase). */
    private boolean lastAhead;

    StreamRunner(int threads, int batchSize, Progress progress, ValueLengths lengths) {
        this.threads = threads;
        this.batchSize = batchSize;
        this.progress = progress;
        this.lengths = lengths;
    }

    /** Whether the last {@link #run} generated every batch before its clock started. */
    boolean generatedAhead() {
        return lastAhead;
    }

    Measurement run(StoreUnderTest store, OpStream stream, int keySize, int valueSize) throws Exception {
        int batches = stream.batches(batchSize);
        OpBatch[] ahead = generateAhead(stream, batches, keySize, valueSize);
        lastAhead = ahead != null;
        AtomicInteger next = new AtomicInteger();
        // Read-latest reads only keys inserted 2 x threads batches earlier (StreamGenerator's lag);
        // a batch waits until those batches are done, so that a descheduled thread cannot make a
        // read run before the insert of its key.
        int lagBatches = stream.workload().readsLatest() ? 2 * threads : -1;
        Watermark done = new Watermark(batches);
        progress.start(store.name() + " " + stream.workload().label() + " (batch " + batchSize + ")", stream.size());
        Workers.Timed t = Workers.run("bench", threads, (worker, tally) -> {
            OpBatch own = ahead == null ? new OpBatch(keySize, valueSize, batchSize, lengths) : null;
            OpResults results = new OpResults(valueSize, batchSize, lengths);
            ValueCodec codec = valueSize >= ValueCodec.MIN_VALUE_SIZE ? new ValueCodec(valueSize) : null;
            for (int b; (b = next.getAndIncrement()) < batches; ) {
                int from = b * batchSize;
                int to = Math.min(stream.size(), from + batchSize);
                OpBatch batch;
                if (ahead != null) {
                    batch = ahead[b];
                    ahead[b] = null;  // its memory goes back once run
                } else {
                    batch = own;
                    batch.fill(stream, from, to);
                }
                if (lagBatches > 0) {
                    done.awaitAllBelow(b - lagBatches + 1);
                }
                long t0 = System.nanoTime();
                store.execute(batch, results);
                tally.recordBatch(System.nanoTime() - t0);
                done.finished(b);
                check(batch, results, codec, tally);
                progress.advance(to - from);
            }
        });
        StoreUnderTest.Figures f = store.figures();
        PhaseTally tally = t.tally();
        return new Measurement(store.name(), stream.workload().label(), batchSize, threads, tally.operations(),
                t.nanos(), tally.meanBatchNanos(), tally.batchQuantileNanos(0.99), f.loadFactor(), f.cacheHitRate(),
                tally.failures());
    }

    /**
     * Every batch of the stream, filled by the client threads before the clock starts; null when
     * they would take more than the budget (then each thread fills its own batch as it goes).
     */
    private OpBatch[] generateAhead(OpStream stream, int batches, int keySize, int valueSize) throws Exception {
        long perOp = 1L + keySize + lengths.bytesPerValue(valueSize) + Long.BYTES;
        long bytes = perOp * stream.size();
        if (bytes > AHEAD_BUDGET_SHARE * Runtime.getRuntime().maxMemory()) {
            return null;
        }
        OpBatch[] ahead = new OpBatch[batches];
        AtomicInteger next = new AtomicInteger();
        Workers.run("generate", threads, (worker, tally) -> {
            for (int b; (b = next.getAndIncrement()) < batches; ) {
                int from = b * batchSize;
                int to = Math.min(stream.size(), from + batchSize);
                OpBatch batch = new OpBatch(keySize, valueSize, to - from, lengths);
                batch.fill(stream, from, to);
                ahead[b] = batch;
            }
        });
        return ahead;
    }

    /** Which batches are done: the count of the leading run of finished batches. */
    private static final class Watermark {
        private final AtomicIntegerArray finished;
        private final AtomicInteger contiguous = new AtomicInteger();

        Watermark(int batches) {
            this.finished = new AtomicIntegerArray(Math.max(1, batches));
        }

        void finished(int b) {
            finished.set(b, 1);
            int c;
            while ((c = contiguous.get()) < finished.length() && finished.get(c) == 1) {
                contiguous.compareAndSet(c, c + 1);
            }
        }

        /** Waits until batches 0 .. n-1 are all done (rarely waits: only a descheduled thread lags). */
        void awaitAllBelow(int n) {
            while (contiguous.get() < n) {
                Thread.yield();
            }
        }
    }

    /**
     * Counts each operation by kind and each outcome the stream did not imply; checks the key
     * embedded in one value read in {@link #VERIFY_KEY_EVERY}, and all bytes of one in
     * {@link #VERIFY_ALL_BYTES_EVERY}.
     */
    static void check(OpBatch batch, OpResults results, ValueCodec codec, PhaseTally tally) {
        MemorySegment values = results.values();
        MemorySegment codes = results.codes();
        MemorySegment kinds = batch.kinds();
        ValueLengths lengths = batch.lengths();
        long vs = results.valueSize();
        byte found = Outcome.FOUND.code();
        byte notFound = Outcome.NOT_FOUND.code();
        byte updated = Outcome.UPDATED.code();
        byte replaced = Outcome.REPLACED.code();
        byte inserted = Outcome.INSERTED.code();
        byte deleted = Outcome.DELETED.code();
        int n = batch.size();
        long reads = 0;
        long updates = 0;
        long rmws = 0;
        long inserts = 0;
        long deletes = 0;
        for (int i = 0; i < n; i++) {
            int kind = kinds.get(ValueLayout.JAVA_BYTE, i);
            long id = batch.id(i);
            byte o = codes.get(ValueLayout.JAVA_BYTE, i);
            switch (kind) {
                case GET_ORDINAL -> {
                    reads++;
                    boolean absent = id >= StreamGenerator.ABSENT_BASE;
                    if (absent ? o != notFound : o != found) {
                        tally.missing++;
                    } else if (!absent && codec != null && sampled(i) && !valueOf(codec, values, i, vs, id, results, lengths)) {
                        tally.mismatches++;
                    }
                }
                case UPDATE_ORDINAL, PUT_ORDINAL -> {
                    updates++;
                    if (o != updated) {
                        tally.missing++;
                    }
                }
                case RMW_ORDINAL -> {
                    rmws++;
                    if (o != replaced) {
                        tally.missing++;
                    } else if (codec != null && sampled(i) && !valueOf(codec, values, i, vs, id, results, lengths)) {
                        tally.mismatches++;
                    }
                }
                case INSERT_ORDINAL -> {
                    inserts++;
                    if (o != inserted) {
                        tally.insertFailures++;
                    }
                }
                case DELETE_ORDINAL -> {
                    deletes++;
                    if (o != deleted) {
                        tally.missing++;
                    }
                }
                default -> throw new IllegalStateException("operation " + i + " has kind " + kind);
            }
        }
        tally.reads += reads;
        tally.updates += updates;
        tally.readModifyWrites += rmws;
        tally.inserts += inserts;
        tally.deletes += deletes;
    }

    /** Whether value {@code i} is one of those checked ({@link #VERIFY_KEY_EVERY}). */
    private static boolean sampled(int i) {
        return (i & (VERIFY_KEY_EVERY - 1)) == 0;
    }

    /**
     * Whether value {@code i} is key {@code id}'s: its embedded key, its length the one its version was
     * written with (values of mixed length), and all bytes for one in {@link #VERIFY_ALL_BYTES_EVERY}.
     */
    private static boolean valueOf(ValueCodec codec, MemorySegment values, int i, long vs, long id, OpResults results,
                                   ValueLengths lengths) {
        long at = results.valueOffset(i);
        if (values.get(VALUE_KEY, at) != id) {
            return false;
        }
        if (lengths == ValueLengths.FIXED) {
            return (i & (VERIFY_ALL_BYTES_EVERY - 1)) != 0 || codec.matches(values, at, id);
        }
        int length = results.valueLength(i);
        if (length != lengths.of(id, values.get(VALUE_KEY, at + 8), (int) vs)) {
            return false;
        }
        return (i & (VERIFY_ALL_BYTES_EVERY - 1)) != 0 || codec.matches(values, at, id, length);
    }

    private static final int GET_ORDINAL = 0;
    private static final int PUT_ORDINAL = 1;
    private static final int INSERT_ORDINAL = 2;
    private static final int UPDATE_ORDINAL = 3;
    private static final int DELETE_ORDINAL = 4;
    private static final int RMW_ORDINAL = 5;

    static {
        if (OpKind.GET.ordinal() != GET_ORDINAL || OpKind.PUT.ordinal() != PUT_ORDINAL
                || OpKind.INSERT.ordinal() != INSERT_ORDINAL || OpKind.UPDATE.ordinal() != UPDATE_ORDINAL
                || OpKind.DELETE.ordinal() != DELETE_ORDINAL || OpKind.READ_MODIFY_WRITE.ordinal() != RMW_ORDINAL) {
            throw new AssertionError("OpKind's ordinals moved: update StreamRunner's constants");
        }
    }
}
