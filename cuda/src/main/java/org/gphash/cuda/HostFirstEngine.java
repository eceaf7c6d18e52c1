package org.gphash.cuda;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.EntryChunk;
import org.gphash.Geometry;
import org.gphash.GpuFeatures;
import org.gphash.IndexClosedException;
import org.gphash.IndexStats;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.RecoveryReport;
import org.gphash.cuda.routing.BatchKeys;
import org.gphash.cuda.routing.BatchRanges;
import org.gphash.format.PoolHeader;
import org.gphash.spi.Engine;
import org.gphash.spi.ScanState;
import org.gphash.spi.SubmittedBatch;
import org.gphash.table.PoolTable;

/**
 * The GPU backend's engine from the moment its pool is open on the host: until the GPU is up it runs
 * every call on the host with the CPU engine's code over the pool, then hands the pool to the
 * {@link GpuEngine} built over it, and from there forwards every call to it.
 *
 * <p>Why: the CUDA driver's start (the context and the kernels' module) takes longer than the whole
 * open of a pool on the host, and YCSB's client counts the open in every run: with the open waiting
 * for the GPU, the GPU backend lost a tenth to a sixth of every 6M-operation phase at 16 threads to the
 * CPU backend (docs/PERFORMANCE.md, "YCSB's own client"; issue 57). Served on the host meanwhile,
 * calls run at the CPU engine's speed, which is the host route's own.
 *
 * <p><b>The hand-over</b> runs on a thread of its own ({@link #handOver}): beside the host's calls it
 * waits for the runtime and attaches the kernels to the pool ({@link GpuStart#prepare}: pinning the
 * pool's pages reads nothing a write changes); then it closes the gate, which keeps new calls out and
 * waits for those inside, frees what host writes retired, and builds the GPU engine over the pool as
 * it is ({@link GpuStart#build}: the index mirror and the heap's free map are loaded from the pool then,
 * so every host write is in them and nothing needs refreshing). Calls that met the closed gate then go
 * to the GPU engine. The gate never opens again: from then on a call costs one volatile read here.
 *
 * <p><b>What waits for the GPU.</b> A write that needs a resize runs the table's resize with the GPU's
 * kernels, as the CPU engine would with its own passes, and so waits for the runtime. What only the
 * GPU engine has (its features, its figures, BktCache) waits for the hand-over.
 *
 * <p><b>Promises made before the GPU is up.</b> Whether a batch's operations on one key run in batch
 * order depends on the batch path the GPU engine takes (the index mirror orders them, the pool path
 * does not), which is known only once the GPU is up; a front end asks at open. This engine answers what
 * its opener predicted ({@code ordersOperationsOnAKey}) for its whole life, and where the GPU engine
 * then does not order them, it runs a batch whose keys repeat as runs of distinct keys, in order.
 *
 * <p><b>If the GPU fails to start</b> after the pool was opened (every reason known before, from the
 * driver, the GPU and the jar, refused the open before the pool was touched), the failure is kept and
 * every later call throws it; what was acknowledged is in the pool, which close closes as the CPU engine
 * does.
 */
public final class HostFirstEngine implements Engine {

    /** The GPU's side of the hand-over ({@link GpuEngines} builds it; tests pass their own). */
    public interface GpuStart {

        /** Beside the host's calls: waits for the runtime and readies what reads nothing a write changes. */
        void prepare();

        /** With no call running on the pool: the GPU engine over it as it is now. */
        Engine build();

        /** Releases what {@link #prepare} made, where {@link #build} never ran or failed; the pool stays open. */
        void release();
    }

    private final PoolTable pool;
    /** The CPU engine's code over the pool, until the hand-over. */
    private final Engine host;
    private final GpuStart start;
    private final boolean ordersOnAKey;
    private final boolean singlesInPlace;
    /** {@link #valueLengths}: a format 3 pool the GPU engine will run on its index mirror. */
    private final boolean valueLengths;
    private final HostReadGate gate = new HostReadGate();
    /**
     * Completed when the hand-over ends. Not a latch: a latch's release wakes its waiters one by one,
     * each woken thread waking the next once it runs, and 256 client threads on 16 cores took 1.9 s
     * to all wake that way (the last woke 1.9 s after the first, YCSB's A at 256 threads,
     * docs/lab/2026-11-30-replays-by-batch-kind.md); completing a future unparks every waiter from the
     * completing thread.
     */
    private final CompletableFuture<Void> ended = new CompletableFuture<>();
    private final long openedAt = System.nanoTime();
    /** The GPU engine once handed over; null before. */
    private volatile Engine gpu;
    /** Where the GPU engine does not order a batch's operations on a key as promised: batches run in runs of distinct keys. */
    private volatile boolean repeatedKeysInRuns;
    /** Why the GPU did not start, once known. */
    private volatile Throwable failure;
    private volatile boolean closed;
    /** Whether {@link GpuStart#release} is owed (the GPU's side never became an engine). */
    private boolean releaseOwed;
    /** From the open's return to the hand-over's end. */
    private volatile long handOverNanos;

    private HostFirstEngine(PoolTable pool, Engine host, GpuStart start, boolean ordersOnAKey, boolean singlesInPlace) {
        this.pool = pool;
        this.host = host;
        this.start = start;
        this.ordersOnAKey = ordersOnAKey;
        this.singlesInPlace = singlesInPlace;
        this.valueLengths = ordersOnAKey && pool.formatVersion() >= PoolHeader.FORMAT_3;
    }

    /**
     * Serves calls on {@code pool} with {@code host} now and starts the hand-over to the GPU on a
     * thread of its own.
     *
     * @param ordersOnAKey   what {@link #ordersOperationsOnAKey} answers throughout: whether the GPU engine will run on its index mirror
     * @param singlesInPlace what {@link #runsSingleCallsInPlace} answers throughout (the GPU engine's answer, known from its tuning)
     */
    public static HostFirstEngine start(PoolTable pool, Engine host, GpuStart start, boolean ordersOnAKey,
                                        boolean singlesInPlace) {
        HostFirstEngine e = new HostFirstEngine(pool, host, start, ordersOnAKey, singlesInPlace);
        Thread.ofPlatform().daemon().name("gphash-gpu-hand-over").start(e::handOver);
        return e;
    }

    private void handOver() {
        Throwable failed = null;
        try {
            start.prepare();
        } catch (Throwable t) {
            failed = t;
        }
        synchronized (this) {
            releaseOwed = true;
            if (closed) {
                ended.complete(null);  // the closer releases, on its own thread, before the pool closes
                return;
            }
            gate.close();  // new calls wait; those inside finish first
            try {
                if (failed == null) {
                    pool.reclaimRetired();  // the heap's free map whole before the GPU loads it
                    Engine g = start.build();
                    releaseOwed = false;
                    repeatedKeysInRuns = ordersOnAKey && !g.ordersOperationsOnAKey();
                    warm(g);
                    gpu = g;
                }
            } catch (Throwable t) {
                failed = t;
            } finally {
                if (failed != null) {
                    failure = failed;  // the gate stays closed: every later call throws it
                }
                handOverNanos = System.nanoTime() - openedAt;
                ended.complete(null);
            }
        }
    }

    /**
     * One get through the GPU engine's single-call path on this thread before any caller's: the first
     * run of a path resolves the classes it names, and 256 client threads arriving at once each took the
     * class loader's lock for the same name in turn, 100-190 ms apiece (a flight recording of YCSB's C at
     * 256 threads, docs/lab/2026-11-30-host-first-open.md). Gets change nothing; writes are not warmed,
     * since none is sure to change nothing. Only a speed-up: where these gets fail, the engine is handed
     * over all the same (failing the hand-over here would leave the engine just built unowned), and
     * callers meet the fault on their own calls.
     */
    private void warm(Engine g) {
        Geometry geometry = g.geometry();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment key = arena.allocate(geometry.keySize());
            MemorySegment out = arena.allocate(geometry.valueSize());
            g.get(key, out);
            g.read(key, out);  // the index's get comes this way
        } catch (RuntimeException e) {
            // callers' calls take the same path and report it
        }
    }

    // ------------------------------------------------------------------ which engine runs a call

    /**
     * The engine for a call: the GPU engine once handed over, else the host's inside the gate ({@link
     * #leave} after). A call that finds the gate closed blocks until the hand-over ends: polled, 256
     * client threads on 16 cores woke every 50 µs and took the cores from the thread building the GPU
     * engine (YCSB's C at 256 threads, docs/lab/2026-11-30-host-first-open.md).
     */
    private Engine enter() {
        while (true) {
            Engine g = gpu;
            if (g != null) {
                return g;
            }
            if (gate.tryEnter()) {
                return host;  // the hand-over waits for this call before it builds the GPU engine
            }
            failIfStopped();
            awaitEndUninterruptibly();
            failIfStopped();
        }
    }

    private void leave(Engine e) {
        if (e == host) {
            gate.exit();
        }
    }

    private void failIfStopped() {
        Throwable f = failure;
        if (f != null) {
            throw new IllegalStateException("the GPU engine for " + pool.file().path() + " did not start after its pool "
                    + "was opened; what was acknowledged before is in the pool (close it, then open it with the CPU "
                    + "backend): " + f, f);
        }
        if (closed) {
            throw new IndexClosedException(pool.file().path());
        }
    }

    /** The GPU engine, waiting for the hand-over if it is still to come (it ends handed over, failed or closed). */
    Engine awaitGpu() {
        Engine g = gpu;
        if (g == null) {
            failIfStopped();
            awaitEndUninterruptibly();
            g = gpu;
            if (g == null) {
                failIfStopped();
                throw new IllegalStateException("the hand-over of " + pool.file().path() + " ended without an engine");
            }
        }
        return g;
    }

    /** {@return whether the GPU engine has taken the pool over} */
    public boolean handedOver() {
        return gpu != null;
    }

    /** {@return from the open's return to the GPU engine's taking over, in nanoseconds (0 before)} */
    public long handOverNanos() {
        return handOverNanos;
    }

    // ------------------------------------------------------------------ single calls

    @Override
    public Geometry geometry() {
        return pool.geometry();
    }

    /**
     * As the {@link GpuEngine} this hands over to answers: on a format 3 pool over the index mirror its
     * values have lengths of their own (the CPU engine's code serving meanwhile takes them too); where
     * the hand-over finds too little GPU memory for the mirror after all, the GPU engine refuses batches
     * of them and says why.
     */
    @Override
    public boolean valueLengths() {
        return valueLengths;
    }

    @Override
    public Outcome get(MemorySegment key, MemorySegment valueOut) {
        return read(key, valueOut) >= 0 ? Outcome.FOUND : Outcome.NOT_FOUND;
    }

    /**
     * The value of {@code key} and its length; where values all have the value size to this engine's
     * callers ({@link #valueLengths} false), a shorter one followed by zeros (the GPU engine's reads give
     * the same: the CPU engine serving before the hand-over leaves a shorter value's tail as it was).
     */
    @Override
    public int read(MemorySegment key, MemorySegment valueOut) {
        Engine e = enter();
        int length;
        try {
            length = e.read(key, valueOut);
        } finally {
            leave(e);
        }
        int valueSize = pool.geometry().valueSize();
        if (length < 0 || valueLengths) {
            return length;
        }
        if (length < valueSize) {
            valueOut.asSlice(length, valueSize - length).fill((byte) 0);
        }
        return valueSize;
    }

    @Override
    public Outcome getAlongside(MemorySegment key, MemorySegment valueOut) {
        Engine e = enter();
        try {
            return e.getAlongside(key, valueOut);
        } finally {
            leave(e);
        }
    }

    @Override
    public Outcome put(MemorySegment key, MemorySegment value) {
        return write(OpKind.PUT, key, value, null);
    }

    @Override
    public Outcome insert(MemorySegment key, MemorySegment value) {
        return write(OpKind.INSERT, key, value, null);
    }

    @Override
    public Outcome update(MemorySegment key, MemorySegment value) {
        return write(OpKind.UPDATE, key, value, null);
    }

    @Override
    public Outcome delete(MemorySegment key) {
        return write(OpKind.DELETE, key, null, null);
    }

    @Override
    public Outcome compareAndSet(MemorySegment key, MemorySegment expected, MemorySegment value) {
        return write(OpKind.COMPARE_AND_SET, key, value, expected);
    }

    @Override
    public Outcome compareAndDelete(MemorySegment key, MemorySegment expected) {
        return write(OpKind.COMPARE_AND_DELETE, key, null, expected);
    }

    @Override
    public Outcome write(OpKind kind, MemorySegment key, MemorySegment value, MemorySegment expected) {
        Engine e = enter();
        try {
            return e.write(kind, key, value, expected);
        } finally {
            leave(e);
        }
    }

    // ------------------------------------------------------------------ batches

    @Override
    public void execute(Batch batch, BatchResult result) {
        Engine e = enter();
        try {
            if (e != host && repeatedKeysInRuns) {
                inDistinctRuns(e, batch, result);
            } else {
                e.execute(batch, result);
            }
        } finally {
            leave(e);
        }
    }

    @Override
    public SubmittedBatch submit(Batch batch, BatchResult result) {
        Engine g = gpu;
        if (g == null || repeatedKeysInRuns) {
            execute(batch, result);
            return SubmittedBatch.DONE;
        }
        return g.submit(batch, result);
    }

    /** Before the hand-over the caller runs the part with {@link #execute}, on the host. */
    @Override
    public boolean executeInPlace(Batch batch, BatchResult result, MemorySegment positions, int count) {
        Engine g = gpu;
        return g != null && !repeatedKeysInRuns && g.executeInPlace(batch, result, positions, count);
    }

    @Override
    public boolean ordersOperationsOnAKey() {
        return ordersOnAKey;
    }

    @Override
    public boolean runsSingleCallsInPlace() {
        return singlesInPlace;
    }

    /** Every batch runs on the calling thread until the hand-over. */
    @Override
    public boolean runsBatchInPlace(Batch batch) {
        Engine g = gpu;
        return g == null || g.runsBatchInPlace(batch);
    }

    @Override
    public void callerWaited(int operations, boolean writes, long nanos) {
        Engine g = gpu;
        if (g != null) {
            g.callerWaited(operations, writes, nanos);
        }
    }

    /**
     * Runs {@code batch} on {@code engine} in runs in which no key appears twice, one after another,
     * so that operations on a key take effect in batch order on an engine that orders them only
     * across batches; into {@code result}.
     */
    private static void inDistinctRuns(Engine engine, Batch batch, BatchResult result) {
        int n = batch.size();
        result.reset(n);
        BatchKeys.LongSet seen = new BatchKeys.LongSet(n);
        int from = 0;
        int end = BatchKeys.distinctRunEnd(batch, 0, seen);
        if (end == n) {
            engine.execute(batch, result);
            return;
        }
        while (from < n) {
            BatchRanges.run(engine, batch, from, end, result);
            from = end;
            end = from < n ? BatchKeys.distinctRunEnd(batch, from, seen) : n;
        }
    }

    // ------------------------------------------------------------------ the rest

    /** Waits for the hand-over's thread to end, keeping an interrupt for the caller (join keeps it). */
    private void awaitEndUninterruptibly() {
        ended.join();
    }

    @Override
    public Optional<GpuFeatures> gpuFeatures() {
        return awaitGpu().gpuFeatures();
    }

    @Override
    public boolean reloadBucketCache(boolean wait) {
        return awaitGpu().reloadBucketCache(wait);
    }

    /** The GPU engine's figures (its batch path and BktCache are known only once it is up). */
    @Override
    public IndexStats stats() {
        return awaitGpu().stats();
    }

    @Override
    public long poolIdentity() {
        return pool.poolIdentity();
    }

    @Override
    public void commitShardMembership(long indexId, long seed, int shard, int shards, long epoch) {
        Engine e = enter();
        try {
            e.commitShardMembership(indexId, seed, shard, shards, epoch);
        } finally {
            leave(e);
        }
    }

    /** Both engines scan with the same state ({@code EntryScan.State}): a scan may go on across the hand-over. */
    @Override
    public ScanState startScan() {
        return host.startScan();
    }

    @Override
    public void readEntries(ScanState state, EntryChunk chunk) {
        Engine e = enter();
        try {
            e.readEntries(state, chunk);
        } finally {
            leave(e);
        }
    }

    @Override
    public void snapshot(Path target) {
        Engine e = enter();
        try {
            e.snapshot(target);
        } finally {
            leave(e);
        }
    }

    @Override
    public void sync() {
        Engine e = enter();
        try {
            e.sync();
        } finally {
            leave(e);
        }
    }

    @Override
    public RecoveryReport lastRecovery() {
        return pool.recovery();
    }

    @Override
    public void close() {
        stop(false);
    }

    @Override
    public void abandon() {
        stop(true);
    }

    /**
     * Closes (or abandons) whichever engine holds the pool: the hand-over, if it is still running,
     * first ends (its runtime start cannot be interrupted, and the pool's pages may be registered with
     * CUDA, which must be undone before the pool is unmapped).
     */
    private void stop(boolean abandon) {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        awaitEndUninterruptibly();
        Engine g = gpu;
        if (g != null) {
            if (abandon) {
                g.abandon();
            } else {
                g.close();
            }
            return;
        }
        gate.close();  // calls on the host drain; new ones find the engine closed
        try {
            if (releaseOwed) {
                start.release();  // on this thread, which then unmaps the pool
            }
        } finally {
            if (abandon) {
                host.abandon();
            } else {
                host.close();
            }
        }
    }
}
