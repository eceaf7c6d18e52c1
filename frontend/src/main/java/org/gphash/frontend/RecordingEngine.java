package org.gphash.frontend;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.LongAdder;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.OperationStats;
import org.gphash.Outcome;
import org.gphash.spi.Engine;
import org.gphash.spi.ForwardingEngine;

/**
 * An engine that counts and times the calls it passes on ({@code GPHashIndex.Builder.recordStats()}).
 * Latencies go to HdrHistogram recorders ({@link HdrLatencyRecorder}: wait-free, no allocation);
 * {@link #operationStats()} reads them.
 */
final class RecordingEngine extends ForwardingEngine {

    private final LongAdder gets = new LongAdder();
    private final LongAdder getHits = new LongAdder();
    private final LongAdder writes = new LongAdder();
    private final LongAdder batches = new LongAdder();
    private final LongAdder batchOps = new LongAdder();
    private final HdrLatencyRecorder getTimer = new HdrLatencyRecorder();
    private final HdrLatencyRecorder writeTimer = new HdrLatencyRecorder();
    private final HdrLatencyRecorder batchTimer = new HdrLatencyRecorder();

    RecordingEngine(Engine inner) {
        super(inner);
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

    /** A get is a read whose length is not asked for: one route, recorded once ({@link #read}). */
    @Override
    public Outcome get(MemorySegment key, MemorySegment valueOut) {
        return read(key, valueOut) >= 0 ? Outcome.FOUND : Outcome.NOT_FOUND;
    }

    /** Values pass through unchanged: their lengths too. */
    @Override
    public boolean valueLengths() {
        return engine.valueLengths();
    }

    @Override
    public int read(MemorySegment key, MemorySegment valueOut) {
        long start = System.nanoTime();
        int length = engine.read(key, valueOut);
        getTimer.record(System.nanoTime() - start);
        gets.increment();
        if (length >= 0) {
            getHits.increment();
        }
        return length;
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
