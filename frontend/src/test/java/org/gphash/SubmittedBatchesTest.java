package org.gphash;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import org.gphash.index.CpuEngine;
import org.gphash.index.api.TestPools;
import org.gphash.spi.Engine;
import org.gphash.spi.ForwardingEngine;
import org.gphash.spi.SubmittedBatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 15, several batches in flight, without a GPU: the coalescer submits its next batch while
 * the engine still runs the last ({@link Engine#submit}). The engine here queues batches of gets and
 * runs them later on a thread of its own, as the GPU engine queues its small batches of gets, and
 * makes every other call wait for them first. Many callers mixing synchronous, asynchronous and
 * batch calls on keys of their own ({@link CoalescingTest#callerRun}) must still see exactly what
 * their models say (their own order
 * kept, nothing lost or applied twice), with and without the host read cache, and batches must
 * really have been in flight together.
 */
class SubmittedBatchesTest {

    private static final int VALUE = 32;
    private static final int READERS = 6;

    private final TestPools pools = TestPools.create();

    @AfterEach
    void cleanUp() {
        pools.close();
    }

    /**
     * Runs batches of gets late, in order, on its own thread (after a random pause, so that the
     * dispatcher's next batch overlaps them); everything else waits for them, then runs at once.
     */
    static final class DeferringEngine extends ForwardingEngine {
        private final ExecutorService runner = Executors.newSingleThreadExecutor();
        private final ArrayDeque<Future<?>> queued = new ArrayDeque<>();
        final AtomicLong deferred = new AtomicLong();
        /** Submits that found an earlier deferred batch not yet run: batches in flight together. */
        final AtomicLong overlapped = new AtomicLong();

        DeferringEngine(Engine engine) {
            super(engine);
        }

        private synchronized void drain() {
            Future<?> f;
            while ((f = queued.poll()) != null) {
                join(f);
            }
        }

        private static void join(Future<?> f) {
            try {
                f.get();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            } catch (ExecutionException e) {
                throw e.getCause() instanceof RuntimeException re ? re : new IllegalStateException(e.getCause());
            }
        }

        @Override
        public synchronized SubmittedBatch submit(Batch batch, BatchResult result) {
            for (int i = 0; i < batch.size(); i++) {
                if (batch.kind(i) != OpKind.GET) {
                    drain();
                    engine.execute(batch, result);
                    return SubmittedBatch.DONE;
                }
            }
            queued.removeIf(Future::isDone);
            if (!queued.isEmpty()) {
                overlapped.incrementAndGet();
            }
            long pause = 20_000 + (batch.size() * 7919L) % 200_000;
            Future<?> f = runner.submit(() -> {
                LockSupport.parkNanos(pause);
                engine.execute(batch, result);
            });
            queued.add(f);
            deferred.incrementAndGet();
            return () -> join(f);
        }

        @Override
        public synchronized void execute(Batch batch, BatchResult result) {
            drain();
            engine.execute(batch, result);
        }

        @Override
        public synchronized Outcome get(MemorySegment key, MemorySegment valueOut) {
            drain();
            return engine.get(key, valueOut);
        }

        @Override
        public synchronized Outcome put(MemorySegment key, MemorySegment value) {
            drain();
            return engine.put(key, value);
        }

        @Override
        public synchronized Outcome delete(MemorySegment key) {
            drain();
            return engine.delete(key);
        }

        @Override
        public void close() {
            drain();
            runner.shutdown();
            super.close();
        }
    }

    @ParameterizedTest(name = "host cache {0} bytes")
    @Timeout(120)  // a lost request leaves its caller waiting for ever
    @ValueSource(longs = {0, 1 << 20})
    void callersKeepTheirOrderWithBatchesInFlight(long hostCache) throws Exception {
        int threads = 12;
        int opsPerThread = 2_000;
        GPHashConfig config = GPHashIndex.builder(pools.pool("s.pool")).valueSize(VALUE).initialCapacity(1024)
                .coalescing(Coalescing.on(Duration.ZERO, 4096).withHostCache(hostCache).withSpin(Duration.ZERO)
                        .withBatchesInFlight(2)).config();
        DeferringEngine engine = new DeferringEngine(CpuEngine.create(config));
        try (GPHashIndex index = GPHashIndex.over(engine, config)) {
            // Readers of keys no caller writes beside the callers, so that many batches are all gets.
            CoalescingTest.callersHoldTheirModels(index, threads, opsPerThread, READERS, reader -> {
                for (int i = 0; i < opsPerThread; i++) {
                    org.junit.jupiter.api.Assertions.assertNull(index.get(-1L - i), "a key no one wrote");
                }
            });
            assertTrue(engine.deferred.get() > 100, "batches of gets were queued: " + engine.deferred.get());
            assertTrue(engine.overlapped.get() > 5, "batches were in flight together: " + engine.overlapped.get());
        }
    }
}
