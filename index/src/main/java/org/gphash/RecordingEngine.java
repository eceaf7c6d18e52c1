package org.gphash;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.LongAdder;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import org.gphash.spi.Engine;

/**
 * An engine that counts and times the calls it passes on ({@link GPHashIndex.Builder#recordStats()}).
 * Latencies go into HdrHistogram {@link Recorder}s, which record wait-free and without allocating;
 * {@link #operationStats()} folds what they gathered since the last call into running totals.
 */
final class RecordingEngine extends ForwardingEngine {

    /** Latencies above an hour are recorded as an hour. */
    private static final long MAX_NANOS = 3_600_000_000_000L;

    private final LongAdder gets = new LongAdder();
    private final LongAdder getHits = new LongAdder();
    private final LongAdder writes = new LongAdder();
    private final LongAdder batches = new LongAdder();
    private final LongAdder batchOps = new LongAdder();
    private final Timer getTimer = new Timer();
    private final Timer writeTimer = new Timer();
    private final Timer batchTimer = new Timer();

    RecordingEngine(Engine inner) {
        super(inner);
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
    public Outcome get(MemorySegment key, MemorySegment valueOut) {
        long start = System.nanoTime();
        Outcome o = engine.get(key, valueOut);
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
        return write(engine.put(key, value), start);
    }

    @Override
    public Outcome insert(MemorySegment key, MemorySegment value) {
        long start = System.nanoTime();
        return write(engine.insert(key, value), start);
    }

    @Override
    public Outcome update(MemorySegment key, MemorySegment value) {
        long start = System.nanoTime();
        return write(engine.update(key, value), start);
    }

    @Override
    public Outcome delete(MemorySegment key) {
        long start = System.nanoTime();
        return write(engine.delete(key), start);
    }

    @Override
    public void execute(Batch batch, BatchResult result) {
        long start = System.nanoTime();
        engine.execute(batch, result);
        batchTimer.record(System.nanoTime() - start);
        batches.increment();
        batchOps.add(batch.size());
    }
}
