package org.gphash.cuda;

import static jcuda.driver.JCudaDriver.cuEventCreate;
import static jcuda.driver.JCudaDriver.cuEventDestroy;
import static jcuda.driver.JCudaDriver.cuEventRecord;
import static jcuda.driver.JCudaDriver.cuEventSynchronize;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoHAsync;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoDAsync;
import static jcuda.driver.JCudaDriver.cuStreamCreate;
import static jcuda.driver.JCudaDriver.cuStreamDestroy;
import static jcuda.driver.JCudaDriver.cuStreamWaitEvent;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayDeque;

import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;
import jcuda.driver.CUfunction;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.OpKind;

/**
 * Small batches of gets in one launch (pipeline/pipe_small_reads.cuh): one copy in (the keys), one
 * kernel (probe the mirror, copy the value from the pool), one copy out (values and codes), one
 * wait. The pipeline's few dozen launches cost a batch tens of microseconds whatever its size, which
 * is what a coalesced batch of a handful of single-key gets would otherwise wait for; below
 * {@link #MAX_OPS} operations its ordering of pool reads by address buys less than that.
 *
 * <p>{@code -Dgphash.smallReads=N} sets the largest batch taken this way (0: never), for
 * measurements. Up to {@link #SLOTS} batches may be queued before their results are harvested
 * ({@link #queue}, {@link #harvest}). Not thread-safe (called under the engine's lock).
 */
final class SmallReads implements AutoCloseable {

    /** Largest batch of gets run in one launch. */
    static final int MAX_OPS = Integer.getInteger("gphash.smallReads", 1024);
    /** Fields of SmallReadsArgs (pipe_small_reads.cuh). */
    static final int ARGS_FIELDS = 4;

    private static final byte GET = (byte) OpKind.GET.ordinal();

    /**
     * Batches queued at once, at most ({@link #queue}): the coalescer keeps up to two in flight
     * ({@code Coalescing.batchesInFlight}), gathering and queueing the next while the GPU runs the
     * last. A queue past this waits for the oldest.
     */
    static final int SLOTS = 2;

    /** One batch's buffers and, while it is queued, its result and ticket. */
    private static final class Slot implements AutoCloseable {
        final PinnedBuffer hostKeys = new PinnedBuffer();
        final PinnedBuffer hostOut = new PinnedBuffer();
        final DeviceBuffer keys = new DeviceBuffer();
        final DeviceBuffer out = new DeviceBuffer();
        final CUevent done = new CUevent();
        /** The slot's own stream, so that one batch's copies overlap another's kernel. */
        final CUstream stream = new CUstream();
        /** Recorded on the engine's stream at queueing: the slot's stream starts after what is there. */
        final CUevent after = new CUevent();
        BatchResult result;
        int n;
        long ticket;

        Slot() {
            cuEventCreate(done, CUevent_flags.CU_EVENT_DISABLE_TIMING);
            cuEventCreate(after, CUevent_flags.CU_EVENT_DISABLE_TIMING);
            cuStreamCreate(stream, CUstream_flags.CU_STREAM_NON_BLOCKING);
        }

        @Override
        public void close() {
            hostKeys.close();
            hostOut.close();
            keys.close();
            out.close();
            cuEventDestroy(done);
            cuEventDestroy(after);
            cuStreamDestroy(stream);
        }
    }

    private final CUfunction kernel;
    private final int keySize;
    private final int valueSize;
    private final Slot[] slots = new Slot[SLOTS];
    /** Queued batches not yet harvested, oldest first. */
    private final ArrayDeque<Slot> queued = new ArrayDeque<>(SLOTS);
    private long lastTicket;
    /** Tickets failedFrom..failedThrough failed with {@link #failure} (their results never came). */
    private long failedFrom = 1;
    private long failedThrough;
    private RuntimeException failure;
    private long batches;

    SmallReads(CUfunction kernel, int keySize, int valueSize) {
        this.kernel = kernel;
        this.keySize = keySize;
        this.valueSize = valueSize;
        for (int i = 0; i < SLOTS; i++) {
            slots[i] = new Slot();
        }
    }

    /** Whether {@code batch} runs here: at most {@link #MAX_OPS} operations, every one a get. */
    static boolean accepts(Batch batch) {
        int n = batch.size();
        if (n == 0 || n > MAX_OPS) {
            return false;
        }
        MemorySegment kinds = batch.kinds();
        for (int i = 0; i < n; i++) {
            if (kinds.get(ValueLayout.JAVA_BYTE, i) != GET) {
                return false;
            }
        }
        return true;
    }

    /**
     * Queues {@code batch} (accepted by {@link #accepts}) after what is queued on {@code stream} (the
     * engine's), on a stream of its slot's own, without waiting: queued batches of gets overlap each
     * other on the GPU (they only read, and the engine runs nothing that writes until it has
     * harvested them). {@link #harvest} with the returned ticket puts its outcomes and values into
     * {@code result}. The batch's keys are copied before this returns. {@code table},
     * {@code mirrorTable}, {@code cache}: the pool's, the mirror's and the cache's parameters;
     * {@code clock}: the cache's.
     */
    long queue(CUstream stream, Batch batch, BatchResult result, byte[] table, byte[] mirrorTable, byte[] cache,
               long clock) {
        Slot s = freeSlot();
        int n = batch.size();
        long keyBytes = (long) n * keySize;
        long outBytes = (long) n * valueSize + n;
        s.hostKeys.ensure(keyBytes);
        s.hostOut.ensure(outBytes);
        s.keys.ensure(keyBytes);
        s.out.ensure(outBytes);
        MemorySegment.copy(batch.keys(), 0, s.hostKeys.segment(), 0, keyBytes);
        cuEventRecord(s.after, stream);
        cuStreamWaitEvent(s.stream, s.after, 0);
        cuMemcpyHtoDAsync(s.keys.pointer(), s.hostKeys.pointer(), keyBytes, s.stream);
        byte[] args = KernelParams.longs(n, s.keys.address(), s.out.address(), clock);
        // One sub-group of lanes (a bucket's slots, at least 4) or one warp per get: enough blocks for all.
        Launcher.launch(kernel, (long) n * 32, s.stream, table, mirrorTable, cache, args);
        cuMemcpyDtoHAsync(s.hostOut.pointer(), s.out.pointer(), outBytes, s.stream);
        cuEventRecord(s.done, s.stream);
        batches++;
        s.result = result;
        s.n = n;
        s.ticket = ++lastTicket;
        queued.addLast(s);
        return s.ticket;
    }

    /** A slot no batch holds: the oldest queued one's, harvested, when all are taken. */
    private Slot freeSlot() {
        if (queued.size() == SLOTS) {
            harvest(queued.peekFirst().ticket);
        }
        for (Slot s : slots) {
            if (!queued.contains(s)) {
                return s;
            }
        }
        throw new IllegalStateException("no free slot");  // cannot happen: fewer than SLOTS are queued
    }

    /**
     * Waits for the queued batches up to {@code ticket} (Long.MAX_VALUE: all), oldest first, and puts
     * their results in place; nothing for tickets harvested already. If waiting failed, that batch
     * and every batch queued with it fail, now and whenever their tickets are harvested again.
     */
    void harvest(long ticket) {
        if (ticket >= failedFrom && ticket <= failedThrough) {
            throw failure;
        }
        while (!queued.isEmpty() && queued.peekFirst().ticket <= ticket) {
            Slot s = queued.peekFirst();
            try {
                cuEventSynchronize(s.done);
            } catch (RuntimeException e) {
                fail(e);
                throw e;
            }
            queued.pollFirst();
            MemorySegment o = s.hostOut.segment();
            MemorySegment.copy(o, (long) s.n * valueSize, s.result.outcomeCodes(), 0, s.n);
            MemorySegment.copy(o, 0, s.result.values(), 0, (long) s.n * valueSize);
            s.result = null;
        }
    }

    /** Fails every queued batch with {@code why} (the engine is abandoned: their results never come). */
    void dropQueued(RuntimeException why) {
        if (!queued.isEmpty()) {
            fail(why);
        }
    }

    /** Whether a batch is queued and not yet harvested. */
    boolean hasQueued() {
        return !queued.isEmpty();
    }

    private void fail(RuntimeException why) {
        failedFrom = queued.peekFirst().ticket;
        failedThrough = lastTicket;
        failure = why;
        queued.clear();
    }

    /** Batches run here so far. */
    long batches() {
        return batches;
    }

    @Override
    public void close() {
        for (Slot s : slots) {
            s.close();
        }
    }
}
