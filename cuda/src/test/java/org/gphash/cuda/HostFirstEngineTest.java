package org.gphash.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.gphash.Backend;
import org.gphash.BackendUnavailableException;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.Durability;
import org.gphash.GPHashConfig;
import org.gphash.GPHashIndex;
import org.gphash.IndexClosedException;
import org.gphash.Outcome;
import org.gphash.index.CpuEngine;
import org.gphash.spi.Engine;
import org.gphash.spi.ForwardingEngine;
import org.gphash.table.PoolTable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The hand-over of {@link HostFirstEngine} without a GPU: the GPU's side is a double whose engine is
 * the CPU engine's code over the same pool, counting what reaches it. Calls before the hand-over run
 * on the host and none reaches the GPU's engine; the GPU's engine is built with no call inside; writes
 * from many threads across the hand-over are all kept; a GPU that fails to start fails later calls and
 * leaves the pool whole; a close before the hand-over releases the GPU's side and closes the pool
 * cleanly; and the promise of ordered operations on a key made at open is kept where the GPU's engine
 * does not make it.
 */
class HostFirstEngineTest {

    private static final int VS = 16;
    private final GpuTestSupport support = GpuTestSupport.create();

    @AfterEach
    void cleanUp() {
        support.close();
    }

    private GPHashConfig config(String name) {
        Path p = support.pool(name);
        return GPHashIndex.builder(p).backend(Backend.CPU).keySize(8).valueSize(VS).initialCapacity(1 << 12).config();
    }

    /** An engine that counts the calls in it now and every call it was given. */
    private static final class Counting extends ForwardingEngine {
        final AtomicInteger inside = new AtomicInteger();
        final AtomicInteger calls = new AtomicInteger();
        final List<Integer> batchSizes = new CopyOnWriteArrayList<>();
        final boolean orders;

        Counting(Engine engine, boolean orders) {
            super(engine);
            this.orders = orders;
        }

        @Override
        public Outcome get(MemorySegment key, MemorySegment valueOut) {
            inside.incrementAndGet();
            calls.incrementAndGet();
            try {
                return super.get(key, valueOut);
            } finally {
                inside.decrementAndGet();
            }
        }

        @Override
        public Outcome put(MemorySegment key, MemorySegment value) {
            inside.incrementAndGet();
            calls.incrementAndGet();
            try {
                Thread.onSpinWait();
                return super.put(key, value);
            } finally {
                inside.decrementAndGet();
            }
        }

        @Override
        public void execute(Batch batch, BatchResult result) {
            inside.incrementAndGet();
            calls.incrementAndGet();
            batchSizes.add(batch.size());
            try {
                super.execute(batch, result);
            } finally {
                inside.decrementAndGet();
            }
        }

        @Override
        public boolean ordersOperationsOnAKey() {
            return orders;
        }
    }

    /** The GPU's side: {@link #prepare} waits for the test's word (or fails), {@link #build} checks that no host call runs. */
    private static final class FakeStart implements HostFirstEngine.GpuStart {
        final CountDownLatch go = new CountDownLatch(1);
        final PoolTable pool;
        final Counting host;
        final boolean orders;
        final RuntimeException failure;
        final Durability durability;
        volatile Counting gpu;
        final AtomicInteger builds = new AtomicInteger();
        final AtomicInteger releases = new AtomicInteger();
        volatile int insideAtBuild = -1;

        FakeStart(PoolTable pool, Durability durability, Counting host, boolean orders, RuntimeException failure) {
            this.pool = pool;
            this.durability = durability;
            this.host = host;
            this.orders = orders;
            this.failure = failure;
        }

        @Override
        public void prepare() {
            try {
                go.await();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
            if (failure != null) {
                throw failure;
            }
        }

        @Override
        public Engine build() {
            builds.incrementAndGet();
            insideAtBuild = host.inside.get();
            gpu = new Counting(CpuEngine.over(pool, durability), orders);
            return gpu;
        }

        @Override
        public void release() {
            releases.incrementAndGet();
        }
    }

    private record Opened(HostFirstEngine engine, FakeStart start, GPHashConfig config) {
    }

    private Opened open(String name, boolean promise, boolean gpuOrders, RuntimeException failure) {
        GPHashConfig config = config(name);
        PoolTable pool = PoolTable.create(config, null);
        Counting host = new Counting(CpuEngine.over(pool, config.durability()), true);
        FakeStart start = new FakeStart(pool, config.durability(), host, gpuOrders, failure);
        return new Opened(HostFirstEngine.start(pool, host, start, promise, true), start, config);
    }

    private static MemorySegment key(long k) {
        MemorySegment s = Arena.ofAuto().allocate(8);
        s.set(ValueLayout.JAVA_LONG_UNALIGNED, 0, k);
        return s;
    }

    private static MemorySegment value(long v) {
        MemorySegment s = Arena.ofAuto().allocate(VS);
        s.set(ValueLayout.JAVA_LONG_UNALIGNED, 0, v);
        s.set(ValueLayout.JAVA_LONG_UNALIGNED, 8, ~v);
        return s;
    }

    private static byte[] bytes(long v) {
        return value(v).toArray(ValueLayout.JAVA_BYTE);
    }

    private static void awaitHandOver(HostFirstEngine e) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!e.handedOver()) {
            assertTrue(System.nanoTime() < deadline, "the hand-over did not happen");
            Thread.sleep(1);
        }
    }

    @Test
    void callsRunOnTheHostUntilTheHandOverThenOnTheGpuEngine() throws Exception {
        Opened o = open("first.pool", true, true, null);
        HostFirstEngine e = o.engine();
        for (long k = 0; k < 100; k++) {
            assertEquals(Outcome.INSERTED, e.put(key(k), value(k * 3)));
        }
        MemorySegment out = Arena.ofAuto().allocate(VS);
        assertEquals(Outcome.FOUND, e.get(key(7), out));
        assertFalse(e.handedOver());
        assertTrue(e.runsBatchInPlace(Batch.create(8, VS, 1)), "every batch runs on the calling thread before the hand-over");
        assertTrue(o.start().host.calls.get() >= 101, "the calls ran on the host");
        o.start().go.countDown();
        awaitHandOver(e);
        assertEquals(0, o.start().insideAtBuild, "no call ran on the host while the GPU's engine was built");
        int hostCalls = o.start().host.calls.get();
        for (long k = 0; k < 100; k++) {
            assertEquals(Outcome.FOUND, e.get(key(k), out));
            assertArrayEquals(bytes(k * 3), out.toArray(ValueLayout.JAVA_BYTE));
        }
        assertEquals(hostCalls, o.start().host.calls.get(), "nothing reaches the host's engine after the hand-over");
        assertEquals(102, o.start().gpu.calls.get(), "the callers' 100 gets and the hand-over's two, which warm the path");
        assertTrue(e.handOverNanos() > 0);
        e.close();
        assertEquals(0, o.start().releases.get(), "an engine was built: nothing of the GPU's side is left to release");
        assertThrows(IndexClosedException.class, () -> e.get(key(1), out));
    }

    @Test
    void writesFromManyThreadsAcrossTheHandOverAreAllKept() throws Exception {
        Opened o = open("threads.pool", true, true, null);
        HostFirstEngine e = o.engine();
        int threads = 4;
        int perThread = 3000;
        List<Thread> workers = new ArrayList<>();
        List<Throwable> failures = new CopyOnWriteArrayList<>();
        CountDownLatch started = new CountDownLatch(threads);
        for (int t = 0; t < threads; t++) {
            long base = (long) t * perThread;
            workers.add(Thread.ofPlatform().start(() -> {
                try {
                    started.countDown();
                    for (int i = 0; i < perThread; i += 10) {
                        for (int j = i; j < i + 5; j++) {
                            assertEquals(Outcome.INSERTED, e.put(key(base + j), value(base + j)));
                        }
                        Batch b = Batch.create(8, VS, 5);
                        for (int j = i + 5; j < i + 10; j++) {
                            b.put(base + j, bytes(base + j));
                        }
                        BatchResult r = new BatchResult(VS, 5);
                        e.execute(b, r);
                        for (int j = 0; j < 5; j++) {
                            assertEquals(Outcome.INSERTED, r.outcome(j));
                        }
                    }
                } catch (Throwable x) {
                    failures.add(x);
                }
            }));
        }
        started.await();
        Thread.sleep(5);
        o.start().go.countDown();
        for (Thread w : workers) {
            w.join();
        }
        assertEquals(List.of(), failures);
        awaitHandOver(e);
        assertEquals(0, o.start().insideAtBuild, "no call ran on the host while the GPU's engine was built");
        MemorySegment out = Arena.ofAuto().allocate(VS);
        for (long k = 0; k < (long) threads * perThread; k++) {
            assertEquals(Outcome.FOUND, e.get(key(k), out), "key " + k);
            assertArrayEquals(bytes(k), out.toArray(ValueLayout.JAVA_BYTE), "key " + k);
        }
        e.close();
        try (CpuEngine reopened = CpuEngine.open(o.config())) {
            assertTrue(reopened.lastRecovery().fromCloseRecord(), "closed cleanly: " + reopened.lastRecovery());
            assertEquals((long) threads * perThread, reopened.stats().size());
        }
    }

    @Test
    void aGpuThatFailsToStartFailsLaterCallsAndLeavesWhatWasAcknowledged() throws Exception {
        BackendUnavailableException why = new BackendUnavailableException("no context for you");
        Opened o = open("fails.pool", true, true, why);
        HostFirstEngine e = o.engine();
        for (long k = 0; k < 50; k++) {
            e.put(key(k), value(k));
        }
        o.start().go.countDown();
        IllegalStateException thrown = null;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (thrown == null && System.nanoTime() < deadline) {
            try {
                e.put(key(1000), value(1000));
                Thread.sleep(1);
            } catch (IllegalStateException x) {
                thrown = x;
            }
        }
        assertTrue(thrown != null, "calls fail once the GPU failed to start");
        assertSame(why, thrown.getCause());
        assertTrue(thrown.getMessage().contains("CPU backend"), thrown.getMessage());
        assertThrows(IllegalStateException.class, e::stats, "the GPU engine's figures never come");
        assertEquals(0, o.start().builds.get());
        e.close();
        assertEquals(1, o.start().releases.get(), "what prepare made is released by the close");
        try (CpuEngine reopened = CpuEngine.open(o.config())) {
            assertTrue(reopened.lastRecovery().fromCloseRecord(), "closed cleanly: " + reopened.lastRecovery());
            MemorySegment out = Arena.ofAuto().allocate(VS);
            for (long k = 0; k < 50; k++) {
                assertEquals(Outcome.FOUND, reopened.get(key(k), out), "key " + k);
            }
        }
    }

    @Test
    void aCloseBeforeTheHandOverReleasesTheGpuSideAndClosesThePool() throws Exception {
        Opened o = open("close.pool", true, true, null);
        HostFirstEngine e = o.engine();
        e.put(key(1), value(1));
        Thread closer = Thread.ofPlatform().start(e::close);
        Thread.sleep(20);
        assertTrue(closer.isAlive(), "the close waits for the GPU's start, which cannot be interrupted");
        o.start().go.countDown();
        closer.join(30_000);
        assertFalse(closer.isAlive());
        assertEquals(0, o.start().builds.get(), "no GPU engine is built for a closed pool");
        assertEquals(1, o.start().releases.get());
        assertFalse(e.handedOver());
        assertThrows(IndexClosedException.class, () -> e.put(key(2), value(2)));
        try (CpuEngine reopened = CpuEngine.open(o.config())) {
            assertTrue(reopened.lastRecovery().fromCloseRecord(), "closed cleanly: " + reopened.lastRecovery());
            assertEquals(1, reopened.stats().size());
        }
    }

    @Test
    void theOrderPromisedAtOpenIsKeptWhereTheGpuEngineDoesNotMakeIt() throws Exception {
        Opened o = open("order.pool", true, false, null);
        HostFirstEngine e = o.engine();
        assertTrue(e.ordersOperationsOnAKey());
        o.start().go.countDown();
        awaitHandOver(e);
        assertTrue(e.ordersOperationsOnAKey(), "the answer given at open holds for the engine's life");
        Batch b = Batch.create(8, VS, 5).put(1, bytes(10)).put(2, bytes(20)).get(1).put(1, bytes(11)).get(1);
        BatchResult r = new BatchResult(VS, 5);
        e.execute(b, r);
        assertEquals(List.of(2, 1, 1, 1), o.start().gpu.batchSizes, "runs in which no key repeats, in batch order");
        assertEquals(Outcome.FOUND, r.outcome(2));
        assertArrayEquals(bytes(10), r.value(2));
        assertEquals(Outcome.UPDATED, r.outcome(3));
        assertArrayEquals(bytes(11), r.value(4));
        Batch distinct = Batch.create(8, VS, 3).put(5, bytes(5)).put(6, bytes(6)).get(7);
        e.execute(distinct, new BatchResult(VS, 3));
        assertEquals(3, o.start().gpu.batchSizes.get(4), "a batch of distinct keys runs whole");
        assertFalse(e.executeInPlace(b, r, MemorySegment.NULL, 0), "parts run through execute, which keeps the order");
        e.close();
    }
}
