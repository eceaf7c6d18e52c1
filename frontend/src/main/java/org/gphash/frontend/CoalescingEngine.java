package org.gphash.frontend;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.Coalescing;
import org.gphash.Geometry;
import org.gphash.IndexClosedException;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.spi.Engine;
import org.gphash.spi.ForwardingEngine;
import org.gphash.spi.IdleStrategy;
import org.gphash.spi.SegmentBytes;

/**
 * An engine whose single-key operations are merged into batches of the engine behind it (see
 * {@link Coalescing}). Callers enqueue requests; one dispatcher thread takes whatever is waiting (up
 * to the batch limit, after the linger if one is set), runs it as one batch, and hands each caller
 * its outcome and value. Batches, scans, snapshots and everything else go straight to the engine:
 * the engine orders them with the dispatcher's batches as it orders any two callers.
 *
 * <p>Order per caller: a synchronous caller waits for its operation before it issues the next; an
 * asynchronous caller's operations are queued in the order it issued them, and the dispatcher
 * takes them in queue order into batches that run in order. With two batches in flight
 * ({@link Coalescing#batchesInFlight}) the dispatcher submits the next batch ({@link Engine#submit})
 * before it completes the last one's callers; the engine runs submitted batches in order, and the
 * dispatcher completes them in order.
 *
 * <p>Gets run at once where they can: a synchronous get that misses the host cache asks the engine
 * to run it alongside other threads' calls ({@link Engine#getAlongside}: the GPU engine reads the
 * mapped pool on the calling thread between its batches), and is queued only when the engine cannot.
 * While no write came through the coalescer for {@link #WRITES_LATELY_NANOS} (so no batch is likely
 * to hold the pool), a get skips the cache and asks the engine first: a read of the pool costs about
 * what the cache's lookup does, and a miss's insert into the cache more (a profile of YCSB's client,
 * workload C from 16 threads, put ten times as many samples in the cache as in the pool's probe).
 * With writes about, the cache answers the reads that would otherwise wait for a batch.
 * A thread whose own asynchronous operations are still queued queues its gets behind them, so that
 * they see its writes.
 *
 * <p>Over an engine whose values have any length ({@link Engine#valueLengths}: a format 3 pool on the
 * CPU engine) the coalescer passes each value's length through: its batches carry them, a get's
 * result keeps its own, and it keeps no host cache (whose entries have the value size).
 *
 * <p>This class is the callers' side: requests, the host cache, waiting, conditional writes and
 * callers' batches. The queue and how a batch is gathered from it are {@link CoalescingQueue}'s, the
 * dispatcher thread {@link CoalescerDispatcher}'s, handing results back {@link CallerCompletions}'.
 */
final class CoalescingEngine extends ForwardingEngine {

    /** Operations in one engine batch, at most: the configured limit, or what a batch of this pool can hold. */
    private final int maxBatch;
    private final int valueSize;
    /** Whether the engine's values have any length: passed through, each value at its own. */
    private final boolean valueLengths;
    private final CoalescingQueue queue;
    private final CoalescerDispatcher dispatcher;
    private final Thread dispatcherThread;
    private volatile boolean closed;
    private final long spinNanos;
    private final AtomicInteger spinners = new AtomicInteger();
    /** Callers' batches that may be merged, in {@link #mergeOrRunAlone} now. */
    private final AtomicInteger batchCallers = new AtomicInteger();
    /** Hot keys' values on the host, or null. */
    private final HostReadCache hostCache;
    /**
     * Whether single calls go straight to the engine ({@link Engine#runsSingleCallsInPlace}: the GPU
     * engine runs them on the host in microseconds, where merged they wait for a dispatcher and a
     * batch); callers' batches bound for the GPU are merged with each other all the same (issue 57:
     * merged, the DLRM replay's batches of writes from 16 threads took a third less time than direct:
     * docs/PERFORMANCE.md, the trace replays of issue 57), those it would run on the host are not, nor
     * is one that comes alone ({@link #execute}, {@link #mergeOrRunAlone}).
     */
    private final boolean singlesInPlace;
    /** When a write last came through ({@link #wrote}, {@link #writesLately}). */
    private volatile long lastWrite = System.nanoTime() - 2 * WRITES_LATELY_NANOS;
    /**
     * Batches of more operations than this that write take the host cache's bulk invalidation
     * ({@link HostReadCache#writtenAll}) instead of one per written key: beyond a few thousand keys a
     * batch would evict most of what a skewed workload keeps hot anyway.
     */
    static final int WRITTEN_ONE_BY_ONE_MAX = 4096;
    /** Each thread's last queued request: its gets may skip the queue only once that one is done. */
    private final ThreadLocal<CoalescedRequest> lastQueued = new ThreadLocal<>();
    private final LongAdder getsRunAtOnce = new LongAdder();

    /** The pool, for {@link IndexClosedException}. */
    private final Path pool;

    CoalescingEngine(Engine engine, Coalescing config) {
        this(engine, config, Path.of("(pool)"));
    }

    CoalescingEngine(Engine engine, Coalescing config, Path pool) {
        super(engine);
        this.pool = pool;
        // AUTO only: ON asks for single calls merged whatever the engine.
        this.singlesInPlace = config.mode() == Coalescing.Mode.AUTO && engine.runsSingleCallsInPlace();
        this.valueLengths = engine.valueLengths();
        long cacheBytes = config.effectiveHostCacheBytes();
        // Single gets that run in place never look in a cache: it would only cost memory. Nor do those
        // of values of any length: the cache's entries have the value size.
        this.hostCache = cacheBytes > 0 && !singlesInPlace && !valueLengths ? new HostReadCache(cacheBytes) : null;
        this.spinNanos = config.spin().toNanos();
        Geometry g = engine.geometry();
        this.valueSize = g.valueSize();
        this.maxBatch = Math.min(config.maxBatch(), Batch.maxOperations(g.keySize(), valueSize));
        this.queue = new CoalescingQueue(config, maxBatch, engine.ordersOperationsOnAKey());
        this.dispatcher = new CoalescerDispatcher(engine, queue, hostCache, config.batchesInFlight());
        this.dispatcherThread = Thread.ofPlatform().daemon().name("gphash-coalescer").unstarted(dispatcher);
        dispatcherThread.start();
    }

    /** What the coalescer did so far. */
    record Stats(long batches, long operations, long hostCacheHits, long hostCacheMisses, long getsRunAtOnce) {
    }

    Stats coalescerStats() {
        return new Stats(dispatcher.batches(), dispatcher.operations(), hostCache == null ? 0 : hostCache.hits(),
                hostCache == null ? 0 : hostCache.misses(), getsRunAtOnce.sum());
    }

    /** Queues an operation; the future completes when its batch has run. Key and value are copied now. */
    CoalescedRequest submit(OpKind kind, MemorySegment key, MemorySegment value, MemorySegment out) {
        if (closed) {
            throw new IndexClosedException(pool);
        }
        byte[] keyBytes = key.toArray(ValueLayout.JAVA_BYTE);
        MemorySegment v = kind.hasValue() ? MemorySegment.ofArray(value.toArray(ValueLayout.JAVA_BYTE)) : null;
        CoalescedRequest r = new CoalescedRequest(kind, MemorySegment.ofArray(keyBytes), v, out);
        if (kind != OpKind.GET) {
            wrote();
        }
        if (hostCache != null && kind != OpKind.GET) {
            r.cacheKey = new HostReadCache.KeyBytes(keyBytes);
            hostCache.written(r.cacheKey);
        }
        return enqueue(r);
    }

    /**
     * A get: answered at once from the host cache when it holds the key, else queued (noting the
     * key's stripe, so that {@link #afterGet} may cache what the batch read).
     */
    CoalescedRequest submitGet(MemorySegment key, MemorySegment out) {
        CoalescedRequest r = lookUp(key, out);
        return r.isDone() ? r : enqueue(r);
    }

    /**
     * A get's request: completed from the host cache when it holds the key, else not yet queued
     * (with the key's stripe noted, so that {@link #afterGet} may cache what is read).
     */
    private CoalescedRequest lookUp(MemorySegment key, MemorySegment out) {
        if (closed) {
            throw new IndexClosedException(pool);
        }
        byte[] keyBytes = key.toArray(ValueLayout.JAVA_BYTE);
        CoalescedRequest r = new CoalescedRequest(OpKind.GET, MemorySegment.ofArray(keyBytes), null, out);
        if (hostCache == null || !hostCache.enabled()) {
            return r;
        }
        HostReadCache.KeyBytes k = new HostReadCache.KeyBytes(keyBytes);
        byte[] hit = hostCache.get(k);
        if (hit != null) {
            if (out != null) {
                MemorySegment.copy(hit, 0, out, ValueLayout.JAVA_BYTE, 0, valueSize);
            } else {
                r.valueOut = hit.clone();
            }
            r.complete(Outcome.FOUND);
            return r;
        }
        r.missedKey = k;
        r.missedStamp = hostCache.stamp(k);
        return r;
    }

    /**
     * Runs a get that missed the host cache at once ({@link #runAtOnce(MemorySegment, MemorySegment)}),
     * its value kept for {@link #afterGet} where the caller wants none; null when it did not run.
     */
    private Outcome runAtOnce(CoalescedRequest r) {
        MemorySegment out = r.out;
        if (out == null) {
            r.valueOut = new byte[valueSize];
            out = MemorySegment.ofArray(r.valueOut);
        }
        Outcome o = runAtOnce(r.key, out);
        if (o == null) {
            r.valueOut = null;
        }
        return o;
    }

    /**
     * Runs a get at once, through {@link Engine#getAlongside}, unless this thread has queued
     * operations not yet done (it must see their writes); null when it did not run.
     */
    private Outcome runAtOnce(MemorySegment key, MemorySegment out) {
        CoalescedRequest last = lastQueued.get();
        if (last != null && !last.isDone()) {
            return null;
        }
        Outcome o = engine.getAlongside(key, out);
        if (o != null) {
            getsRunAtOnce.increment();
        }
        return o;
    }

    /** Offers what a get that missed the host cache read (its caller's copy, taken after the batch). */
    void afterGet(CoalescedRequest r, Outcome o) {
        if (r.missedKey != null && o == Outcome.FOUND) {
            byte[] v = r.out != null ? SegmentBytes.copyOf(r.out, 0, valueSize) : r.valueOut.clone();
            hostCache.offer(r.missedKey, r.missedStamp, v);
        }
    }

    private CoalescedRequest enqueue(CoalescedRequest r) {
        lastQueued.set(r);
        queue.add(r);
        if (closed) {
            // close() may have drained the queue before this request arrived.
            r.completeExceptionally(new IndexClosedException(pool));
        }
        return r;
    }

    private Outcome await(CoalescedRequest r) {
        spinUntilDone(r);
        try {
            return r.join();
        } catch (CompletionException e) {
            Throwable c = e.getCause();
            if (c instanceof RuntimeException re) {
                throw re;
            }
            if (c instanceof Error err) {
                throw err;
            }
            throw e;
        } finally {
            if (lastQueued.get() == r) {
                lastQueued.remove();  // done: nothing of this thread's is queued, and the request (a batch's, perhaps) is not kept
            }
        }
    }

    /**
     * Spins for up to the configured time while {@code r} is not done (Coalescing's {@code spin}), if
     * fewer than half the cores are spinning already; the caller then parks in join as usual.
     */
    private void spinUntilDone(CoalescedRequest r) {
        if (spinNanos == 0 || r.isDone() || spinners.get() >= SPINNERS_MAX) {
            return;
        }
        spinners.incrementAndGet();
        try {
            long deadline = System.nanoTime() + spinNanos;
            for (int round = 0; !r.isDone() && System.nanoTime() - deadline < 0; round++) {
                IdleStrategy.BUSY_SPIN.idle(round);
            }
        } finally {
            spinners.decrementAndGet();
        }
    }

    /** Callers spinning at once, at most: half the cores, leaving the rest to the dispatcher and the engine. */
    private static final int SPINNERS_MAX = Math.max(1, Runtime.getRuntime().availableProcessors() / 2);

    // ------------------------------------------------------------------ Engine

    @Override
    public boolean valueLengths() {
        return valueLengths;
    }

    /**
     * A get that says the value's length: on the engine at once where this thread has nothing queued
     * (its own writes are done; a read of the pool is as fresh as one through a batch), else behind its
     * queued operations. Gets of values of one size go through {@link #get}, its host cache and its
     * reads alongside; so does this where the engine's values all have the value size.
     */
    @Override
    public int read(MemorySegment key, MemorySegment valueOut) {
        if (!valueLengths) {
            return super.read(key, valueOut);   // the engine's default: through get
        }
        if (closed) {
            throw new IndexClosedException(pool);
        }
        CoalescedRequest last = lastQueued.get();
        if (last == null || last.isDone()) {
            return engine.read(key, valueOut);
        }
        CoalescedRequest r = new CoalescedRequest(OpKind.GET, MemorySegment.ofArray(key.toArray(ValueLayout.JAVA_BYTE)),
                null, valueOut);
        return await(enqueue(r)) == Outcome.FOUND ? r.length : -1;
    }

    @Override
    public Outcome get(MemorySegment key, MemorySegment valueOut) {
        if (closed) {
            throw new IndexClosedException(pool);
        }
        if (singlesInPlace) {
            afterOwnQueued();
            return engine.get(key, valueOut);
        }
        boolean triedAtOnce = !writesLately();
        if (triedAtOnce) {
            Outcome o = runAtOnce(key, valueOut);
            if (o != null) {
                return o;  // read on the pool, the cache neither asked nor filled
            }
        }
        CoalescedRequest r = lookUp(key, valueOut);
        if (r.isDone()) {
            return r.join();  // a host cache hit
        }
        Outcome o = triedAtOnce ? null : runAtOnce(r);  // the engine just declined: a batch holds the pool
        if (o == null) {
            o = await(enqueue(r));
        }
        afterGet(r, o);
        return o;
    }

    /**
     * How long after a write through the coalescer gets still look in the host cache first (see the
     * class comment): a few batches' worth, so that a steady trickle of writes keeps the cache in use.
     */
    static final long WRITES_LATELY_NANOS = 10_000_000L;

    /** Whether a write came through the coalescer in the last {@link #WRITES_LATELY_NANOS}. */
    private boolean writesLately() {
        return hostCache != null && System.nanoTime() - lastWrite < WRITES_LATELY_NANOS;
    }

    /** Notes a write; the shared time is written at most every millisecond (every writer reads it). */
    private void wrote() {
        long now = System.nanoTime();
        if (now - lastWrite > 1_000_000L) {
            lastWrite = now;
        }
    }

    /** A get for the asynchronous API: the value, or null when absent. */
    CompletableFuture<byte[]> getAsync(MemorySegment key) {
        CoalescedRequest r = submitGet(key, null);
        return r.thenApply(o -> {
            afterGet(r, o);
            return o == Outcome.FOUND ? r.valueOut : null;
        });
    }

    @Override
    public Outcome put(MemorySegment key, MemorySegment value) {
        return singlesInPlace ? direct(OpKind.PUT, key, value, null) : await(submit(OpKind.PUT, key, value, null));
    }

    @Override
    public Outcome insert(MemorySegment key, MemorySegment value) {
        return singlesInPlace ? direct(OpKind.INSERT, key, value, null) : await(submit(OpKind.INSERT, key, value, null));
    }

    @Override
    public Outcome update(MemorySegment key, MemorySegment value) {
        return singlesInPlace ? direct(OpKind.UPDATE, key, value, null) : await(submit(OpKind.UPDATE, key, value, null));
    }

    @Override
    public Outcome delete(MemorySegment key) {
        return singlesInPlace ? direct(OpKind.DELETE, key, null, null) : await(submit(OpKind.DELETE, key, null, null));
    }

    @Override
    public Outcome compareAndSet(MemorySegment key, MemorySegment expected, MemorySegment value) {
        return direct(OpKind.COMPARE_AND_SET, key, value, expected);
    }

    @Override
    public Outcome compareAndDelete(MemorySegment key, MemorySegment expected) {
        return direct(OpKind.COMPARE_AND_DELETE, key, null, expected);
    }

    /**
     * A write run on the engine at once, after this thread's queued operations and with the key's
     * cached value dropped before and after: a conditional write (its compare and its write are one
     * step there), and every single write where the engine runs single calls in place.
     */
    private Outcome direct(OpKind kind, MemorySegment key, MemorySegment value, MemorySegment expected) {
        if (closed) {
            throw new IndexClosedException(pool);
        }
        afterOwnQueued();
        wrote();
        HostReadCache.KeyBytes k = hostCache == null ? null
                : new HostReadCache.KeyBytes(SegmentBytes.copyOf(key));
        if (k != null) {
            hostCache.written(k);
        }
        try {
            return engine.write(kind, key, value, expected);
        } finally {
            if (k != null) {
                hostCache.written(k);
            }
        }
    }

    /** Waits until this thread's queued operations are done, so that what it runs next sees them. */
    private void afterOwnQueued() {
        CoalescedRequest last = lastQueued.get();
        if (last != null && !last.isDone()) {
            spinUntilDone(last);
            try {
                last.join();
            } catch (CompletionException | CancellationException ignored) {
                // that operation's caller hears of its failure through its own future
            }
        }
    }

    /**
     * A caller's batch: merged with the other waiting calls and batches into one engine batch when it
     * writes and holds at most half of {@code maxBatch} (several client threads with batches of
     * hundreds then share one GPU round trip; a batch's operations stay together and in order, and
     * batches of different callers were concurrent, so any order between them is one they could have
     * had), else run directly, after this thread's queued operations ({@link #mergesUpTo}). A batch of
     * gets always runs directly: the GPU engine runs such batches of several threads side by side, up
     * to 4096 in one launch each, where merged they queue behind one dispatcher for the pipeline
     * (several times faster direct, from 16 threads under bench ycsb). So does a batch the engine
     * would run on the host now ({@link Engine#runsBatchInPlace}): merged, the host's batches of 16
     * threads ran one after another on the dispatcher's thread (bench ycsb's A at batches of 64 from 16
     * threads: 2.8 M ops/s against the CPU backend's 11.0, issue 57). Over such an engine a writing
     * batch is merged only with other callers' batches, never alone ({@link #mergeOrRunAlone}).
     */
    @Override
    public void execute(Batch batch, BatchResult result) {
        HostReadCache.KeyBytes[] written = null;
        boolean gets = batch.onlyGets();
        // A batch of gets writes nothing the host cache holds: no per-operation work for it (reading
        // its kinds one by one here was a large share of a GPU batch of gets, issue 25). A large
        // batch that writes kills every entry at once, before and after it runs (HostReadCache.writtenAll).
        if (!gets) {
            wrote();
        }
        boolean writes = hostCache != null && !gets;
        boolean writesAll = writes && batch.size() > WRITTEN_ONE_BY_ONE_MAX;
        if (writesAll) {
            hostCache.writtenAll();
        } else if (writes) {
            written = new HostReadCache.KeyBytes[batch.size()];
            MemorySegment kinds = batch.kinds();
            for (int i = 0; i < written.length; i++) {
                if (kinds.get(ValueLayout.JAVA_BYTE, i) != GET_ORDINAL) {
                    written[i] = new HostReadCache.KeyBytes(batch.key(i));
                    hostCache.written(written[i]);
                }
            }
        }
        try {
            if (batch.size() == 0 || closed) {
                engine.execute(batch, result);
            } else if (gets || batch.size() > mergesUpTo() || singlesInPlace && engine.runsBatchInPlace(batch)) {
                afterOwnQueued();
                engine.execute(batch, result);
            } else if (singlesInPlace) {
                mergeOrRunAlone(batch, result);
            } else {
                await(enqueue(new CoalescedRequest(batch, result)));
            }
        } finally {
            if (writesAll) {
                hostCache.writtenAll();
            }
            if (written != null) {
                for (HostReadCache.KeyBytes k : written) {
                    if (k != null) {
                        hostCache.written(k);
                    }
                }
            }
        }
    }

    /**
     * A caller's writing batch that may be merged, where the engine runs single calls in place (AUTO
     * over the GPU engine; ON merges every such batch): merged with the other callers' batches that
     * are in here now, or run directly on the caller's thread when it is the only one (nothing to share an
     * engine batch with; through the dispatcher it is only copied in and out: the DLRM replay from one
     * thread ran half as fast again direct, docs/lab/2026-11-30-replays-by-batch-kind.md). Callers that come while one
     * runs alone merge with each other.
     */
    private void mergeOrRunAlone(Batch batch, BatchResult result) {
        boolean alone = batchCallers.getAndIncrement() == 0;
        try {
            if (alone) {
                afterOwnQueued();
                engine.execute(batch, result);
            } else {
                // The engine chooses between its host and the GPU by measured cost: what merging cost
                // this caller is the GPU's cost for its batch.
                long t0 = System.nanoTime();
                await(enqueue(new CoalescedRequest(batch, result)));
                engine.callerWaited(batch.size(), true, System.nanoTime() - t0);
            }
        } finally {
            batchCallers.decrementAndGet();
        }
    }

    /**
     * The largest caller's batch of writes merged with others: {@link #MERGES_UP_TO}, or half an engine
     * batch where that is less (a larger one could share its engine batch with little).
     */
    private int mergesUpTo() {
        return Math.min(maxBatch / 2, MERGES_UP_TO);
    }

    /**
     * The largest caller's batch of writes merged with other callers' ({@link #mergesUpTo}). A larger
     * one gains little from sharing a GPU round trip, and through the dispatcher it waits its turn,
     * runs one engine batch at a time with the others and is copied in and out; run directly, the
     * engine routes it by its own cost (the host, or the GPU with other threads' batches in flight).
     * Bench ycsb's A from 16 threads, merged up to half of the default 65,536: 9.0 and 15.7 M ops/s at
     * batches of 4096 and 16384 (128-byte values), 5.6 at 16384 with values of any length; merged up
     * to 2048, 22.0, 48.1 and 15.2, the load and C no lower (docs/lab/2026-12-02-host-heads-and-merging.md).
     * Smaller batches still merge: the DLRM replay's batches of writes from 16 threads (about 1,500
     * operations each) took a third less time merged than direct. What the bound costs: bursts of
     * larger parts started at once, such as the PageRank replay's 16 parts of 4096 (1.32x
     * ConcurrentHashMap, 1.86x before; docs/lab/2026-12-02-heap-space-from-many-threads.md). Merging
     * larger batches that come close together (a burst by the spacing of their arrivals) was tried and
     * reverted: no spacing told the replay's parts from bench ycsb's steady streams, and the one that
     * took PageRank to 2.17x halved A at 4096 and 16384 (docs/lab/2026-12-02-bursts-of-writing-batches.md).
     */
    static final int MERGES_UP_TO = 2048;

    /**
     * The engine behind the coalescer (for what only it offers, e.g. the GPU engine's device
     * batches). Writes through it would bypass the host cache, which is therefore turned off.
     */
    Engine inner() {
        if (hostCache != null && hostCache.enabled()) {
            hostCache.disable();
        }
        return engine;
    }

    private static final byte GET_ORDINAL = (byte) OpKind.GET.ordinal();

    /** Runs what is queued, stops the dispatcher, then closes the engine. */
    @Override
    public void close() {
        stopDispatcher();
        engine.close();
    }

    @Override
    public void abandon() {
        stopDispatcher();
        engine.abandon();
    }

    private void stopDispatcher() {
        if (closed) {
            return;
        }
        closed = true;
        queue.poison();
        try {
            dispatcherThread.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (CoalescedRequest r : queue.drain()) {
            r.completeExceptionally(new IndexClosedException(pool));
        }
    }
}
