package org.gphash.cuda.pipeline;

import static jcuda.driver.JCudaDriver.cuEventCreate;
import static jcuda.driver.JCudaDriver.cuEventDestroy;
import static jcuda.driver.JCudaDriver.cuEventRecord;
import static jcuda.driver.JCudaDriver.cuEventSynchronize;
import static jcuda.driver.JCudaDriver.cuStreamCreate;
import static jcuda.driver.JCudaDriver.cuStreamDestroy;
import static jcuda.driver.JCudaDriver.cuStreamWaitEvent;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;
import jcuda.driver.CUfunction;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.cuda.path.ReadSlot;
import org.gphash.cuda.runtime.KernelParams;
import org.gphash.cuda.runtime.Launcher;
import org.gphash.cuda.runtime.ParamStruct;
import org.gphash.cuda.staging.StagedBuffer;
import org.gphash.spi.IdleStrategy;
import org.gphash.spi.SubmittedBatch;

/**
 * Small batches of gets in one launch (pipeline/pipe_small_reads.cuh): one copy in (the keys), one
 * kernel (probe the mirror, copy the value from the pool), one copy out (values and codes), one
 * wait. The pipeline's few dozen launches cost a batch tens of microseconds whatever its size, which
 * is what a coalesced batch of a handful of single-key gets would otherwise wait for; below
 * {@link org.gphash.GpuTuning#smallReadsMax()} operations its ordering of pool reads by address buys
 * less than that. Which batches come here is the {@link org.gphash.cuda.routing.Router}'s choice.
 *
 * <p><b>Several threads at once.</b> The driver takes several host threads each queueing a batch
 * on a stream of its own far better than one thread queueing them all (SmallReadsThreadsProbe,
 * docs/lab/2026-11-27-performance-by-issue.md: 5x the batches per second at 8 to 16 threads), so batches of gets run
 * alongside each other on {@link org.gphash.GpuTuning#smallReadSlots()} slots, each with its own buffers, stream and events. A
 * slot is claimed under the engine's lock ({@link #claim}, which also takes the kernel's
 * parameters then), and its batch issued and waited for outside it ({@link #issue},
 * {@link Read#await}): gets only read, and a thread that is about to do anything else under the
 * engine's lock first waits until every claimed slot's batch has run ({@link #drain}). Between the
 * two, no slot can be claimed, since claiming takes the lock.
 */
public final class SmallReads implements AutoCloseable {

    /** Fields of SmallReadsArgs (pipe_small_reads.cuh). */
    /** SmallReadsArgs (pipeline/pipe_small_reads.cuh). */
    public static final ParamStruct ARGS = ParamStruct.of("SmallReadsArgs", "n", "keys", "out", "codes", "clock");
    public static final int ARGS_FIELDS = ARGS.words();


    // A slot's states: free; claimed and its batch being issued; issued and waiting for its
    // results to be taken; results being taken (by its owner or by a drain).
    /** SmallReadsArgs of {@code n} gets: keys in, values and codes out, the cache's clock. */
    static byte[] args(long n, long keys, long out, long codes, long clock) {
        return ARGS.writer().put("n", n).put("keys", keys).put("out", out).put("codes", codes).put("clock", clock).bytes();
    }

    private static final int FREE = 0;
    private static final int ISSUING = 1;
    private static final int QUEUED = 2;
    private static final int HARVESTING = 3;

    /** One batch's buffers, stream and events, and the parameters its kernel runs with. */
    public static final class Slot implements ReadSlot, AutoCloseable {
        /** The batch's keys in; its values read and codes out. */
        final StagedBuffer keys = new StagedBuffer();
        final StagedBuffer out = new StagedBuffer();
        final CUevent done = new CUevent();
        /** The slot's own stream, so that batches of different threads overlap. */
        final CUstream stream = new CUstream();
        /** Recorded on the engine's stream at issue: the slot's stream starts after what is there. */
        final CUevent after = new CUevent();
        final AtomicInteger state = new AtomicInteger(FREE);
        /** Set at claim, under the engine's lock: the pool's, the mirror's and the cache's parameters, the cache's clock. */
        byte[] table;
        byte[] mirrorTable;
        byte[] cache;
        long clock;
        /** The batch issued on this slot, while it is {@code QUEUED} or {@code HARVESTING}. */
        Read read;

        Slot() {
            cuEventCreate(done, CUevent_flags.CU_EVENT_DISABLE_TIMING);
            cuEventCreate(after, CUevent_flags.CU_EVENT_DISABLE_TIMING);
            cuStreamCreate(stream, CUstream_flags.CU_STREAM_NON_BLOCKING);
        }

        @Override
        public void close() {
            keys.close();
            out.close();
            cuEventDestroy(done);
            cuEventDestroy(after);
            cuStreamDestroy(stream);
        }
    }

    /**
     * A batch of gets issued on a slot: {@link #await} returns once its outcomes and values are in
     * its result, taken by the thread that awaits it or by a drain that came first; a failure is
     * thrown by every await.
     */
    final class Read implements SubmittedBatch {
        private final Slot slot;
        private final BatchResult result;
        private final int n;
        private volatile boolean done;
        private volatile RuntimeException failure;

        private Read(Slot slot, BatchResult result, int n) {
            this.slot = slot;
            this.result = result;
            this.n = n;
        }

        @Override
        public void await() {
            for (int round = 0; !done; round++) {
                if (slot.read == this && slot.state.compareAndSet(QUEUED, HARVESTING)) {
                    harvest(slot);
                } else {
                    IdleStrategy.SPIN_THEN_YIELD.idle(round);  // a drain is taking it: a wait on one event at most
                }
            }
            RuntimeException f = failure;
            if (f != null) {
                throw f;
            }
        }
    }

    private final CUfunction kernel;
    private final int keySize;
    private final int valueSize;
    /**
     * Batches of gets in flight at once, at most (32 by default: from 8 threads to 16 the probe's
     * batches per second rose only 10%); each slot holds a stream, two events and buffers grown to its
     * largest batch.
     */
    private final Slot[] slots;
    /** Where {@link #claim} starts looking, so that threads spread over the slots. */
    private final AtomicInteger nextSlot = new AtomicInteger();
    private final LongAdder batches = new LongAdder();
    /** Slots claimed now, and the most at once since open (for tests and stats). */
    private final AtomicInteger claimed = new AtomicInteger();
    private final AtomicInteger mostClaimed = new AtomicInteger();

    SmallReads(CUfunction kernel, int keySize, int valueSize, int slotCount) {
        this.kernel = kernel;
        this.keySize = keySize;
        this.valueSize = valueSize;
        this.slots = new Slot[slotCount];
        try {
            for (int i = 0; i < slots.length; i++) {
                slots[i] = new Slot();
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /** Another set of slots on the same kernel and geometry (for SmallReadsThreadsProbe). */
    SmallReads sibling() {
        return new SmallReads(kernel, keySize, valueSize, slots.length);
    }

    /** {@return the number of slots: batches of gets in flight at once, at most} */
    int slotCount() {
        return slots.length;
    }

    /**
     * A free slot, claimed, with the parameters its batch will run with; null when every slot is
     * taken. Under the engine's lock: the parameters stay valid until the next {@link #drain}.
     */
    Slot claim(byte[] table, byte[] mirrorTable, byte[] cache, long clock) {
        int from = nextSlot.getAndIncrement();
        for (int i = 0; i < slots.length; i++) {
            Slot s = slots[Math.floorMod(from + i, slots.length)];
            if (s.state.get() == FREE && s.state.compareAndSet(FREE, ISSUING)) {
                mostClaimed.accumulateAndGet(claimed.incrementAndGet(), Math::max);
                s.table = table;
                s.mirrorTable = mirrorTable;
                s.cache = cache;
                s.clock = clock;
                return s;
            }
        }
        return null;
    }

    /**
     * Issues {@code batch} (gets only, at most {@link org.gphash.GpuTuning#smallReadsMax()}) on the slot {@code s} claimed, after what
     * is on {@code stream} (the engine's), without waiting; the returned read's {@link Read#await}
     * puts its outcomes and values into {@code result}. The batch's keys are copied before this
     * returns. Any thread, outside the engine's lock; the calling thread must have the context bound.
     * If issuing fails the slot is freed and the failure thrown.
     */
    Read issue(Slot s, CUstream stream, Batch batch, BatchResult result) {
        int n = batch.size();
        try {
            long keyBytes = (long) n * keySize;
            long outBytes = (long) n * valueSize + n;
            s.keys.ensure(keyBytes);
            s.out.ensure(outBytes);
            MemorySegment.copy(batch.keys(), 0, s.keys.host(), 0, keyBytes);
            cuEventRecord(s.after, stream);
            cuStreamWaitEvent(s.stream, s.after, 0);
            s.keys.copyIn(keyBytes, s.stream);
            // The codes right after the values, so that one copy brings both back.
            byte[] args = args(n, s.keys.deviceAddress(), s.out.deviceAddress(),
                    s.out.deviceAddress() + (long) n * valueSize, s.clock);
            // One sub-group of lanes (a bucket's slots, at least 4) or one warp per get: enough blocks for all.
            Launcher.launch(kernel, (long) n * 32, s.stream, s.table, s.mirrorTable, s.cache, args);
            s.out.copyOut(outBytes, s.stream);
            cuEventRecord(s.done, s.stream);
        } catch (RuntimeException e) {
            free(s);
            throw e;
        }
        batches.increment();
        Read r = new Read(s, result, n);
        s.read = r;
        s.state.set(QUEUED);
        return r;
    }

    /**
     * Queues a device-resident batch of {@code n} gets (at most {@link org.gphash.GpuTuning#smallReadsMax()})
     * in one launch on {@code stream}, after what is there: keys are read from, and values and codes
     * written to, the caller's columns in GPU memory. Does not wait. Under the engine's lock, with the
     * parameters {@link #claim} would take.
     */
    void queueOnDevice(CUstream stream, long n, long keysAt, long outAt, long codesAt, byte[] table, byte[] mirrorTable,
                       byte[] cache, long clock) {
        Launcher.launch(kernel, n * 32, stream, table, mirrorTable, cache, args(n, keysAt, outAt, codesAt, clock));
        batches.increment();
    }

    /** Waits for the slot's batch (the caller moved it to HARVESTING), puts its results in place and frees it. */
    private void harvest(Slot s) {
        Read r = s.read;
        try {
            cuEventSynchronize(s.done);
            MemorySegment o = s.out.host();
            MemorySegment.copy(o, (long) r.n * valueSize, r.result.outcomeCodes(), 0, r.n);
            MemorySegment.copy(o, 0, r.result.values(), 0, (long) r.n * valueSize);
        } catch (RuntimeException e) {
            r.failure = e;
        } finally {
            s.read = null;
            free(s);
            r.done = true;
        }
    }

    /**
     * Under the engine's lock, before anything else runs there: waits until no slot is being issued
     * and takes the results of every batch issued (so that nothing reads the pool, the mirror or
     * the cache while what follows changes them). The threads that await those batches then find
     * their results in place.
     */
    void drain() {
        takeEachIssued(this::harvest);
    }

    /**
     * Under the engine's lock, the engine abandoned: waits until no slot is being issued or
     * harvested, then fails every batch issued and not yet harvested with {@code why} (their results
     * never come).
     */
    void abandon(RuntimeException why) {
        takeEachIssued(s -> {
            Read r = s.read;
            r.failure = why;
            s.read = null;
            free(s);
            r.done = true;
        });
    }

    /**
     * Waits until no slot is being issued or harvested by its owner (outside the lock: soon done),
     * moving each issued one to HARVESTING and handing it to {@code take}, which frees it.
     */
    private void takeEachIssued(Consumer<Slot> take) {
        for (Slot s : slots) {
            for (int round = 0;; round++) {
                int st = s.state.get();
                if (st == FREE) {
                    break;
                }
                if (st == QUEUED && s.state.compareAndSet(QUEUED, HARVESTING)) {
                    take.accept(s);
                    break;
                }
                IdleStrategy.SPIN_THEN_YIELD.idle(round);
            }
        }
    }

    /** Gives back a slot {@link #claim} gave whose batch will not be issued. */
    void release(Slot s) {
        free(s);
    }

    private void free(Slot s) {
        claimed.decrementAndGet();
        s.state.set(FREE);
    }

    /** The most slots claimed at once so far: batches of gets that were in flight together. */
    int mostInFlight() {
        return mostClaimed.get();
    }

    /** Batches run here so far. */
    long batches() {
        return batches.sum();
    }

    /** Frees the slots' GPU resources; call after {@link #drain} or {@link #abandon}. */
    @Override
    public void close() {
        for (Slot s : slots) {
            if (s != null) {
                s.close();
            }
        }
    }
}
