package org.gphash.demo;

import java.lang.foreign.MemorySegment;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.GPHashIndex;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.cli.PhaseTally;
import org.gphash.cli.ValueCodec;
import org.gphash.cli.ZipfianGenerator;

/**
 * The per-thread work of each demo phase, all through the batch API: every worker owns one
 * {@link Batch} and one {@link BatchResult} and reuses them (a batch is not thread-safe, and
 * reusing the memory keeps the garbage collector out of the measurement).
 *
 * <p>Keys are the numbers {@code 0 .. keys-1} after the load; the run phase's inserts take fresh
 * numbers from {@code keys} upwards, handed out by one shared counter. Reads and updates pick
 * among the loaded keys with a zipfian distribution (YCSB's request distribution), so a few keys
 * are hot and are updated and read by several threads at once.
 */
final class DemoWorkload {

    private final GPHashIndex index;
    private final DemoOptions options;
    private final ValueCodec codec;
    private final ZipfianGenerator zipf;
    private final AtomicLong nextFreshKey;

    DemoWorkload(GPHashIndex index, DemoOptions options) {
        this(index, options, new ZipfianGenerator(options.keys, options.theta), new AtomicLong(options.keys));
    }

    private DemoWorkload(GPHashIndex index, DemoOptions options, ZipfianGenerator zipf, AtomicLong nextFreshKey) {
        this.index = index;
        this.options = options;
        this.codec = new ValueCodec(index.valueSize());
        this.zipf = zipf;
        this.nextFreshKey = nextFreshKey;
    }

    /** The same workload (same keys, same inserted keys) on {@code reopened}, the pool opened again. */
    DemoWorkload reopenedOn(GPHashIndex reopened) {
        return new DemoWorkload(reopened, options, zipf, nextFreshKey);
    }

    ZipfianGenerator zipfian() {
        return zipf;
    }

    /** Keys handed out for inserts so far: the keys are {@code options.keys .. freshKeyEnd()-1}. */
    long freshKeyEnd() {
        return nextFreshKey.get();
    }

    /** Load: worker {@code w} inserts its contiguous share of keys {@code 0 .. keys-1}. */
    void load(int worker, PhaseTally tally) {
        long from = share(options.keys, worker);
        long to = share(options.keys, worker + 1);
        Batch batch = index.newBatch(options.batch);
        BatchResult result = new BatchResult(index.valueSize(), options.batch);
        byte[] value = new byte[index.valueSize()];
        for (long k = from; k < to; ) {
            batch.clear();
            long end = Math.min(to, k + options.batch);
            for (; k < end; k++) {
                codec.encode(k, 0, value);
                batch.insert(k, value);
            }
            execute(batch, result, tally);
            tally.inserts += batch.size();
            tally.insertFailures += batch.size() - result.count(Outcome.INSERTED);
        }
    }

    /** Run: worker {@code w} issues its share of the operation mix, verifying each result. */
    void run(int worker, PhaseTally tally) {
        long ops = share(options.ops, worker + 1) - share(options.ops, worker);
        // One stream per worker, fixed by --seed: the same command line issues the same requests.
        SplittableRandom random = new SplittableRandom(options.seed * 0x9E3779B97F4A7C15L + worker);
        double readBelow = options.readProportion;
        double updateBelow = options.readProportion + options.updateProportion;
        Batch batch = index.newBatch(options.batch);
        BatchResult result = new BatchResult(index.valueSize(), options.batch);
        byte[] value = new byte[index.valueSize()];
        long[] keys = new long[options.batch];
        byte[] kinds = new byte[options.batch];
        // Versions are unique across workers, so two writers of one key never write equal values.
        long version = (long) worker << 40;
        long done = 0;
        while (done < ops) {
            batch.clear();
            int n = (int) Math.min(options.batch, ops - done);
            for (int i = 0; i < n; i++) {
                double r = random.nextDouble();
                long key;
                OpKind kind;
                if (r < readBelow) {
                    kind = OpKind.GET;
                    key = zipf.next(random);
                    batch.get(key);
                } else if (r < updateBelow) {
                    kind = OpKind.UPDATE;
                    key = zipf.next(random);
                    codec.encode(key, ++version, value);
                    batch.update(key, value);
                } else {
                    kind = OpKind.INSERT;
                    key = nextFreshKey.getAndIncrement();
                    codec.encode(key, 0, value);
                    batch.insert(key, value);
                }
                keys[i] = key;
                kinds[i] = (byte) kind.ordinal();
            }
            execute(batch, result, tally);
            check(result, keys, kinds, n, tally);
            done += n;
        }
    }

    /** Read-back after reopening: worker {@code w} reads its share of every key that must exist. */
    void readBack(int worker, PhaseTally tally) {
        long total = freshKeyEnd();
        long from = share(total, worker);
        long to = share(total, worker + 1);
        Batch batch = index.newBatch(options.batch);
        BatchResult result = new BatchResult(index.valueSize(), options.batch);
        long[] keys = new long[options.batch];
        byte[] kinds = new byte[options.batch];
        for (long k = from; k < to; ) {
            batch.clear();
            int n = (int) Math.min(options.batch, to - k);
            for (int i = 0; i < n; i++, k++) {
                batch.get(k);
                keys[i] = k;
                kinds[i] = (byte) OpKind.GET.ordinal();
            }
            execute(batch, result, tally);
            check(result, keys, kinds, n, tally);
        }
    }

    private void execute(Batch batch, BatchResult result, PhaseTally tally) {
        long t0 = System.nanoTime();
        index.execute(batch, result);
        tally.recordBatch(System.nanoTime() - t0);
    }

    /** Counts each operation and checks its outcome: reads must find a well-formed value of their key. */
    private void check(BatchResult result, long[] keys, byte[] kinds, int n, PhaseTally tally) {
        MemorySegment values = result.values();
        for (int i = 0; i < n; i++) {
            Outcome outcome = result.outcome(i);
            switch (OpKind.ofOrdinal(kinds[i])) {
                case GET -> {
                    tally.reads++;
                    if (outcome != Outcome.FOUND) {
                        tally.missing++;
                    } else if (!codec.matches(values, result.valueOffset(i), keys[i])) {
                        tally.mismatches++;
                    }
                }
                case UPDATE -> {
                    tally.updates++;
                    if (outcome != Outcome.UPDATED) {
                        tally.missing++;
                    }
                }
                case INSERT -> {
                    tally.inserts++;
                    if (outcome != Outcome.INSERTED) {
                        tally.insertFailures++;
                    }
                }
                default -> throw new IllegalStateException("the demo issues no " + OpKind.ofOrdinal(kinds[i]));
            }
        }
    }

    /** The first item of worker {@code w}'s contiguous share of {@code total} (share(total, T) = total). */
    private long share(long total, int worker) {
        // floor(total * worker / threads) without overflowing for huge totals.
        long t = options.threads;
        return total / t * worker + total % t * worker / t;
    }
}
