package org.gphash;

import java.lang.foreign.MemorySegment;
import java.util.ServiceLoader;
import java.util.concurrent.atomic.LongAdder;

import org.gphash.spi.Engine;
import org.gphash.spi.LatencyRecorder;

/**
 * An engine that counts and times the calls it passes on ({@link GPHashIndex.Builder#recordStats()}).
 * Latencies go to {@link LatencyRecorder}s from the provider on the class or module path
 * (gphash-stats, HdrHistogram: wait-free, no allocation); {@link #operationStats()} reads them.
 */
final class RecordingEngine extends ForwardingEngine {

    private final LongAdder gets = new LongAdder();
    private final LongAdder getHits = new LongAdder();
    private final LongAdder writes = new LongAdder();
    private final LongAdder batches = new LongAdder();
    private final LongAdder batchOps = new LongAdder();
    private final LatencyRecorder getTimer;
    private final LatencyRecorder writeTimer;
    private final LatencyRecorder batchTimer;

    RecordingEngine(Engine inner, LatencyRecorder.Factory recorders) {
        super(inner);
        this.getTimer = recorders.create();
        this.writeTimer = recorders.create();
        this.batchTimer = recorders.create();
    }

    /**
     * The latency recorders' provider, or a clear error naming the module to add.
     *
     * @throws IllegalStateException when none is on the class or module path
     */
    static LatencyRecorder.Factory recorders() {
        return ServiceLoader.load(LatencyRecorder.Factory.class, RecordingEngine.class.getClassLoader()).findFirst()
                .orElseThrow(() -> new IllegalStateException("recordStats() records latencies through gphash-stats "
                        + "(org.gphash:gphash-stats, HdrHistogram), which is not on the class or module path: add that "
                        + "dependency, or build the index without recordStats()"));
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
