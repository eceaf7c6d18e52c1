package org.gphash;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import org.gphash.index.CpuEngine;
import org.gphash.index.api.TestPools;
import org.gphash.spi.Engine;
import org.gphash.spi.ForwardingEngine;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 15, synchronous gets run at once ({@link Engine#getAlongside}) instead of queued for a
 * batch, without a GPU. The engine here runs such gets on the calling thread, but only every other
 * time (the rest find it "busy" and are queued, as when the GPU engine's slots are all taken), and
 * makes every batch slow, so that a caller's asynchronous writes are still queued when its next
 * get comes: a get that skipped the queue then would miss them. Many callers mixing synchronous,
 * asynchronous and batch calls on keys of their own ({@link CoalescingTest#callerRun}) must see
 * exactly what their models say.
 */
class GetsAlongsideTest {

    private static final int VALUE = 32;

    private final TestPools pools = TestPools.create();

    @AfterEach
    void cleanUp() {
        pools.close();
    }

    /** Runs every other get at once on the caller's thread; batches after a pause. */
    static final class AlongsideEngine extends ForwardingEngine {
        final AtomicLong ranAtOnce = new AtomicLong();
        /** Gets run at once that found nothing (in a test whose every get follows its key's write). */
        final AtomicLong ranAtOnceNotFound = new AtomicLong();
        final AtomicLong refused = new AtomicLong();
        private final AtomicLong asked = new AtomicLong();

        AlongsideEngine(Engine engine) {
            super(engine);
        }

        @Override
        public Outcome getAlongside(MemorySegment key, MemorySegment valueOut) {
            if (asked.incrementAndGet() % 2 == 0) {
                refused.incrementAndGet();
                return null;
            }
            ranAtOnce.incrementAndGet();
            Outcome o = engine.get(key, valueOut);
            if (o == Outcome.NOT_FOUND) {
                ranAtOnceNotFound.incrementAndGet();
            }
            return o;
        }

        @Override
        public void execute(Batch batch, BatchResult result) {
            LockSupport.parkNanos(100_000);  // queued operations stay queued a while
            engine.execute(batch, result);
        }
    }

    @ParameterizedTest(name = "host cache {0} bytes")
    @Timeout(120)  // a lost request leaves its caller waiting for ever
    @ValueSource(longs = {0, 1 << 20})
    void callersSeeTheirQueuedWritesWhenGetsRunAtOnce(long hostCache) throws Exception {
        int threads = 12;
        int opsPerThread = 1_500;
        GPHashConfig config = GPHashIndex.builder(pools.pool("a.pool")).valueSize(VALUE).initialCapacity(1024)
                .coalescing(Coalescing.on(Duration.ZERO, 4096).withHostCache(hostCache).withSpin(Duration.ZERO)).config();
        AlongsideEngine engine = new AlongsideEngine(CpuEngine.create(config));
        try (GPHashIndex index = GPHashIndex.over(engine, config)) {
            CoalescingTest.callersHoldTheirModels(index, threads, opsPerThread);
            CoalescerStats s = index.coalescerStats().orElseThrow();
            assertTrue(engine.ranAtOnce.get() > 200, "gets ran at once: " + engine.ranAtOnce.get());
            assertTrue(engine.refused.get() > 200, "gets found the engine busy and were queued: " + engine.refused.get());
            assertEquals(engine.ranAtOnce.get(), s.getsRunAtOnce(), "the coalescer counts the gets that ran at once");
        }
    }

    @Test
    @Timeout(60)
    void aGetAfterQueuedAsyncWritesIsQueuedBehindThem() throws Exception {
        GPHashConfig config = GPHashIndex.builder(pools.pool("b.pool")).valueSize(VALUE).initialCapacity(1024)
                .coalescing(Coalescing.on(Duration.ZERO, 4096).withHostCache(0).withSpin(Duration.ZERO)).config();
        AlongsideEngine engine = new AlongsideEngine(CpuEngine.create(config));
        try (GPHashIndex index = GPHashIndex.over(engine, config)) {
            for (long k = 0; k < 200; k++) {
                byte[] v = CoalescingTest.value(k, 1);
                index.putAsync(k, v);
                assertTrue(java.util.Arrays.equals(v, index.get(k)), "get " + k + " after its putAsync");
            }
            // A get may run at once only once its thread's queued write has run: then it finds the
            // key. (How many get that far depends on scheduling: the write's batch pauses 100 us.)
            assertEquals(0, engine.ranAtOnceNotFound.get(), "no get ran at once ahead of its thread's queued write");
            assertTrue(engine.ranAtOnce.get() < 100, "most gets waited behind their write: " + engine.ranAtOnce.get());
            assertTrue(java.util.Arrays.equals(CoalescingTest.value(7, 1), index.get(7L)));
            assertTrue(engine.ranAtOnce.get() + engine.refused.get() > 0, "with nothing queued, a get asks to run at once");
        }
    }
}
