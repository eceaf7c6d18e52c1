package org.gphash.table;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.WeakReference;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.function.LongConsumer;

import org.gphash.format.HeaderStore;
import org.gphash.spi.IdleStrategy;

/**
 * Epoch-based reclamation of value blocks, and the gate that drains operations for the rare
 * exclusive phases (resize, heap growth, close).
 *
 * <p>Every operation runs between {@link #enter()} and {@link #exit}. A value block that an
 * operation unlinks (an update's old value, a deleted item's value) is {@linkplain #retire retired}
 * with the current global epoch {@code e}; it goes back to the heap only once the global epoch has
 * reached {@code e + 2}, which cannot happen while any operation that might still be reading it is
 * running. Without this, a reader could read a value block while a writer reuses it, and return a
 * value that was never written.
 *
 * <p>An exclusive phase raises a flag and waits for every running operation to exit; operations
 * that arrive meanwhile wait. This is the only waiting in the engine: ordinary operations never
 * wait for each other.
 */
public final class EpochGate {

    private static final long IDLE = -1L;
    private static final int LIMBO_BATCH = 64;

    /**
     * One thread's announcement and its retired blocks. Only its owner touches the limbo. The limbo
     * holds entries {@code [limboHead, limboSize)} in the order they were retired, so their epochs
     * never decrease: what may be reclaimed is a prefix.
     */
    public static final class Participant {
        volatile long epoch = IDLE;
        final WeakReference<Thread> owner;
        long[] limboOffset = new long[LIMBO_BATCH];
        long[] limboEpoch = new long[LIMBO_BATCH];
        int limboHead;
        int limboSize;
        int retiredSinceReclaim;

        Participant(Thread owner) {
            this.owner = new WeakReference<>(owner);
        }

        boolean ownerGone() {
            Thread t = owner.get();
            return t == null || !t.isAlive();
        }
    }

    private final AtomicLong globalEpoch = new AtomicLong(2);
    private final Reclaimer reclaim;
    private final ThreadLocal<Participant> local = ThreadLocal.withInitial(this::register);
    private final ReentrantLock registry = new ReentrantLock();
    private final ReentrantLock exclusive = new ReentrantLock();
    private volatile Participant[] participants = new Participant[0];
    private volatile boolean exclusiveRequested;
    /** Set by close, inside its exclusive phase: operations that start later throw (never touch an unmapped pool). */
    private volatile Path shutPool;
    /** Limbo entries of threads that ended, freed when their epoch allows (guarded by registry). */
    private final List<long[]> orphans = new ArrayList<>();

    /** Told the number of threads that may run operations at once, before one more of them can. */
    private final LongConsumer admitWriters;
    /** The most threads {@link #admitWriters} has admitted. */
    private volatile int admitted;

    /**
     * Frees retired blocks {@code offsets[from, to)}, which no running operation can read any more.
     * Handed a run at a time, so that the heap counts them free with one atomic add, not one per
     * block: 16 threads' frees, one at a time, contended on that count (YCSB-A).
     */
    @FunctionalInterface
    interface Reclaimer {
        void reclaim(long[] offsets, int from, int to);
    }

    /** A gate that frees blocks one at a time and records no writer bound (tests of the gate alone). */
    EpochGate(LongConsumer reclaim) {
        this((offsets, from, to) -> {
            for (int i = from; i < to; i++) {
                reclaim.accept(offsets[i]);
            }
        }, n -> { });
    }

    /**
     * {@code admitWriters} is called (inside an operation, so never during an exclusive phase) when
     * more threads than ever before may run operations at once: the engine records that bound in the
     * header, since each such thread can leave one half-done operation at a crash.
     */
    EpochGate(Reclaimer reclaim, LongConsumer admitWriters) {
        this.reclaim = reclaim;
        this.admitWriters = admitWriters;
    }

    /**
     * A thread's first operation joins the participants: appended by compare-and-set, never waiting
     * for a lock. Under a lock, 256 client threads let in at once (the GPU backend's hand-over)
     * queued for it one after another, each woken only when the one before it ran: 114 of them waited
     * 69 ms on average (YCSB's A from 256 threads, docs/lab/2026-11-30-replays-by-batch-kind.md).
     * Participants of threads that ended are dropped by whichever thread finds the lock free.
     */
    private Participant register() {
        Participant p = new Participant(Thread.currentThread());
        for (;;) {
            Participant[] current = participants;
            Participant[] next = Arrays.copyOf(current, current.length + 1);
            next[current.length] = p;
            if (PARTICIPANTS.compareAndSet(this, current, next)) {
                break;
            }
        }
        if (registry.tryLock()) {
            try {
                dropEndedThreads();
            } finally {
                registry.unlock();
            }
        }
        return p;
    }

    /** Drops the participants of threads that ended, their limbo kept as orphans; under {@link #registry}. */
    private void dropEndedThreads() {
        for (;;) {
            Participant[] current = participants;
            List<Participant> alive = new ArrayList<>(current.length);
            List<Participant> ended = new ArrayList<>();
            for (Participant q : current) {
                (q.ownerGone() && q.epoch == IDLE ? ended : alive).add(q);
            }
            if (ended.isEmpty()) {
                return;
            }
            if (PARTICIPANTS.compareAndSet(this, current, alive.toArray(Participant[]::new))) {
                // Only now the dropped ones' limbo moves: a failed exchange left them in place. Their
                // owners are gone, so nothing else changes their limbo; reclaimAll, which would, holds
                // the registry too.
                for (Participant q : ended) {
                    for (int i = q.limboHead; i < q.limboSize; i++) {
                        orphans.add(new long[] {q.limboOffset[i], q.limboEpoch[i]});
                    }
                }
                return;
            }
        }
    }

    private static final VarHandle PARTICIPANTS;

    static {
        try {
            PARTICIPANTS = MethodHandles.lookup().findVarHandle(EpochGate.class, "participants", Participant[].class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Starts an operation; waits only while an exclusive phase runs. */
    public Participant enter() {
        Participant p = local.get();
        if (p.epoch != IDLE) {
            throw new IllegalStateException("operations must not nest on one thread");
        }
        for (;;) {
            long e = globalEpoch.get();
            p.epoch = e;
            // Announce first, then check: an exclusive phase either sees us or we see its flag.
            if (!exclusiveRequested && globalEpoch.get() == e) {
                if (shutPool != null) {
                    p.epoch = IDLE;
                    throw new org.gphash.IndexClosedException(shutPool);
                }
                if (participants.length > admitted) {
                    admit(p);
                }
                return p;
            }
            p.epoch = IDLE;
            awaitExclusiveEnd();
        }
    }

    public void exit(Participant p) {
        p.epoch = IDLE;
    }

    /** The most threads admitted so far (each may have one operation in flight). */
    public int admittedWriters() {
        return admitted;
    }

    /**
     * Slow path of {@link #enter}: record the larger number of threads before this one writes,
     * rounded up as the header rounds its bound ({@link HeaderStore#roundedLimit}), so that the threads
     * after it up to that number pass by. Recorded exactly, each of 256 client threads let in at once took this
     * monitor in turn, waiting 560 ms on average (YCSB's A at 256 threads on the GPU backend,
     * docs/lab/2026-11-30-replays-by-batch-kind.md).
     */
    private void admit(Participant p) {
        try {
            synchronized (admitWriters) {
                int n = participants.length;
                if (n > admitted) {
                    int bound = (int) Math.min(Integer.MAX_VALUE, HeaderStore.roundedLimit(n));
                    admitWriters.accept(bound);
                    admitted = bound;
                }
            }
        } catch (RuntimeException | Error e) {
            exit(p);
            throw e;
        }
    }

    private void awaitExclusiveEnd() {
        for (int round = 0; exclusiveRequested; round++) {
            IdleStrategy.SPIN_THEN_PARK.idle(round);
        }
    }

    /** Hands {@code valueOffset} to reclamation once no running operation can still read it. */
    public void retire(Participant p, long valueOffset) {
        if (p.limboSize == p.limboOffset.length) {
            if (p.limboHead > 0) {
                int live = p.limboSize - p.limboHead;
                System.arraycopy(p.limboOffset, p.limboHead, p.limboOffset, 0, live);
                System.arraycopy(p.limboEpoch, p.limboHead, p.limboEpoch, 0, live);
                p.limboHead = 0;
                p.limboSize = live;
            }
            if (p.limboSize == p.limboOffset.length) {
                // Operations still in older epochs hold these back: keep them rather than wait.
                p.limboOffset = Arrays.copyOf(p.limboOffset, p.limboSize * 2);
                p.limboEpoch = Arrays.copyOf(p.limboEpoch, p.limboSize * 2);
            }
        }
        p.limboOffset[p.limboSize] = valueOffset;
        p.limboEpoch[p.limboSize] = globalEpoch.get();
        p.limboSize++;
        if (++p.retiredSinceReclaim == LIMBO_BATCH) {
            // Try every LIMBO_BATCH retirements, whatever the list's size, so reuse keeps pace.
            p.retiredSinceReclaim = 0;
            reclaimSafe(p);
        }
    }

    /**
     * Frees the limbo's prefix that no running operation can read. Only the prefix is looked at: a
     * batch of 65,536 operations retires its updates' old values while its own epoch holds them all
     * back, and scanning the whole limbo every 64 retirements took 20% of YCSB-A's samples (JFR, CPU
     * engine, 2 threads).
     */
    private void reclaimSafe(Participant p) {
        tryAdvance();
        long safe = globalEpoch.get() - 2;
        int end = p.limboHead;
        while (end < p.limboSize && p.limboEpoch[end] <= safe) {
            end++;
        }
        if (end > p.limboHead) {
            int from = p.limboHead;
            p.limboHead = end;  // before the call: a failed free is not retried on every later reclaim
            reclaim.reclaim(p.limboOffset, from, end);
        }
        if (p.limboHead == p.limboSize) {
            p.limboHead = 0;
            p.limboSize = 0;
        }
        if (!orphans.isEmpty() && registry.tryLock()) {
            try {
                orphans.removeIf(o -> {
                    if (o[1] <= safe) {
                        reclaim.reclaim(o, 0, 1);
                        return true;
                    }
                    return false;
                });
            } finally {
                registry.unlock();
            }
        }
    }

    /** Moves the global epoch on if every running operation has seen the current one. */
    private void tryAdvance() {
        long e = globalEpoch.get();
        for (Participant q : participants) {
            long qe = q.epoch;
            if (qe != IDLE && qe != e) {
                return;
            }
        }
        globalEpoch.compareAndSet(e, e + 1);
    }

    /**
     * Runs {@code action} while no operation runs and none can start. Every retired block is
     * reclaimed first (no reader is left). The calling thread must not be inside an operation.
     */
    void runExclusive(Runnable action) {
        runExclusiveIf(ALWAYS, action);
    }

    private static final BooleanSupplier ALWAYS = () -> true;

    /**
     * As {@link #runExclusive}, where {@code needed} still holds once this thread's turn to run
     * exclusively has come, asked before anything is drained; {@return whether it ran}. Threads that
     * found the heap short at once each drained every operation in turn, one after another, where the
     * first drain had freed what all of them needed (YCSB's A from 256 threads: 213 drains in one phase,
     * docs/lab/2026-11-30-replays-by-batch-kind.md).
     */
    boolean runExclusiveIf(BooleanSupplier needed, Runnable action) {
        if (local.get().epoch != IDLE) {
            throw new IllegalStateException("an exclusive phase cannot start inside an operation");
        }
        exclusive.lock();
        try {
            if (shutPool != null) {
                throw new org.gphash.IndexClosedException(shutPool);
            }
            if (!needed.getAsBoolean()) {
                return false;
            }
            exclusiveRequested = true;
            awaitDrained();
            // No reader is left, so every retired block is free to reuse (a heap growth may then
            // find it need not grow after all).
            reclaimAll();
            action.run();
            return true;
        } finally {
            exclusiveRequested = false;
            exclusive.unlock();
        }
    }

    /**
     * From inside the exclusive phase of close: every operation and exclusive phase that starts from
     * now on throws {@link org.gphash.IndexClosedException} naming {@code pool}.
     */
    void shutDown(Path pool) {
        shutPool = pool;
    }

    /** Waits until every operation that entered before the flag was raised has exited. */
    private void awaitDrained() {
        for (Participant q : participants) {
            for (int round = 0; q.epoch != IDLE; round++) {
                IdleStrategy.SPIN_THEN_PARK.idle(round);
            }
        }
    }

    /** With operations drained, nothing can read retired blocks: free them all. */
    private void reclaimAll() {
        registry.lock();
        try {
            for (Participant q : participants) {
                reclaim.reclaim(q.limboOffset, q.limboHead, q.limboSize);
                q.limboHead = 0;
                q.limboSize = 0;
            }
            for (long[] o : orphans) {
                reclaim.reclaim(o, 0, 1);
            }
            orphans.clear();
        } finally {
            registry.unlock();
        }
    }

    /** Number of retired blocks not yet reclaimed (approximate while operations run). */
    public long pendingReclamation() {
        long n = 0;
        for (Participant q : participants) {
            n += q.limboSize - q.limboHead;
        }
        return n + orphans.size();
    }
}
