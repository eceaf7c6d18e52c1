package org.gphash.cuda;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Locale;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BooleanSupplier;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.IndexClosedException;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.PoolFullException;
import org.gphash.cuda.cache.BucketCache;
import org.gphash.cuda.path.BucketRefresh;
import org.gphash.cuda.routing.BatchRanges;
import org.gphash.cuda.routing.RouteCosts;
import org.gphash.cuda.staging.HostStageTimes;
import org.gphash.index.CpuOperations;
import org.gphash.index.DirtyBuckets;
import org.gphash.spi.IdleStrategy;
import org.gphash.spi.SubmittedBatch;
import org.gphash.table.PoolLog;

/**
 * The GPU engine's work run on the host: single calls and small batches run by the calling threads
 * on the mapped pool with the CPU engine's code ({@link CpuOperations}), lock-free among themselves,
 * between the engine's GPU work, where a write costs microseconds instead of a GPU round trip.
 *
 * <p><b>Taking turns with the GPU.</b> The host and the GPU never change the pool at once (CPU and GPU
 * atomics on one mapped word are not atomic with each other). Host operations run inside the
 * {@link HostReadGate}, which every lock holder closes before its GPU work; writes run only while the
 * engine has <i>lent</i> the pool to the host ({@link #lend}, under the lock, with nothing in flight on
 * the GPU): the value heap's free space is then the host's (the mirror path keeps it in GPU memory
 * while batches run) and no BktCache load is reading the pool. The GPU takes it back ({@link
 * #takeBack}) at the start of its next work under the lock.
 *
 * <p><b>Coherence.</b> What the GPU keeps of the pool is brought up to date before its next work
 * without a full reload: each host write marks the buckets it may have changed (its key's candidate
 * buckets) in a {@link DirtyBuckets} set, and taking back copies each marked bucket's current state
 * again from the pool into the HBM mirror (slots and tags) and into BktCache where it holds it
 * ({@link BucketRefresh}, a launch per {@link #REFRESH_CHUNK} buckets), then gives the heap's free
 * space back to the GPU (after the blocks host writes retired are reclaimed). A set rather than a log
 * of writes: it never fills, so host writes never stop for a refresh while the GPU is idle, and a hot
 * bucket is copied once however often it was written.
 *
 * <p>A write that needs a resize is the owner's: it changes nothing on the host and is run by the
 * GPU's routes. One that finds the heap short grows it on the host first ({@link #growHeapForHostWrites}).
 */
final class HostOperations {

    /** Buckets refreshed per launch when the GPU takes the pool back. */
    static final int REFRESH_CHUNK = 1 << 18;

    private final GpuEngine engine;
    private final CpuOperations ops;
    private final BucketRefresh refresh;
    /** Where a batch's time on the host goes, for the router's choice ({@link #run}). */
    private final RouteCosts costs;
    private final int keySize;
    private final int valueSize;
    /** Buckets host writes changed since the GPU last took the pool back; sized for the table at each lend. */
    private final DirtyBuckets dirty;
    /** Where a take-back collects marked buckets for one launch (made at the first); under the lock. */
    private long[] refreshList;
    /** Whether host writes may run: set by {@link #lend}, cleared by {@link #takeBack}, both under the lock with the gate closed. */
    private volatile boolean lent;
    /** One thread lends at a time; the others wait for it outside the engine's lock. */
    private final SingleFlight lending;
    private final Runnable lendStep = this::lendUnderLock;
    private final BooleanSupplier lentOrClosed = this::lentOrClosed;
    /** One thread grows the heap for host writes at a time; the others wait for it outside the engine's lock. */
    private final SingleFlight growing;
    private final Runnable growStep = this::growUnderLock;

    /** Whether the heap's free space is the host's now (lent and not yet given back); under the engine's lock. */
    private boolean heapOnHost;

    /** Gets and writes run on the host since open, batches of them, lends of the pool, and buckets refreshed on the GPU after them (for {@link GpuDiagnostics}). */
    final LongAdder reads = new LongAdder();
    final LongAdder writes = new LongAdder();
    final LongAdder batches = new LongAdder();
    final LongAdder lends = new LongAdder();
    final LongAdder refreshedBuckets = new LongAdder();
    /**
     * Heap growths on the host so far, read by a write before it runs: one that then finds the heap
     * short after another thread grew it runs again on the host rather than going to the GPU.
     */
    private volatile long heapGrowthsSeen;
    /** Heap growths host writes asked for ({@link #growHeapForHostWrites}). */
    final LongAdder heapGrowths = new LongAdder();

    HostOperations(GpuEngine engine, BucketRefresh refresh, RouteCosts costs) {
        this.engine = engine;
        this.costs = costs;
        this.lending = new SingleFlight(engine);
        this.growing = new SingleFlight(engine);
        this.ops = CpuOperations.on(engine.pool);
        this.refresh = refresh;
        this.dirty = new DirtyBuckets(ops.bucketCount());
        this.keySize = engine.geometry.keySize();
        this.valueSize = engine.geometry.valueSize();
    }

    /** A get on the host, inside the gate the caller entered (epoch-protected: host writes may run beside it). */
    boolean read(MemorySegment key, MemorySegment out) {
        return readLength(key, out) >= 0;
    }

    /**
     * {@link #read}, giving the value's length, or -1 where the key is absent. A format 3 value shorter
     * than the value size is followed by zeros, as the kernels' reads give it to callers whose values
     * all have the value size.
     */
    int readLength(MemorySegment key, MemorySegment out) {
        reads.increment();
        if (ops.get(key, 0, out, 0) != Outcome.FOUND.code()) {
            return -1;
        }
        int length = ops.lastReadLength();
        if (length < valueSize && out.byteSize() >= valueSize) {
            out.asSlice(length, valueSize - length).fill((byte) 0);
        }
        return length;
    }

    /**
     * A single get on the host, waiting for the GPU's work in progress if there is any (the router's
     * route for a single get while writes run on the host): the key and the value go straight between
     * the caller's segments and the pool, as in the CPU engine, with no batch of one between.
     */
    Outcome get(MemorySegment key, MemorySegment out) {
        return getLength(key, out) >= 0 ? Outcome.FOUND : Outcome.NOT_FOUND;
    }

    /** {@link #get}, giving the value's length ({@link #readLength}), or -1 where the key is absent. */
    int getLength(MemorySegment key, MemorySegment out) {
        HostReadGate gate = engine.hostReaders;
        for (int round = 0;; round++) {
            if (gate.tryEnter()) {
                try {
                    return readLength(key, out);
                } finally {
                    gate.exit();
                }
            }
            awaitGate(round);
        }
    }

    /**
     * One write on the host, waiting for the GPU's work in progress if there is any.
     *
     * @param expected the expected value of a conditional write, else null
     * @return the outcome, or null when the write needs the owner (a resize or heap growth): nothing was done
     */
    Outcome write(OpKind kind, MemorySegment key, MemorySegment value, MemorySegment expected) {
        HostReadGate gate = engine.hostReaders;
        for (int round = 0;; round++) {
            if (!lent) {
                lend();
            }
            long growths = heapGrowthsSeen;
            if (!gate.tryEnter()) {
                awaitGate(round);  // the GPU took it back meanwhile
                continue;
            }
            int code;
            try {
                code = writeInGate(kind, key, 0, value, 0, expected, 0);
            } finally {
                gate.exit();
            }
            if (code == CpuOperations.NEEDS_OWNER) {
                if (growHeapForHostWrites(growths)) {
                    continue;
                }
                return null;
            }
            if (code != NOT_LENT) {
                writes.increment();
                return Outcome.ofCode(code);
            }
        }
    }

    /** The length of a single call's value (or expected value) at {@code offset} of {@code value}: the rest of the segment, at most the value size. */
    private int lengthOf(MemorySegment value, long offset) {
        return value == null ? valueSize : (int) Math.min(valueSize, value.byteSize() - offset);
    }

    /** {@link #writeInGate}'s answer when the pool is not lent now: nothing was done. */
    private static final int NOT_LENT = Integer.MIN_VALUE;

    /**
     * One write, inside the gate: its buckets marked, the outcome's code returned;
     * {@link CpuOperations#NEEDS_OWNER} or {@link #NOT_LENT} having changed nothing.
     *
     * @param third the expected value of a conditional write, where a read-modify-write's previous value goes, else unused
     */
    private int writeInGate(OpKind kind, MemorySegment keys, long ko, MemorySegment values, long vo, MemorySegment third,
                            long to) {
        if (!lent) {
            return NOT_LENT;
        }
        int code = engine.valueLengths()
                ? ops.write(kind, keys, ko, values, vo, lengthOf(values, vo), third, to, lengthOf(third, to))
                : ops.write(kind, keys, ko, values, vo, third, to);
        if (code != CpuOperations.NEEDS_OWNER) {
            ops.markTouched(dirty);
        }
        return code;
    }

    /**
     * A batch on the host (the router's {@link org.gphash.cuda.routing.Router.Route#HOST}): gets one by
     * one (run as the CPU engine runs its batches, they were a third slower warm: YCSB C at batches of
     * 1024 and 4096 from 16 threads, docs/lab/2026-12-02-route-costs-and-the-jit.md), a batch that
     * writes as the CPU engine runs its batches ({@link CpuOperations#run}). Null,
     * having done nothing, when its first write needs a resize. A write that found the heap short grows
     * it here first ({@link #growHeapForHostWrites}); when a later write needs the owner, the operations
     * from it on run as a batch of their own by the engine's routes.
     */
    SubmittedBatch run(Batch batch, BatchResult result) {
        long called = System.nanoTime();
        int n = batch.size();
        result.reset(n);
        boolean onlyGets = batch.onlyGets();
        HostReadGate gate = engine.hostReaders;
        long inGate = 0;
        long gateWait = 0;
        int done = -1;
        long growths = 0;
        for (int round = 0; done < 0; round++) {
            if (!onlyGets && !lent) {
                lend();
            }
            growths = heapGrowthsSeen;
            if (!gate.tryEnter()) {
                long waited = System.nanoTime();
                awaitGate(round);  // a batch of gets waits for the GPU's work as writes do
                gateWait += System.nanoTime() - waited;
                continue;
            }
            long entered = System.nanoTime();
            try {
                // Taken back between the lend and the gate: lend again. Inside the gate it stays lent
                // (a take-back closes the gate and waits for everyone inside first).
                if (onlyGets) {
                    done = runGets(batch, result);
                } else if (lent) {
                    done = ops.run(batch, result, dirty);
                }
            } finally {
                gate.exit();
                inGate += System.nanoTime() - entered;
            }
        }
        int kindSet = onlyGets ? RouteCosts.GETS : 0;
        int gets = done;
        if (!onlyGets && done > 0) {
            long counted = kindsAmong(batch, done);
            kindSet = (int) (counted >>> 32);
            gets = (int) counted;
        }
        if (done > 1) {
            // The time inside the gate only: waiting for the GPU to hand the pool over depends on the GPU's
            // work, not on this batch, and counted here it drove batches to the GPU, which took the pool
            // back from every host writer and made the next host batch wait longer still.
            costs.hostRan(done, kindSet, inGate);
        }
        reads.add(gets);
        writes.add(done - gets);
        HostStageTimes times = engine.times;
        times.add(HostStageTimes.Stage.HOST_IN_GATE, inGate);
        if (inGate > SLOW_IN_GATE_NANOS) {
            times.add(HostStageTimes.Stage.HOST_IN_GATE_SLOW, inGate);
        }
        if (gateWait > 0) {
            times.add(HostStageTimes.Stage.HOST_GATE_WAIT, gateWait);
        }
        if (done < n) {
            boolean grown = growHeapForHostWrites(growths);
            if (done == 0) {
                return grown ? run(batch, result) : null;  // once grown, the heap is not short again at once
            }
            BatchRanges.run(engine, batch, done, batch.size(), result);  // by the engine's routes
        }
        batches.increment();
        times.add(HostStageTimes.Stage.HOST_ROUTE, System.nanoTime() - called);
        return SubmittedBatch.DONE;
    }

    /**
     * A host batch that spent longer than this inside the gate is counted apart
     * ({@link HostStageTimes.Stage#HOST_IN_GATE_SLOW}): bench ycsb's A at batches of 64 from 16 threads
     * took 0.13 ms a batch on average on the GPU backend with a p99 of 1.4 ms, where the CPU backend's
     * batches took 0.06 and 0.09 ms, and the router's clamped average of the time inside was the CPU
     * backend's (issue 57); whether the slow batches are slow inside the gate or before it was not known.
     */
    static final long SLOW_IN_GATE_NANOS = 250_000;

    /**
     * The set of kinds of the first {@code n} operations of {@code batch} ({@link RouteCosts#kindsOf}),
     * in the high word, and how many of them are gets, in the low one. Read from a copy in a Java array,
     * with no branch on the kind: a loop over the segment that branched on GET, compiled for a load's
     * batches of inserts, was thrown away at YCSB A's first get and then ran interpreted in 16 threads
     * (a flight recording: docs/lab/2026-12-02-route-costs-and-the-jit.md).
     */
    private static long kindsAmong(Batch batch, int n) {
        byte[] kinds = KIND_COPY.get();
        if (kinds.length < n) {
            kinds = new byte[Math.max(n, 2 * kinds.length)];
            KIND_COPY.set(kinds);
        }
        MemorySegment.copy(batch.kinds(), ValueLayout.JAVA_BYTE, 0, kinds, 0, n);
        int set = 0;
        int gets = 0;
        for (int i = 0; i < n; i++) {
            int k = kinds[i] & KIND_MASK;
            set |= 1 << k;
            gets += (k - 1) >>> 31;  // 1 for GET (ordinal 0), else 0
        }
        return ((long) set << 32) | gets;
    }

    /** A kind's ordinal fits three bits (eight kinds), so that a set of kinds is a byte of bits. */
    private static final int KIND_MASK = 7;
    /** Each host thread's copy of its batch's kinds ({@link #kindsAmong}). */
    private static final ThreadLocal<byte[]> KIND_COPY = ThreadLocal.withInitial(() -> new byte[4096]);

    static {
        if (OpKind.GET.ordinal() != 0 || OpKind.values().length > KIND_MASK + 1) {
            throw new AssertionError("kindsAmong counts GET as ordinal 0 among at most eight kinds");
        }
    }

    /** Every operation of a batch of gets, inside the gate, each value at its length in the result's layout; {@return the batch's size} */
    private int runGets(Batch batch, BatchResult result) {
        MemorySegment keys = batch.keys();
        MemorySegment codes = result.outcomeCodes();
        MemorySegment out = result.valuesPacked() ? null : result.values();
        int n = batch.size();
        for (int i = 0; i < n; i++) {
            codes.set(ValueLayout.JAVA_BYTE, i, (byte) ops.getInto(keys, (long) i * keySize, result, out, i));
        }
        return n;
    }

    /**
     * A host write found the heap short: grows it here, on the host's bitmap (the heap's free space is
     * the host's while lent; the GPU takes the grown heap back with the pool), by
     * {@link #hostHeadroom} at once, and returns true; true too where another write grew it since this
     * one looked ({@code growthsSeen}: 256 threads' writes found it short at once, and all but the one
     * that grew it went to the GPU, whose first batch, 68 ms, held every host writer: YCSB's F, the
     * lab log of issue 57);
     * false where the heap has that much free (the write needs a resize, which the GPU's routes run),
     * the pool is not lent, or the pool's size limit stops the growth short (the GPU's routes then grow
     * it by the write's need alone, or say it is full).
     *
     * <p>Why here and by that much: handed to the GPU's routes, the write took the pool back from every
     * host thread, the GPU grew the heap by what that one batch needed, and the host ran short again a
     * while later: bench ycsb's A at batches of 64 from 16 threads took the pool back 16 times, its
     * threads waiting 324 ms in all for it to be lent again, and ran at a quarter of the CPU backend's
     * rate (issue 57).
     *
     * @param growthsSeen {@link #heapGrowthsSeen} as the write read it before it ran
     */
    private boolean growHeapForHostWrites(long growthsSeen) {
        while (true) {
            if (heapGrowthsSeen != growthsSeen) {
                return true;  // another write grew it since this one looked: run again on the host
            }
            if (engine.closed) {
                return false;
            }
            // One thread grows; the others that found the heap short wait for it outside the engine's
            // lock. Queued on the lock, 256 threads' writes waited 622 ms on average (1.37 s at most)
            // for their turn to find the heap grown already (YCSB's A at 256 threads: the lab log of issue 57).
            if (growing.runOrAwait(growStep, () -> heapGrowthsSeen != growthsSeen || engine.closed)) {
                return heapGrowthsSeen != growthsSeen;
            }
        }
    }

    /** {@link #growHeapForHostWrites}'s growth, by the one thread that runs it: grows the heap where it is short. */
    private void growUnderLock() {
        synchronized (engine) {
            if (!lent || !heapOnHost || engine.closed) {
                return;
            }
            long want = hostHeadroom(engine.pool.totalBlocks());
            if (engine.pool.freeBlocks() >= want) {
                return;
            }
            long t0 = System.nanoTime();
            engine.cuda.bind();  // the growth maps the pool anew, and the GPU registers the new pages
            // The file's new pages allocated and registered with CUDA while host operations go on:
            // the gate then closes for the chunk's tag and commit alone. Done with the gate closed, the
            // whole growth took 60-160 ms, every host thread waiting (YCSB's A and F at 256 threads).
            engine.pool.prepareHeapGrowth();
            long t1 = System.nanoTime();
            engine.times.add(HostStageTimes.Stage.HEAP_PREPARE, t1 - t0);
            engine.hostReaders.close();  // no host operation runs while the heap grows
            long t2 = t1;
            try {
                engine.cache.get().awaitLoad();
                t2 = System.nanoTime();
                engine.times.add(HostStageTimes.Stage.HEAP_DRAIN, t2 - t1);
                boolean debug = PoolLog.LOG.isLoggable(System.Logger.Level.DEBUG);
                long before = debug ? engine.pool.freeBlocks() : 0;
                engine.pool.ensureFreeBlocks(want);
                if (debug) {
                    // Every growth for host writes, with or without a chunk: each keeps host operations out.
                    PoolLog.LOG.log(System.Logger.Level.DEBUG, "gphash: heap growth for host writes: {0} blocks free before "
                            + "the drain, {1} after it and the growth (asked for {2}); prepare {3} ms, drain {4} ms",
                            before, engine.pool.freeBlocks(), want, String.format(Locale.ROOT, "%.2f", (t1 - t0) / 1e6),
                            String.format(Locale.ROOT, "%.2f", (t2 - t1) / 1e6));
                }
                heapGrowths.increment();
                heapGrowthsSeen++;  // under the lock, by the one grower
            } catch (PoolFullException e) {
                // The pool's size limit leaves less than the headroom: the GPU's routes grow it by what
                // the write needs alone, or say the pool is full.
            } finally {
                engine.openHostReadsIfIdle();
                engine.times.add(HostStageTimes.Stage.HEAP_GROWTH, System.nanoTime() - t2);
            }
        }
    }

    /** The fewest free blocks a growth for host writes leaves: a sixteenth of the heap, at least {@link #HOST_HEADROOM_BLOCKS}. */
    static long hostHeadroom(long totalBlocks) {
        return Math.max(HOST_HEADROOM_BLOCKS, totalBlocks >>> 4);
    }

    /** The least a growth for host writes leaves free: 16 threads' batches of 1024 writes, a few times over. */
    static final long HOST_HEADROOM_BLOCKS = 1 << 16;

    /**
     * The gate was closed: throws once the engine is closed (its gate stays shut); where the pool is
     * not lent, waits for the GPU's work by lending it ({@link #lend} takes the lock and drains);
     * else a lock holder is waiting for the threads inside, which takes microseconds, or the heap
     * grows on the host, which takes a millisecond or more ({@link #GATE_WAIT}).
     */
    private void awaitGate(int round) {
        if (engine.closed) {
            throw new IndexClosedException(engine.pool.file().path());
        }
        if (!lent) {
            lend();
        } else {
            GATE_WAIT.idle(round);
        }
    }

    /**
     * Spins through a lock holder's wait for the threads inside, yields a little, then parks: 256
     * threads yielding through a heap growth kept every core busy while the grower needed one.
     */
    private static final IdleStrategy GATE_WAIT = new IdleStrategy(1 << 12, 64, 20_000);

    /**
     * Lends the pool to the host, or waits for the thread lending it now ({@link SingleFlight}: outside
     * the engine's lock, until the pool is lent or the engine closed); the caller then looks at
     * {@link #lent} again.
     */
    private void lend() {
        long called = System.nanoTime();
        if (!lending.runOrAwait(lendStep, lentOrClosed)) {
            engine.times.add(HostStageTimes.Stage.LEND_WAIT, System.nanoTime() - called);
        }
    }

    /** Whether a thread waiting for another's lend may stop: the pool is lent, or the engine closed. */
    private boolean lentOrClosed() {
        return lent || engine.closed;
    }

    /**
     * Lends the pool to the host: under the lock, once the GPU's work in flight is done (the gate
     * closed meanwhile), the heap's free space comes to the host and BktCache's load, if one runs,
     * ends; the set of changed buckets is sized for the table as it is now (a resize may have grown it).
     */
    private void lendUnderLock() {
        long called = System.nanoTime();
        synchronized (engine) {
            long locked = System.nanoTime();
            engine.times.add(HostStageTimes.Stage.LEND_WAIT, locked - called);
            if (lent) {
                return;
            }
            engine.ensureOpen(true, false);  // closes the gate, drains the GPU
            try {
                dirty.ensureBuckets(ops.bucketCount());  // empty: the last take-back drained it
                BucketCache cache = engine.cache.get();
                cache.awaitLoad();
                if (!heapOnHost) {
                    engine.path.syncHost();
                    heapOnHost = true;
                }
                lent = true;
                lends.increment();
            } finally {
                engine.openHostReadsIfIdle();
                engine.times.add(HostStageTimes.Stage.LEND, System.nanoTime() - locked);
            }
        }
    }

    /**
     * Under the engine's lock with the gate closed and nothing in flight, before the GPU's next work:
     * the buckets host writes changed are copied again into the GPU's copies, and, for work that may
     * write ({@code heap}), the heap's free space goes back to the GPU. Reads on the GPU leave it with
     * the host, so that writes after them need not fetch it again.
     */
    void takeBack(boolean heap) {
        // Writes mark buckets only while lent (inside the gate, which is closed now): a pool not lent
        // since the last take-back has nothing to refresh, and every GPU batch comes here, so the set,
        // whose drain scans a word per 4096 buckets, is not looked at then.
        if (lent) {
            long t0 = System.nanoTime();
            lent = false;
            if (refreshList == null) {
                refreshList = new long[REFRESH_CHUNK];
            }
            for (int n; (n = dirty.drainTo(refreshList)) > 0; ) {
                refresh.run(refreshList, n, engine.kernels.tableParams(engine.pool.layout()), engine.path.mirrorTableParams(),
                        engine.cache.get().params());
                refreshedBuckets.add(n);
            }
            engine.times.add(HostStageTimes.Stage.TAKE_BACK_REFRESH, System.nanoTime() - t0);
        }
        if (heap && heapOnHost) {
            long t0 = System.nanoTime();
            engine.pool.reclaimRetired();
            engine.path.heapToDevice();
            heapOnHost = false;
            engine.times.add(HostStageTimes.Stage.TAKE_BACK_HEAP, System.nanoTime() - t0);
        }
    }

    /** Frees the GPU memory of the refresh. */
    void close() {
        refresh.close();
    }

    /**
     * Whether the GPU must take the pool back before its next work: it is lent (host writes may run,
     * and buckets they changed wait to be copied: only a take-back ends a lend, and it copies them all).
     */
    boolean needsTakeBack() {
        return lent;
    }

    /** Whether the heap's free space is the host's (close then has nothing to fetch from the GPU). */
    boolean heapOnHost() {
        return heapOnHost;
    }
}
