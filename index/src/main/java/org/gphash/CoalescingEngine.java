package org.gphash;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

import org.gphash.format.Geometry;
import org.gphash.spi.Engine;
import org.gphash.spi.SubmittedBatch;

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
 * <p>Gets run at once where they can: a synchronous get that misses the host cache first asks the
 * engine to run it alongside other threads' calls ({@link Engine#getAlongside}: the GPU engine reads
 * the mapped pool on the calling thread between its batches), and is queued only when the engine
 * cannot.
 * A thread whose own asynchronous operations are still queued queues its gets behind them, so that
 * they see its writes.
 */
final class CoalescingEngine extends ForwardingEngine {

    /** One queued operation and where its result goes. */
    static final class Request extends CompletableFuture<Outcome> {
        final OpKind kind;
        final MemorySegment key;
        /** A write's key as the host cache knows it (null without a cache). */
        HostReadCache.KeyBytes cacheKey;
        /** A get that missed the host cache: its key there, and the stripe it noted (null: none). */
        HostReadCache.KeyBytes missedKey;
        long missedStamp;
        final MemorySegment value;
        /** Where a GET's value is copied (null: into {@link #valueOut}, a fresh array). */
        final MemorySegment out;
        byte[] valueOut;

        /** A caller's whole batch, merged with others into one engine batch (null: a single operation). */
        final Batch batch;
        final BatchResult batchResult;

        Request(OpKind kind, MemorySegment key, MemorySegment value, MemorySegment out) {
            this.kind = kind;
            this.key = key;
            this.value = value;
            this.out = out;
            this.batch = null;
            this.batchResult = null;
        }

        Request(Batch batch, BatchResult result) {
            this.kind = null;
            this.key = null;
            this.value = null;
            this.out = null;
            this.batch = batch;
            this.batchResult = result;
        }

        int operations() {
            return batch == null ? 1 : batch.size();
        }
    }

    private static final Request POISON = new Request(OpKind.GET, null, null, null);

    private final Coalescing config;
    private final int keySize;
    private final int valueSize;
    private final LinkedBlockingQueue<Request> queue = new LinkedBlockingQueue<>();
    private final Thread dispatcher;
    private final LongAdder batches = new LongAdder();
    private final LongAdder operations = new LongAdder();
    private volatile boolean closed;
    private final long spinNanos;
    /**
     * Whether the engine applies a batch's operations on one key in batch order. If not (the GPU
     * engine without its index mirror), a batch ends before a request whose key it holds already, so
     * that one caller's operations on a key never share a batch.
     */
    private final boolean orderedPerKey;
    /** A request the last batch could not take (see {@link #fits}): the first of the next one. Dispatcher only. */
    private Request carried;
    /** The batch being gathered: its requests, their operations and (behind an engine that does not order per key) their keys. Dispatcher only. */
    private final List<Request> taken = new ArrayList<>();
    private int takenOps;
    private final java.util.Set<HostReadCache.KeyBytes> takenKeys;
    private final java.util.concurrent.atomic.AtomicInteger spinners = new java.util.concurrent.atomic.AtomicInteger();
    /** Hot keys' values on the host, or null. */
    private final HostReadCache hostCache;
    /**
     * Batches of more operations than this that write take the host cache's bulk invalidation
     * ({@link HostReadCache#writtenAll}) instead of one per written key: beyond a few thousand keys a
     * batch would evict most of what a skewed workload keeps hot anyway.
     */
    static final int WRITTEN_ONE_BY_ONE_MAX = 4096;
    /** Each thread's last queued request: its gets may skip the queue only once that one is done. */
    private final ThreadLocal<Request> lastQueued = new ThreadLocal<>();
    private final LongAdder getsRunAtOnce = new LongAdder();

    /** The pool, for {@link IndexClosedException}. */
    private final java.nio.file.Path pool;

    CoalescingEngine(Engine engine, Coalescing config) {
        this(engine, config, java.nio.file.Path.of("(pool)"));
    }

    CoalescingEngine(Engine engine, Coalescing config, java.nio.file.Path pool) {
        super(engine);
        this.pool = pool;
        long cacheBytes = config.effectiveHostCacheBytes();
        this.hostCache = cacheBytes > 0 ? new HostReadCache(cacheBytes) : null;
        this.config = config;
        this.spinNanos = config.spin().toNanos();
        this.orderedPerKey = engine.ordersOperationsOnAKey();
        this.takenKeys = orderedPerKey ? null : new java.util.HashSet<>();
        Geometry g = engine.geometry();
        this.keySize = g.keySize();
        this.valueSize = g.valueSize();
        this.dispatcher = Thread.ofPlatform().daemon().name("gphash-coalescer").unstarted(this::dispatch);
        dispatcher.start();
    }

    /** What the coalescer did so far. */
    record Stats(long batches, long operations, long hostCacheHits, long hostCacheMisses, long getsRunAtOnce) {
    }

    Stats coalescerStats() {
        return new Stats(batches.sum(), operations.sum(), hostCache == null ? 0 : hostCache.hits(),
                hostCache == null ? 0 : hostCache.misses(), getsRunAtOnce.sum());
    }

    /** Queues an operation; the future completes when its batch has run. Key and value are copied now. */
    Request submit(OpKind kind, MemorySegment key, MemorySegment value, MemorySegment out) {
        if (closed) {
            throw new IndexClosedException(pool);
        }
        byte[] keyBytes = key.toArray(ValueLayout.JAVA_BYTE);
        MemorySegment v = kind.hasValue() ? MemorySegment.ofArray(value.toArray(ValueLayout.JAVA_BYTE)) : null;
        Request r = new Request(kind, MemorySegment.ofArray(keyBytes), v, out);
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
    Request submitGet(MemorySegment key, MemorySegment out) {
        Request r = lookUp(key, out);
        return r.isDone() ? r : enqueue(r);
    }

    /**
     * A get's request: completed from the host cache when it holds the key, else not yet queued
     * (with the key's stripe noted, so that {@link #afterGet} may cache what is read).
     */
    private Request lookUp(MemorySegment key, MemorySegment out) {
        if (closed) {
            throw new IndexClosedException(pool);
        }
        byte[] keyBytes = key.toArray(ValueLayout.JAVA_BYTE);
        Request r = new Request(OpKind.GET, MemorySegment.ofArray(keyBytes), null, out);
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
     * Runs a get that missed the host cache at once, through {@link Engine#getAlongside}, unless
     * this thread has queued operations not yet done; null when it did not run.
     */
    private Outcome runAtOnce(Request r) {
        Request last = lastQueued.get();
        if (last != null && !last.isDone()) {
            return null;
        }
        MemorySegment out = r.out;
        if (out == null) {
            r.valueOut = new byte[valueSize];
            out = MemorySegment.ofArray(r.valueOut);
        }
        Outcome o = engine.getAlongside(r.key, out);
        if (o == null) {
            r.valueOut = null;
            return null;
        }
        getsRunAtOnce.increment();
        return o;
    }

    /** Offers what a get that missed the host cache read (its caller's copy, taken after the batch). */
    void afterGet(Request r, Outcome o) {
        if (r.missedKey != null && o == Outcome.FOUND) {
            byte[] v = r.out != null ? r.out.asSlice(0, valueSize).toArray(ValueLayout.JAVA_BYTE) : r.valueOut.clone();
            hostCache.offer(r.missedKey, r.missedStamp, v);
        }
    }

    private Request enqueue(Request r) {
        lastQueued.set(r);
        queue.add(r);
        if (closed) {
            // close() may have drained the queue before this request arrived.
            r.completeExceptionally(new IndexClosedException(pool));
        }
        return r;
    }

    private Outcome await(Request r) {
        spinUntilDone(r);
        try {
            return r.join();
        } catch (java.util.concurrent.CompletionException e) {
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
    private void spinUntilDone(Request r) {
        if (spinNanos == 0 || r.isDone() || spinners.get() >= SPINNERS_MAX) {
            return;
        }
        spinners.incrementAndGet();
        try {
            long deadline = System.nanoTime() + spinNanos;
            while (!r.isDone() && System.nanoTime() - deadline < 0) {
                Thread.onSpinWait();
            }
        } finally {
            spinners.decrementAndGet();
        }
    }

    /** Callers spinning at once, at most: half the cores, leaving the rest to the dispatcher and the engine. */
    private static final int SPINNERS_MAX = Math.max(1, Runtime.getRuntime().availableProcessors() / 2);

    /** The next request: polled for up to the spin time (no wake-up to pay when one comes soon), then waited for. */
    private Request next() throws InterruptedException {
        if (spinNanos > 0) {
            long deadline = System.nanoTime() + spinNanos;
            do {
                Request r = queue.poll();
                if (r != null) {
                    return r;
                }
                Thread.onSpinWait();
            } while (System.nanoTime() - deadline < 0);
        }
        return queue.take();
    }

    /** The adaptive wait's ceiling. */
    private static final long MAX_ADAPTIVE_WAIT_NANOS = 200_000;

    /** A batch the dispatcher submitted: its requests, its engine batch and result, the engine's handle. */
    private static final class InFlight {
        final Batch batch;
        final BatchResult result;
        Request[] requests;
        SubmittedBatch submitted;
        /** What the engine threw for this batch (a RuntimeException or an Error), or null. */
        Throwable failure;

        InFlight(Batch batch, BatchResult result) {
            this.batch = batch;
            this.result = result;
        }
    }

    private void dispatch() {
        int inFlight = config.batchesInFlight();
        InFlight[] slots = new InFlight[inFlight];
        for (int i = 0; i < slots.length; i++) {
            slots[i] = new InFlight(Batch.create(keySize, valueSize, 1024), new BatchResult(valueSize, 1024));
        }
        int slot = 0;
        InFlight pending = null;  // submitted, callers not yet completed (only with two in flight)
        long lingerNanos = config.linger().toNanos();
        int max = Math.min(config.maxBatch(), Batch.maxOperations(keySize, valueSize));
        long lastRunNanos = 0;
        int lastSize = 0;
        for (;;) {
            taken.clear();
            takenOps = 0;
            if (takenKeys != null) {
                takenKeys.clear();
            }
            try {
                Request first = carried != null ? carried : pending != null ? queue.poll() : next();
                carried = null;
                if (first == null) {
                    // Nothing came while the last batch ran: complete it, whose callers will be back.
                    finish(pending);
                    pending = null;
                    continue;
                }
                if (first == POISON) {
                    finish(pending);
                    return;
                }
                take(first);
                drainUpTo(max);
                // A fixed linger gathers until the batch is full; the adaptive wait until as many as
                // last time have come back (the callers that batch woke), for a quarter of its run time.
                // With a batch in flight there is no waiting: its callers are not back yet.
                long wait = pending != null ? 0 : lingerNanos > 0 ? lingerNanos
                        : config.adaptive() ? Math.min(MAX_ADAPTIVE_WAIT_NANOS, lastRunNanos / 4) : 0;
                int want = lingerNanos > 0 ? max : Math.min(max, lastSize);
                if (wait > 0 && taken.size() < want && !taken.contains(POISON)) {
                    long deadline = System.nanoTime() + wait;
                    long left;
                    while (taken.size() < want && (left = deadline - System.nanoTime()) > 0) {
                        Request r = queue.poll(left, TimeUnit.NANOSECONDS);
                        if (r == null) {
                            break;
                        }
                        if (!fits(r, max)) {
                            carried = r;  // first of the next batch
                            break;
                        }
                        take(r);
                        if (r == POISON) {
                            break;
                        }
                        drainUpTo(max);
                    }
                }
            } catch (InterruptedException e) {
                finish(pending);
                return;
            }
            boolean stop = taken.remove(POISON);
            long start = System.nanoTime();
            InFlight current = slots[slot];
            slot = (slot + 1) % slots.length;
            submit(taken, current);
            // Batches complete in the order they were submitted, so an asynchronous caller's results
            // come in the order it issued its operations.
            finish(pending);
            pending = null;
            if (current.submitted == SubmittedBatch.DONE || current.requests == null) {
                finish(current);
            } else {
                pending = current;
            }
            lastRunNanos = System.nanoTime() - start;
            lastSize = taken.size();
            if (stop) {
                finish(pending);
                return;
            }
        }
    }

    /**
     * Whether {@code r} may join the batch being gathered: within {@code max} operations and, behind
     * an engine that does not order a batch per key (see {@link #orderedPerKey}), on keys the batch
     * does not hold yet.
     */
    private boolean fits(Request r, int max) {
        if (r == POISON) {
            return true;
        }
        if (takenOps + r.operations() > max) {
            return false;
        }
        if (takenKeys != null) {
            for (int i = 0; i < r.operations(); i++) {
                if (takenKeys.contains(keyOf(r, i))) {
                    return false;
                }
            }
        }
        return true;
    }

    /** Adds {@code r} to the batch being gathered. */
    private void take(Request r) {
        taken.add(r);
        if (r == POISON) {
            return;
        }
        takenOps += r.operations();
        if (takenKeys != null) {
            for (int i = 0; i < r.operations(); i++) {
                takenKeys.add(keyOf(r, i));
            }
        }
    }

    /** Key {@code i} of a request (0 for a single operation). */
    private static HostReadCache.KeyBytes keyOf(Request r, int i) {
        return new HostReadCache.KeyBytes(r.batch == null ? r.key.toArray(ValueLayout.JAVA_BYTE) : r.batch.key(i));
    }

    /**
     * Moves waiting requests into the batch while they fit (a request that does not stays first in
     * line for the next batch).
     */
    private void drainUpTo(int max) {
        Request next;
        while ((next = queue.peek()) != null && fits(next, max)) {
            if (queue.poll() != next) {
                break;  // single consumer: cannot happen, but never lose a request
            }
            take(next);
            if (next == POISON) {
                return;
            }
        }
    }

    /** Builds the engine batch of {@code taken} in {@code f} and submits it (requests null: nothing taken). */
    private void submit(List<Request> taken, InFlight f) {
        f.requests = null;
        f.submitted = null;
        f.failure = null;
        if (taken.isEmpty()) {
            return;
        }
        f.requests = taken.toArray(new Request[0]);
        Batch batch = f.batch;
        batch.clear();
        for (Request r : f.requests) {
            if (r.batch != null) {
                batch.addAll(r.batch);
            } else {
                batch.add(r.kind, r.key, r.value);
            }
        }
        try {
            f.result.reset(batch.size());
            if (config.batchesInFlight() == 1) {
                engine.execute(batch, f.result);  // awaited at once anyway: no handle to make
                f.submitted = SubmittedBatch.DONE;
            } else {
                f.submitted = engine.submit(batch, f.result);
            }
        } catch (RuntimeException | Error e) {
            f.failure = e;
        }
    }

    /** Waits for a submitted batch (null: none) and hands each of its callers its outcome and value. */
    private void finish(InFlight f) {
        if (f == null || f.requests == null) {
            return;
        }
        Request[] taken = f.requests;
        f.requests = null;
        if (f.failure == null) {
            try {
                f.submitted.await();
            } catch (RuntimeException | Error e) {
                f.failure = e;
            }
        }
        if (f.failure != null) {
            for (Request r : taken) {
                r.completeExceptionally(f.failure);
            }
            return;
        }
        BatchResult result = f.result;
        batches.increment();
        operations.add(f.batch.size());
        MemorySegment values = result.values();
        MemorySegment codes = result.outcomeCodes();
        Request[] done = taken;
        Outcome[] outcomes = new Outcome[done.length];
        int at = 0;
        for (int j = 0; j < done.length; j++) {
            Request r = taken[j];
            int i = at;
            at += r.operations();
            if (r.batch != null) {
                // A merged caller batch: its outcomes and values, in its own numbering.
                int n = r.batch.size();
                r.batchResult.reset(n);
                MemorySegment.copy(codes, i, r.batchResult.outcomeCodes(), 0, n);
                MemorySegment.copy(values, (long) i * valueSize, r.batchResult.values(), 0, (long) n * valueSize);
                outcomes[j] = Outcome.FOUND;  // unused: the caller reads its BatchResult
                continue;
            }
            Outcome o = result.outcome(i);
            if (r.kind == OpKind.GET && o == Outcome.FOUND) {
                if (r.out != null) {
                    MemorySegment.copy(values, (long) i * valueSize, r.out, 0, valueSize);
                } else {
                    r.valueOut = values.asSlice((long) i * valueSize, valueSize).toArray(ValueLayout.JAVA_BYTE);
                }
            }
            if (r.cacheKey != null) {
                hostCache.written(r.cacheKey);  // the write has run: nothing read before it may stay cached
            }
            outcomes[j] = o;
        }
        complete(done, outcomes);
    }

    /**
     * Wakes the callers. Waking a parked thread costs the waker microseconds, and a batch may hold
     * thousands of callers: beyond a few, chunks are woken by pool threads while the dispatcher goes
     * on to the next batch (results are all in place already; each caller's own order is unaffected,
     * since a caller has at most one synchronous operation waiting, and async ones were queued in order
     * into this batch or an earlier one).
     */
    private static void complete(Request[] done, Outcome[] outcomes) {
        int n = done.length;
        if (n <= COMPLETE_INLINE) {
            for (int i = 0; i < n; i++) {
                done[i].complete(outcomes[i]);
            }
            return;
        }
        for (int from = 0; from < n; from += COMPLETE_CHUNK) {
            int start = from;
            int end = Math.min(n, from + COMPLETE_CHUNK);
            java.util.concurrent.ForkJoinPool.commonPool().execute(() -> {
                for (int i = start; i < end; i++) {
                    done[i].complete(outcomes[i]);
                }
            });
        }
    }

    private static final int COMPLETE_INLINE = 8;
    private static final int COMPLETE_CHUNK = 16;

    // ------------------------------------------------------------------ Engine

    @Override
    public Outcome get(MemorySegment key, MemorySegment valueOut) {
        Request r = lookUp(key, valueOut);
        if (r.isDone()) {
            return r.join();  // a host cache hit
        }
        Outcome o = runAtOnce(r);
        if (o == null) {
            o = await(enqueue(r));
        }
        afterGet(r, o);
        return o;
    }

    /** A get for the asynchronous API: the value, or null when absent. */
    CompletableFuture<byte[]> getAsync(MemorySegment key) {
        Request r = submitGet(key, null);
        return r.thenApply(o -> {
            afterGet(r, o);
            return o == Outcome.FOUND ? r.valueOut : null;
        });
    }

    @Override
    public Outcome put(MemorySegment key, MemorySegment value) {
        return await(submit(OpKind.PUT, key, value, null));
    }

    @Override
    public Outcome insert(MemorySegment key, MemorySegment value) {
        return await(submit(OpKind.INSERT, key, value, null));
    }

    @Override
    public Outcome update(MemorySegment key, MemorySegment value) {
        return await(submit(OpKind.UPDATE, key, value, null));
    }

    @Override
    public Outcome delete(MemorySegment key) {
        return await(submit(OpKind.DELETE, key, null, null));
    }

    @Override
    public Outcome compareAndSet(MemorySegment key, MemorySegment expected, MemorySegment value) {
        return direct(key, () -> engine.compareAndSet(key, expected, value));
    }

    @Override
    public Outcome compareAndDelete(MemorySegment key, MemorySegment expected) {
        return direct(key, () -> engine.compareAndDelete(key, expected));
    }

    /**
     * A conditional write, run on the engine at once (its compare and its write are one step there):
     * after this thread's queued operations, and with the key's cached value dropped before and after.
     */
    private Outcome direct(MemorySegment key, java.util.function.Supplier<Outcome> write) {
        if (closed) {
            throw new IndexClosedException(pool);
        }
        Request last = lastQueued.get();
        if (last != null && !last.isDone()) {
            spinUntilDone(last);
            try {
                last.join();
            } catch (java.util.concurrent.CompletionException | java.util.concurrent.CancellationException ignored) {
                // that operation's caller hears of its failure through its own future
            }
        }
        HostReadCache.KeyBytes k = hostCache == null ? null : new HostReadCache.KeyBytes(key.toArray(ValueLayout.JAVA_BYTE));
        if (k != null) {
            hostCache.written(k);
        }
        try {
            return write.get();
        } finally {
            if (k != null) {
                hostCache.written(k);
            }
        }
    }

    /**
     * A caller's batch: merged with the other waiting calls and batches into one engine batch when it
     * holds at most half of {@code maxBatch} (several client threads with batches of thousands then
     * share one GPU round trip; a batch's operations stay together and in order, and batches of
     * different callers were concurrent, so any order between them is one they could have had), else
     * run directly ({@link #mergesUpTo}).
     */
    @Override
    public void execute(Batch batch, BatchResult result) {
        HostReadCache.KeyBytes[] written = null;
        // A batch of gets writes nothing the host cache holds: no per-operation work for it (a GPU
        // batch of 2^18 gets spent 3-5 ms here reading its kinds one by one, H200, issue 25). A large
        // batch that writes kills every entry at once, before and after it runs (HostReadCache.writtenAll).
        boolean writes = hostCache != null && !batch.onlyGets();
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
            if (batch.size() == 0 || batch.size() > mergesUpTo() || closed) {
                engine.execute(batch, result);
            } else {
                await(enqueue(new Request(batch, result)));
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
     * The largest caller's batch merged with others: half an engine batch. A larger one could share
     * its engine batch with little, and through the dispatcher it waits its turn and is copied in and
     * out; run directly, it is pinned and run by its own thread (H200, 16 threads' batches of 2^16,
     * YCSB-C on the GPU engine: 16.4 Mops/s merged, 78.6 direct).
     */
    private int mergesUpTo() {
        return Math.min(config.maxBatch(), Batch.maxOperations(keySize, valueSize)) / 2;
    }

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
        queue.add(POISON);
        try {
            dispatcher.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        List<Request> left = new ArrayList<>();
        queue.drainTo(left);
        for (Request r : left) {
            r.completeExceptionally(new IndexClosedException(pool));
        }
    }
}
