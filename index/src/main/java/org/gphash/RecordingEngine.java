package org.gphash;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.LongAdder;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import org.gphash.index.Geometry;

/**
 * An engine that counts and times the calls it passes on ({@link GPHashIndex.Builder#recordStats()}).
 * Latencies go into HdrHistogram {@link Recorder}s, which record wait-free and without allocating;
 * {@link #operationStats()} folds what they gathered since the last call into running totals.
 */
final class RecordingEngine implements Engine {

    /** Latencies above an hour are recorded as an hour. */
    private static final long MAX_NANOS = 3_600_000_000_000L;

    private final Engine inner;
    private final LongAdder gets = new LongAdder();
    private final LongAdder getHits = new LongAdder();
    private final LongAdder writes = new LongAdder();
    private final LongAdder batches = new LongAdder();
    private final LongAdder batchOps = new LongAdder();
    private final Timer getTimer = new Timer();
    private final Timer writeTimer = new Timer();
    private final Timer batchTimer = new Timer();

    RecordingEngine(Engine inner) {
        this.inner = inner;
    }

    /** The engine it records for. */
    Engine inner() {
        return inner;
    }

    /** One kind of call's latencies: a recorder, and the totals folded from it. */
    private static final class Timer {
        private final Recorder recorder = new Recorder(3);
        private Histogram total = new Histogram(3);
        private Histogram interval;

        void record(long nanos) {
            recorder.recordValue(Math.min(Math.max(nanos, 0), MAX_NANOS));
        }

        synchronized OperationStats.Latency latency() {
            interval = recorder.getIntervalHistogram(interval);
            total.add(interval);
            if (total.getTotalCount() == 0) {
                return OperationStats.Latency.NONE;
            }
            return new OperationStats.Latency(total.getTotalCount(), total.getMean(), total.getValueAtPercentile(50),
                    total.getValueAtPercentile(99), total.getValueAtPercentile(99.9), total.getMaxValue());
        }
    }

    OperationStats operationStats() {
        return new OperationStats(gets.sum(), getHits.sum(), writes.sum(), batches.sum(), batchOps.sum(),
                getTimer.latency(), writeTimer.latency(), batchTimer.latency());
    }

    private Outcome write(Outcome o, long start) {
        writeTimer.record(System.nanoTime() - start);
        writes.increment();
        return o;
    }

    @Override
    public Geometry geometry() {
        return inner.geometry();
    }

    @Override
    public Outcome get(MemorySegment key, MemorySegment valueOut) {
        long start = System.nanoTime();
        Outcome o = inner.get(key, valueOut);
        getTimer.record(System.nanoTime() - start);
        gets.increment();
        if (o == Outcome.FOUND) {
            getHits.increment();
        }
        return o;
    }

    @Override
    public Outcome put(MemorySegment key, MemorySegment value) {
        long start = System.nanoTime();
        return write(inner.put(key, value), start);
    }

    @Override
    public Outcome insert(MemorySegment key, MemorySegment value) {
        long start = System.nanoTime();
        return write(inner.insert(key, value), start);
    }

    @Override
    public Outcome update(MemorySegment key, MemorySegment value) {
        long start = System.nanoTime();
        return write(inner.update(key, value), start);
    }

    @Override
    public Outcome delete(MemorySegment key) {
        long start = System.nanoTime();
        return write(inner.delete(key), start);
    }

    @Override
    public void execute(Batch batch, BatchResult result) {
        long start = System.nanoTime();
        inner.execute(batch, result);
        batchTimer.record(System.nanoTime() - start);
        batches.increment();
        batchOps.add(batch.size());
    }

    @Override
    public IndexStats stats() {
        return inner.stats();
    }

    @Override
    public void readEntries(org.gphash.index.EntryScan.State state, EntryChunk chunk) {
        inner.readEntries(state, chunk);
    }

    @Override
    public void snapshot(java.nio.file.Path target) {
        inner.snapshot(target);
    }

    @Override
    public RecoveryReport lastRecovery() {
        return inner.lastRecovery();
    }

    @Override
    public boolean reloadBucketCache(boolean wait) {
        return inner.reloadBucketCache(wait);
    }

    @Override
    public void close() {
        inner.close();
    }

    @Override
    public void sync() {
        inner.sync();
    }

    @Override
    public void abandon() {
        inner.abandon();
    }
}
