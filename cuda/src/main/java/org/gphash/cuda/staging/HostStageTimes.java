package org.gphash.cuda.staging;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * Host time per stage of host batches, always on (a clock read or two per chunk): what a host batch
 * costs the calling thread beside the GPU's own stages ({@link org.gphash.cuda.pipeline.StageProfile}). Waits for the engine's
 * lock are added by every thread; the rest by the thread holding it.
 */
public final class HostStageTimes {

    /** The stages, as reported. */
    public enum Stage {
        /** Waiting for the engine's lock (other threads' batches). */
        LOCK_WAIT,
        /** Queueing a chunk's copy in, including the Java copy into staging memory for an unpinned batch. */
        STAGE_IN,
        /** Queueing the pipeline's kernels. */
        ENQUEUE,
        /** Blocked under the lock until a chunk's kernels and copy out are done (its own, or an older batch's whose lane it needs). */
        AWAIT_GPU,
        /** Waiting outside the lock for the caller's last chunk, while other threads queue theirs. */
        AWAIT_UNLOCKED,
        /** Moving a chunk's results from staging memory into the caller's result (unpinned results only). */
        COPY_OUT,
        /** Growing the value heap before a chunk that needs blocks (for host writes: the chunks added, host operations kept out). */
        HEAP_GROWTH,
        /**
         * A heap growth for host writes: keeping host operations out until those inside have left, and
         * BktCache's load ended, before the chunks are added ({@link #HEAP_GROWTH}).
         */
        HEAP_DRAIN,
        /**
         * A heap growth for host writes made ready with host operations still running: the file
         * extended in place and its new pages registered with CUDA ({@code PoolTable.prepareHeapGrowth}).
         */
        HEAP_PREPARE,
        /** Registering a batch's or result's memory with CUDA ({@link BatchPinning}). */
        PIN,
        /** Reading a chunk's kinds (value writes, deletes, reads) and testing its keys for repeats ({@link org.gphash.cuda.routing.DistinctKeys}). */
        PLAN,
        /** After the batch: operations rerun after a resize, and the heap grown ahead of the next batch. */
        AFTER,
        /**
         * Waiting for the pool to be lent to host writes (every host thread that found it not lent: the
         * lender for the engine's lock, the others for the lender).
         */
        LEND_WAIT,
        /** Lending the pool to host writes, under the lock: the GPU drained, BktCache's load ended, the heap's free space to the host. */
        LEND,
        /** Taking the pool back from host writes: the buckets they changed copied into the GPU's copies. */
        TAKE_BACK_REFRESH,
        /** Taking the pool back from host writes: the blocks they retired reclaimed, the heap's free space to the GPU. */
        TAKE_BACK_HEAP,
        /** The packed route ({@link PackedValueBatches}), before the lock: the batch laid out in the thread's page-locked memory. */
        PACKED_LAY_OUT,
        /** The packed route under the lock: a chunk's columns copied in and its values spread into the device route's column. */
        PACKED_IN,
        /** The packed route under the lock: the device route's run of a chunk. */
        PACKED_RUN,
        /**
         * The packed route: a chunk's codes and lengths back, its values read packed and copied back
         * (a batch's last chunk by its own thread after the lock, the others under it).
         */
        PACKED_BACK,
        /** The packed route after the lock: outcomes and values read moved into the result (copies back apart). */
        PACKED_FINISH,
        /**
         * All of a batch on the host route ({@code HostOperations.run}): the lend's wait, the gate's
         * waits and the time inside it, by every thread. Beside the bench's time per batch it says
         * whether a host batch's time is spent in the route or before it.
         */
        HOST_ROUTE,
        /** A host batch's waits at the closed gate while the pool stayed lent (a lock holder waiting for those inside, a heap growth). */
        HOST_GATE_WAIT,
        /** A host batch's time inside the gate: the CPU engine's code on the pool. */
        HOST_IN_GATE,
        /** Of {@link #HOST_IN_GATE}, that of batches which spent over {@code HostOperations.SLOW_IN_GATE_NANOS} inside. */
        HOST_IN_GATE_SLOW,
        /** Under the lock before the batch's path starts: the context, the in-flight bound, the result's reset. */
        ENTRY,
        /** All of the path's execute, of which the stages above are parts. */
        PATH,
        /** All of execute, lock waits included, for the shares above. */
        TOTAL
    }

    private final LongAdder[] nanos = new LongAdder[Stage.values().length];

    public HostStageTimes() {
        for (int i = 0; i < nanos.length; i++) {
            nanos[i] = new LongAdder();
        }
    }

    public void add(Stage stage, long n) {
        nanos[stage.ordinal()].add(n);
    }

    /** Nanoseconds per stage since open (or the last {@link #reset}), lower-case names. */
    public Map<String, Long> snapshot() {
        Map<String, Long> out = new LinkedHashMap<>();
        for (Stage s : Stage.values()) {
            out.put(s.name().toLowerCase(Locale.ROOT), nanos[s.ordinal()].sum());
        }
        return out;
    }

    public void reset() {
        for (LongAdder a : nanos) {
            a.reset();
        }
    }
}
