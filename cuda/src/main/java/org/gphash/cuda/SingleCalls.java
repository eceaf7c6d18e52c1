package org.gphash.cuda;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.Geometry;
import org.gphash.IndexClosedException;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.cuda.routing.ConditionalBatches;
import org.gphash.cuda.routing.Router;
import org.gphash.spi.SegmentBytes;
import org.gphash.spi.SubmittedBatch;

/**
 * A {@link GpuEngine}'s single calls, run by the calling thread on the mapped pool with the CPU
 * engine's code between the GPU's work ({@link HostOperations}): gets by the router's route for a
 * single get (the host, or with every write on the GPU the host read and then the GPU), writes on the
 * host, and under the engine's lock as a batch of one only where a write needs the table or the heap
 * grown (or every write runs on the GPU, {@code hostBatchesMax=0}).
 */
final class SingleCalls {

    private final GpuEngine engine;
    private final Geometry geometry;
    /** The batch of one write, reused under the engine's lock. */
    private final Batch single;
    private final BatchResult singleResult;
    /** Each thread's batch of one get, for gets run outside the lock ({@link #getAlongside}). */
    private final ThreadLocal<Batch> oneGet;
    private final ThreadLocal<BatchResult> oneGetResult;
    /** Whether writes run on the host ({@link Router#writesOnHost}). */
    private final boolean writesOnHost;
    /** Whether gets do ({@link Router#singleGetsOnHost}). */
    private final boolean getsOnHost;
    /** Whether values have lengths of their own ({@link Router#valueLengths}). */
    private final boolean valueLengths;

    SingleCalls(GpuEngine engine, Geometry geometry, Router router) {
        this.engine = engine;
        this.writesOnHost = router.writesOnHost();
        this.getsOnHost = router.singleGetsOnHost();
        this.valueLengths = router.valueLengths();
        this.geometry = geometry;
        // A write of any length where values have their own (Router.valueLengths): packed, as callers' batches are.
        this.single = Batch.create(geometry.keySize(), geometry.valueSize(), 1, router.valueLengths());
        this.singleResult = BatchResult.create(geometry.valueSize(), 1, router.valueLengths());
        this.oneGet = ThreadLocal.withInitial(() -> Batch.create(geometry.keySize(), geometry.valueSize(), 1));
        this.oneGetResult = ThreadLocal.withInitial(() -> new BatchResult(geometry.valueSize(), 1));
    }

    /**
     * A get, by the router's choice for a single get: on the host, straight on the pool
     * ({@link Router#singleGetsOnHost}, {@link HostOperations#get}); else by the GPU's routes for
     * {@link Router.Call#SINGLE_GET}, the only ones that need a batch of one.
     */
    Outcome get(MemorySegment key, MemorySegment valueOut) {
        if (getsOnHost) {
            return engine.hostOps.get(key, valueOut);
        }
        Batch one = oneGet(key);
        BatchResult result = oneGetResult.get();
        engine.route(Router.Call.SINGLE_GET, one, result).await();
        return outcomeOfOneGet(result, valueOut);
    }

    /**
     * A get that gives the value's length ({@code Engine.read}): on the host where single gets run there
     * (always where values have lengths of their own, {@link Router#singleGetsOnHost}), else a get by
     * the GPU's routes, whose values have the value size.
     */
    int read(MemorySegment key, MemorySegment valueOut) {
        if (getsOnHost) {
            int length = engine.hostOps.getLength(key, valueOut);
            return length < 0 || valueLengths ? length : geometry.valueSize();  // a shorter value padded
        }
        return get(key, valueOut) == Outcome.FOUND ? geometry.valueSize() : -1;
    }

    /**
     * A get run at once alongside other threads' calls, outside the engine's lock: the calling thread
     * probes the mapped pool itself with the CPU engine's code ({@link HostOperations#read}, inside the epoch host writes respect) between
     * the engine's batches ({@link HostReadGate}), since a host thread's single get would otherwise
     * cross PCIe twice to read host memory (docs/USAGE.md, "The GPU engine", has the two latencies). Null while a
     * batch runs under the lock: nothing was done, and the coalescer then queues the get for a batch
     * ({@link Router.Call#GET_AT_ONCE}).
     */
    Outcome getAlongside(MemorySegment key, MemorySegment valueOut) {
        Batch one = oneGet(key);
        BatchResult result = oneGetResult.get();
        return engine.route(Router.Call.GET_AT_ONCE, one, result) == null ? null : outcomeOfOneGet(result, valueOut);
    }

    /**
     * A put, insert, update or delete: on the host ({@link HostOperations}), else (when it needs the
     * table or the heap grown) as a batch of one under the engine's lock.
     */
    Outcome write(OpKind kind, MemorySegment key, MemorySegment value) {
        Outcome o = onHost(kind, key, value, null);
        if (o != null) {
            return o;
        }
        synchronized (engine) {
            single.clear();
            single.add(kind, key, value);
            engine.execute(single, singleResult);
            return singleResult.outcome(0);
        }
    }

    /**
     * A write on the host (single writes run there whatever the router's costs); null when it needs
     * the owner, or when every write runs on the GPU ({@link Router#writesOnHost}).
     */
    private Outcome onHost(OpKind kind, MemorySegment key, MemorySegment value, MemorySegment expected) {
        return writesOnHost ? engine.hostOps.write(kind, key, value, expected) : null;
    }

    /**
     * A conditional write on the host, else as a batch of one conditional operation, run as every such
     * batch is ({@link ConditionalBatches}).
     */
    Outcome compareAndSet(MemorySegment key, MemorySegment expected, MemorySegment value) {
        Outcome o = onHost(OpKind.COMPARE_AND_SET, key, value, expected);
        if (o != null) {
            return o;
        }
        synchronized (engine) {
            single.clear();
            single.compareAndSet(SegmentBytes.copyOf(key), SegmentBytes.copyOf(expected), SegmentBytes.copyOf(value));
            engine.execute(single, singleResult);
            return singleResult.outcome(0);
        }
    }

    Outcome compareAndDelete(MemorySegment key, MemorySegment expected) {
        Outcome o = onHost(OpKind.COMPARE_AND_DELETE, key, null, expected);
        if (o != null) {
            return o;
        }
        synchronized (engine) {
            single.clear();
            single.compareAndDelete(SegmentBytes.copyOf(key), SegmentBytes.copyOf(expected));
            engine.execute(single, singleResult);
            return singleResult.outcome(0);
        }
    }

    /**
     * A batch of one get run on the host, inside the gate ({@link Router.Route#HOST_READ}); null while
     * a lock holder has the gate closed.
     */
    SubmittedBatch readOnHost(Batch one, BatchResult result) {
        HostReadGate gate = engine.hostReaders;
        if (!gate.tryEnter()) {
            if (engine.closed) {
                throw new IndexClosedException(engine.pool.file().path());
            }
            return null;
        }
        try {
            if (engine.closed) {
                throw new IndexClosedException(engine.pool.file().path());
            }
            result.reset(1);
            result.setOutcome(0, engine.hostOps.read(one.keys(), result.values()) ? Outcome.FOUND : Outcome.NOT_FOUND);
            return SubmittedBatch.DONE;
        } finally {
            gate.exit();
        }
    }

    /** This thread's batch of one get, holding {@code key}. */
    private Batch oneGet(MemorySegment key) {
        Batch one = oneGet.get();
        one.clear();
        one.setSize(1);
        one.kinds().set(ValueLayout.JAVA_BYTE, 0, (byte) OpKind.GET.ordinal());
        MemorySegment.copy(key, 0, one.keys(), 0, geometry.keySize());
        return one;
    }

    private Outcome outcomeOfOneGet(BatchResult result, MemorySegment valueOut) {
        Outcome o = result.outcome(0);
        if (valueOut != null && o == Outcome.FOUND) {
            MemorySegment.copy(result.values(), 0, valueOut, 0, geometry.valueSize());
        }
        return o;
    }
}
