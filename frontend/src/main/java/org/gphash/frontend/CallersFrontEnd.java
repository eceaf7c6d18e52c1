package org.gphash.frontend;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import org.gphash.CoalescerStats;
import org.gphash.Coalescing;
import org.gphash.OpKind;
import org.gphash.OperationStats;
import org.gphash.Outcome;
import org.gphash.spi.Engine;
import org.gphash.spi.FrontEnd;

/**
 * The front end for many callers: the coalescer ({@link CoalescingEngine}, with its host read cache)
 * in front of the backend when calls are merged, and the stats recorder ({@link RecordingEngine}) in
 * front of that when calls are counted; the index calls the outermost.
 */
final class CallersFrontEnd implements FrontEnd {

    private final Engine backend;
    /** The coalescer, or null. */
    private final CoalescingEngine coalescer;
    /** The recorder, or null. */
    private final RecordingEngine recorder;
    private final Engine engine;

    CallersFrontEnd(Engine backend, Coalescing coalescing, boolean recordStats, Path pool) {
        this.backend = backend;
        this.coalescer = coalescing != null ? new CoalescingEngine(backend, coalescing, pool) : null;
        Engine front = coalescer != null ? coalescer : backend;
        this.recorder = recordStats ? new RecordingEngine(front) : null;
        this.engine = recorder != null ? recorder : front;
    }

    @Override
    public Engine engine() {
        return engine;
    }

    @Override
    public Engine backend() {
        return coalescer != null ? coalescer.inner() : backend;
    }

    @Override
    public boolean coalesces() {
        return coalescer != null;
    }

    @Override
    public CompletableFuture<byte[]> getAsync(MemorySegment key) {
        return coalescer().getAsync(key);
    }

    @Override
    public CompletableFuture<Outcome> submit(OpKind kind, MemorySegment key, MemorySegment value) {
        return coalescer().submit(kind, key, value, null);
    }

    private CoalescingEngine coalescer() {
        if (coalescer == null) {
            throw new IllegalStateException("single calls are not coalesced on this index");
        }
        return coalescer;
    }

    @Override
    public Optional<CoalescerStats> coalescerStats() {
        if (coalescer == null) {
            return Optional.empty();
        }
        CoalescingEngine.Stats s = coalescer.coalescerStats();
        return Optional.of(new CoalescerStats(s.batches(), s.operations(), s.hostCacheHits(),
                s.hostCacheMisses(), s.getsRunAtOnce()));
    }

    @Override
    public OperationStats operationStats() {
        return recorder == null ? OperationStats.NONE : recorder.operationStats();
    }

    /** The {@link java.util.ServiceLoader} provider. */
    public static final class Factory implements FrontEnd.Factory {

        /** Made by the service loader. */
        public Factory() {
        }

        @Override
        public FrontEnd over(Engine backend, Coalescing coalescing, boolean recordStats, Path pool) {
            return new CallersFrontEnd(backend, coalescing, recordStats, pool);
        }
    }
}
