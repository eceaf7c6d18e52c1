package org.gphash.bench;

import org.gphash.cli.PhaseTally;
import org.gphash.cli.Workers;
import org.gphash.cli.ValueCodec;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicInteger;

import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.recovery.Progress;

/**
 * Runs one {@link OpStream} on one store with a fixed number of client threads and measures it.
 * The stream is cut into batches of the run's size; threads take the next batch from a shared
 * counter (the batches and their contents are the same for every system; which thread runs which
 * batch is not). Each store call is timed (batch latency); the phase is timed from the moment all
 * threads are ready to the last one finishing (throughput). Every result is checked against what
 * the stream implies, and every value read against the key it must belong to.
 */
final class StreamRunner {

    private final int threads;
    private final int batchSize;
    private final Progress progress;

    StreamRunner(int threads, int batchSize, Progress progress) {
        this.threads = threads;
        this.batchSize = batchSize;
        this.progress = progress;
    }

    Measurement run(StoreUnderTest store, OpStream stream, int keySize, int valueSize) throws Exception {
        int batches = stream.batches(batchSize);
        AtomicInteger next = new AtomicInteger();
        // Read-latest reads only keys inserted 2 x threads batches earlier (StreamGenerator's lag);
        // a batch waits until those batches are done, so that a descheduled thread cannot make a
        // read run before the insert of its key.
        int lagBatches = stream.workload().readsLatest() ? 2 * threads : -1;
        Watermark done = new Watermark(batches);
        progress.start(store.name() + " " + stream.workload().label() + " (batch " + batchSize + ")", stream.size());
        Workers.Timed t = Workers.run("bench", threads, (worker, tally) -> {
            OpBatch batch = new OpBatch(keySize, valueSize, batchSize);
            OpResults results = new OpResults(valueSize, batchSize);
            ValueCodec codec = valueSize >= ValueCodec.MIN_VALUE_SIZE ? new ValueCodec(valueSize) : null;
            for (int b; (b = next.getAndIncrement()) < batches; ) {
                int from = b * batchSize;
                int to = Math.min(stream.size(), from + batchSize);
                batch.fill(stream, from, to);
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

    /** Which batches are done: the count of the leading run of finished batches. */
    private static final class Watermark {
        private final java.util.concurrent.atomic.AtomicIntegerArray finished;
        private final AtomicInteger contiguous = new AtomicInteger();

        Watermark(int batches) {
            this.finished = new java.util.concurrent.atomic.AtomicIntegerArray(Math.max(1, batches));
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

    /** Counts each operation by kind and each outcome the stream did not imply. */
    static void check(OpBatch batch, OpResults results, ValueCodec codec, PhaseTally tally) {
        MemorySegment values = MemorySegment.ofArray(results.values);
        long vs = results.valueSize();
        for (int i = 0; i < batch.size(); i++) {
            OpKind kind = batch.kind(i);
            long id = batch.id(i);
            boolean absent = id >= StreamGenerator.ABSENT_BASE;
            Outcome o = results.outcome(i);
            switch (kind) {
                case GET -> {
                    tally.reads++;
                    if (absent ? o != Outcome.NOT_FOUND : o != Outcome.FOUND) {
                        tally.missing++;
                    } else if (!absent && codec != null && !codec.matches(values, i * vs, id)) {
                        tally.mismatches++;
                    }
                }
                case UPDATE, PUT -> {
                    tally.updates++;
                    if (o != Outcome.UPDATED) {
                        tally.missing++;
                    }
                }
                case READ_MODIFY_WRITE -> {
                    tally.readModifyWrites++;
                    if (o != Outcome.REPLACED) {
                        tally.missing++;
                    } else if (codec != null && !codec.matches(values, i * vs, id)) {
                        tally.mismatches++;
                    }
                }
                case INSERT -> {
                    tally.inserts++;
                    if (o != Outcome.INSERTED) {
                        tally.insertFailures++;
                    }
                }
                case DELETE -> {
                    tally.deletes++;
                    if (o != Outcome.DELETED) {
                        tally.missing++;
                    }
                }
            }
        }
    }
}
