package org.gphash.cuda.routing;


import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.GpuTuning;
import org.gphash.spi.SubmittedBatch;

/**
 * The one place that chooses how the GPU engine runs a call: a route per call, from what the call is,
 * the batch's size and kinds, whether the engine runs on the index mirror, {@link GpuTuning}, and
 * what batches cost on the host and on the GPU as measured on this machine ({@link RouteCosts}): a
 * batch runs on the host, with the CPU engine's code on the mapped pool, where that is estimated no
 * slower than the GPU route it would take.
 * The engine runs what it is given ({@link Routes}); the choice is pure and tested without a GPU
 * ({@code RouterTest}, with a fake engine behind {@link Routes}).
 *
 * <p>A call gets its routes in the order to try them. Only the routes that run outside the engine's
 * lock may decline, having done nothing: a host read while a batch holds the pool, a small batch of
 * gets when every slot is busy. The routes under the lock never decline, so every call but a get
 * "at once" (the coalescer's, which then queues the get) ends on a route that ran.
 *
 * <p>Inside the pipeline route, chunk by chunk, the router also decides whether a chunk is grouped by
 * key ({@link #grouping}) and whether the values it reads go straight into the caller's result
 * ({@link #valuesInPlace}). Thread-safe (every thread's calls route at once).
 */
public final class Router {

    /** How a call reaches the data. Every one of them is measured to pay against the next (docs/DESIGN.md). */
    public enum Route {
        /** The calling thread probes the mapped pool with the CPU engine's code, between batches: a single get. */
        HOST_READ(false),
        /**
         * The calling thread runs the batch on the mapped pool with the CPU engine's code, between the
         * GPU's work (writes too, while the engine lends the pool to the host); declines, having done
         * nothing, when its first write needs a resize or heap growth, which are the GPU routes' to do.
         */
        HOST(false),
        /** A small batch of gets in one launch on a slot of its own, outside the engine's lock. */
        SMALL_READS(false),
        /** The same, under the lock after the slots drained (so a slot is free). */
        SMALL_READS_LOCKED(true),
        /** A small writing batch in one copy each way and one cooperative launch (pipe_small_writes.cuh). */
        SMALL_WRITES(true),
        /** The v2 pipeline over the HBM index mirror, in chunks on four lanes, several threads' batches in flight. */
        PIPELINE(true),
        /** Per-operation kernels probing the pool: the engine without the index mirror. */
        POOL_PATH(true),
        /** Segments of gets, a compare on the host and plain writes ({@link ConditionalBatches}). */
        CONDITIONAL(true),
        /**
         * A batch whose values have lengths of their own (a format 3 pool's, {@code Batch.valuesPacked}),
         * staged as a device-resident batch's columns with a lengths column and run by the device route
         * ({@code PackedValueBatches}): the other GPU routes copy values of the value size.
         */
        PACKED(true);

        /** Whether the route runs under the engine's lock (and so never declines). */
        final boolean locked;

        Route(boolean locked) {
            this.locked = locked;
        }
    }

    /** What asks for a route. */
    public enum Call {
        /** A batch from {@code execute} or {@code submit}. */
        BATCH,
        /** A plain segment of a conditional batch, already under the engine's lock. */
        SEGMENT,
        /** A single get ({@code Engine.get}). */
        SINGLE_GET,
        /** A get the caller wants run at once or not at all ({@code Engine.getAlongside}). */
        GET_AT_ONCE
    }

    /** How the pipeline groups a chunk's operations by key. */
    public enum Grouping {
        /** Key table, sort and scans: operations on one key combined in batch order. */
        BY_KEY,
        /** None: reads whose keys did not repeat last time, or writes whose keys the host found distinct. */
        NONE,
        /** Reads: the GPU samples the chunk's keys and groups when they repeat. */
        AS_SAMPLED
    }

    /** The engine's side: runs a batch by a route. */
    @FunctionalInterface
    public interface Routes {
        /**
         * Runs or starts {@code batch} by {@code route}, its result into {@code result}; null when the
         * route declined, having done nothing (only routes outside the lock may).
         */
        public SubmittedBatch run(Route route, Batch batch, BatchResult result);
    }

    private static final Route[] AT_ONCE = {Route.HOST_READ};
    private static final Route[] POOL = {Route.POOL_PATH};
    private static final Route[] PIPELINE = {Route.PIPELINE};
    private static final Route[] CONDITIONAL = {Route.CONDITIONAL};
    private static final Route[] SMALL_READS = {Route.SMALL_READS, Route.SMALL_READS_LOCKED};
    private static final Route[] SMALL_READS_LOCKED = {Route.SMALL_READS_LOCKED};
    private static final Route[] SMALL_WRITES = {Route.SMALL_WRITES};
    private static final Route[] GET_ON_MIRROR = {Route.HOST_READ, Route.SMALL_READS, Route.SMALL_READS_LOCKED};
    private static final Route[] GET_ON_PIPELINE = {Route.HOST_READ, Route.PIPELINE};
    private static final Route[] GET_ON_POOL = {Route.HOST_READ, Route.POOL_PATH};
    private static final Route[] HOST_ONLY = {Route.HOST};
    private static final Route[] HOST_THEN_CONDITIONAL = {Route.HOST, Route.CONDITIONAL};
    private static final Route[] HOST_THEN_POOL = {Route.HOST, Route.POOL_PATH};
    private static final Route[] HOST_THEN_SMALL_READS = {Route.HOST, Route.SMALL_READS, Route.SMALL_READS_LOCKED};
    private static final Route[] HOST_THEN_SMALL_WRITES = {Route.HOST, Route.SMALL_WRITES};
    private static final Route[] HOST_THEN_PIPELINE = {Route.HOST, Route.PIPELINE};
    private static final Route[] PACKED = {Route.PACKED};
    private static final Route[] HOST_THEN_PACKED = {Route.HOST, Route.PACKED};

    private final GpuTuning tuning;
    private final boolean mirror;
    private final RouteCosts costs;
    /** Whether the engine's values have lengths of their own (format 3 on the index mirror): its callers' batches are packed. */
    private final boolean valueLengths;

    /**
     * @param tuning the sizes that choose
     * @param mirror whether the engine runs on the index mirror (else every batch takes the pool path)
     */
    public Router(GpuTuning tuning, boolean mirror) {
        this(tuning, mirror, false, new RouteCosts());
    }

    /**
     * @param valueLengths whether the engine's values have lengths of their own ({@code Engine.valueLengths}:
     *                     a format 3 pool on the index mirror), its single gets then on the host, which
     *                     gives each value's length
     */
    public Router(GpuTuning tuning, boolean mirror, boolean valueLengths) {
        this(tuning, mirror, valueLengths, new RouteCosts());
    }

    /**
     * @param costs what batches cost on the host and on the GPU, as measured (tests pass figures of their own)
     */
    public Router(GpuTuning tuning, boolean mirror, RouteCosts costs) {
        this(tuning, mirror, false, costs);
    }

    /** As above, all of it given (tests pass costs of their own). */
    public Router(GpuTuning tuning, boolean mirror, boolean valueLengths, RouteCosts costs) {
        this.tuning = tuning;
        this.mirror = mirror;
        this.valueLengths = valueLengths && mirror;
        this.costs = costs;
    }

    /** {@return whether the engine's values have lengths of their own (its callers' batches packed)} */
    public boolean valueLengths() {
        return valueLengths;
    }

    /** Whether single writes run on the host ({@link GpuTuning#hostBatchesMax()} not 0). */
    public boolean writesOnHost() {
        return tuning.hostBatchesMax() > 0;
    }

    /**
     * Whether a single get runs on the host: whenever writes do (a get waits for the GPU's work in
     * progress rather than taking the GPU from the host's writes: a GPU read stops them while it runs),
     * and where values have lengths of their own (the host's read gives the length; the one-launch
     * reads copy places of the value size). The caller runs it straight on the pool, with no batch of
     * one ({@link #routes}'s {@code HOST} for {@link Call#SINGLE_GET}).
     */
    public boolean singleGetsOnHost() {
        return writesOnHost() || valueLengths;
    }

    /** {@return the measured costs this router chooses between the host and the GPU by} */
    public RouteCosts costs() {
        return costs;
    }

    /** {@return whether batches run on the index mirror} */
    public boolean mirror() {
        return mirror;
    }

    /** {@return the tuning this router chooses by} */
    public GpuTuning tuning() {
        return tuning;
    }

    /**
     * Runs {@code batch} by the first of its routes that does not decline, and records what it cost
     * ({@link #measured}): the router both chooses by the costs and measures them, in one place.
     *
     * @return the batch, run or started; null only for {@link Call#GET_AT_ONCE} when the host read declined
     */
    public SubmittedBatch run(Call call, Batch batch, BatchResult result, Routes routes) {
        for (Route r : routes(call, batch)) {
            long t0 = System.nanoTime();
            SubmittedBatch s = routes.run(r, batch, result);
            if (s != null) {
                return call == Call.SEGMENT ? s : measured(r, batch, s, t0);
            }
            if (r.locked) {
                throw new IllegalStateException("route " + r + " declined a batch of " + batch.size()
                        + " operations; routes under the engine's lock run every batch they are given");
            }
        }
        return null;
    }

    /**
     * What a GPU route cost, into {@link #costs}, as its caller saw it from {@code t0} (queueing for the
     * GPU and taking the pool back from the host included): per batch, a small batch of gets when it is
     * awaited. The host's routes are measured by the host itself, per operation and only while it runs
     * the batch ({@link RouteCosts#hostRan}); single gets not at all (they run on the host whatever the
     * costs). A segment of a conditional batch is not measured apart from it.
     */
    private SubmittedBatch measured(Route r, Batch batch, SubmittedBatch s, long t0) {
        int n = batch.size();
        boolean writes = !batch.onlyGets();
        switch (r) {
            case HOST_READ, HOST:
                return s;  // the host measures its own time, inside the gate (HostOperations)
            case SMALL_READS:
                if (s != SubmittedBatch.DONE) {  // still running: measured when it is awaited
                    return () -> {
                        s.await();
                        costs.gpuRan(n, writes, System.nanoTime() - t0);
                    };
                }
                costs.gpuRan(n, writes, System.nanoTime() - t0);
                return s;
            default:
                costs.gpuRan(n, writes, System.nanoTime() - t0);
                return s;
        }
    }

    /** The routes for {@code call} on {@code batch}, in the order to try them (shared arrays: do not change). */
    public Route[] routes(Call call, Batch batch) {
        switch (call) {
            case GET_AT_ONCE:
                return AT_ONCE;
            case SINGLE_GET:
                if (singleGetsOnHost()) {
                    return HOST_ONLY;
                }
                return !mirror ? GET_ON_POOL : tuning.smallReadsMax() >= 1 ? GET_ON_MIRROR : GET_ON_PIPELINE;
            case SEGMENT:
                if (batch.hasConditionalOperations()) {
                    throw new IllegalArgumentException("a segment of a conditional batch holds only plain operations");
                }
                return batch.valuesPacked() ? PACKED : plain(batch, false);
            default:
                Route[] gpu = batch.hasConditionalOperations() ? CONDITIONAL : batch.valuesPacked() ? PACKED : plain(batch, true);
                int n = batch.size();
                return hostMayRun(n) && costs.choose(n, !batch.onlyGets()) ? hostFirst(gpu) : gpu;
        }
    }

    /** Whether the host route may take a caller's batch of {@code n} operations at all ({@link GpuTuning#hostBatchesMax()}). */
    private boolean hostMayRun(int n) {
        return n >= 1 && n <= tuning.hostBatchesMax();
    }

    /**
     * Whether {@code batch}, a caller's, is cheaper on the host by the measured costs now
     * ({@link RouteCosts#onHost}): {@link #routes} then runs it there, save a batch now and then that
     * measures the GPU again. A coalescer in front asks this to run such a batch on its caller's thread
     * rather than merge it ({@code Engine.runsBatchInPlace}).
     */
    public boolean prefersHost(Batch batch) {
        int n = batch.size();
        return hostMayRun(n) && costs.onHost(n, !batch.onlyGets());
    }

    /** {@code gpu}'s routes after {@link Route#HOST}: where the host declines (a write needs the GPU to grow the table). */
    private static Route[] hostFirst(Route[] gpu) {
        if (gpu == CONDITIONAL) {
            return HOST_THEN_CONDITIONAL;
        }
        if (gpu == POOL) {
            return HOST_THEN_POOL;
        }
        if (gpu == SMALL_READS) {
            return HOST_THEN_SMALL_READS;
        }
        if (gpu == SMALL_WRITES) {
            return HOST_THEN_SMALL_WRITES;
        }
        if (gpu == PACKED) {
            return HOST_THEN_PACKED;
        }
        return HOST_THEN_PIPELINE;
    }

    /** The routes of a batch of plain operations; {@code outsideLock}: the caller does not hold the lock. */
    private Route[] plain(Batch batch, boolean outsideLock) {
        if (!mirror) {
            return POOL;
        }
        int n = batch.size();
        if (n < 1 || n > Math.max(tuning.smallReadsMax(), tuning.smallWritesMax())) {
            return PIPELINE;
        }
        boolean gets = batch.onlyGets();
        if (gets && n <= tuning.smallReadsMax()) {
            return outsideLock ? SMALL_READS : SMALL_READS_LOCKED;
        }
        if (!gets && n <= tuning.smallWritesMax()) {
            return SMALL_WRITES;
        }
        return PIPELINE;
    }

    /**
     * Whether a shard's part of {@code batch} ({@code count} of its operations,
     * {@code Engine.executeInPlace}) runs where it lies, gathered and scattered on the GPU: on the
     * index mirror, for a batch of plain operations whose values have the value size (not packed) and
     * a part the pipeline would run. Any other part
     * the sharded index copies out and runs as a batch of its own, by the routes above (small parts
     * take the one-launch routes, conditional ones compare on the host under the lock).
     */
    public boolean runsInPlace(Batch batch, int count) {
        return mirror && !batch.hasConditionalOperations() && !batch.valuesPacked()
                && count > Math.max(tuning.smallReadsMax(), tuning.smallWritesMax());
    }

    /**
     * Whether a device-resident batch of {@code n} operations ({@code Engine.executeOnDevice}), all of
     * them gets by the GPU's count of its kinds, runs in one launch from its own columns (the small
     * reads kernel) rather than through the pipeline: on the index mirror, up to
     * {@link GpuTuning#smallReadsMax()}, as a host batch of gets does.
     */
    public boolean runsDeviceGetsInOneLaunch(long n, boolean onlyGets) {
        return mirror && onlyGets && n >= 1 && n <= tuning.smallReadsMax();
    }

    /**
     * Whether a writing run of {@code n} operations in the pipeline (a device-resident batch's slice,
     * a rerun after a resize, a small chunk) runs in one cooperative launch of the small writes'
     * kernel rather than as the staged pipeline's two to three dozen launches: up to
     * {@code smallWritesMax} ({@link GpuTuning#smallWritesMax()}), as a host batch does.
     */
    public static boolean writesInOneLaunch(long n, boolean writes, int smallWritesMax) {
        return writes && n >= 1 && n <= smallWritesMax;
    }

    /**
     * Whether the pipeline checks a writing chunk of {@code ops} operations for distinct keys on the
     * host ({@link DistinctKeys}): small ones only, where the grouping's fixed cost is most of the
     * chunk's time.
     */
    public boolean checksDistinct(int ops) {
        return ops >= 1 && ops <= tuning.distinctWritesMax();
    }

    /**
     * How a chunk is grouped: a writing chunk by key unless its keys are distinct; a chunk that only
     * reads not at all when the last chunk of reads did not repeat its keys, else as the GPU samples it.
     */
    public static Grouping grouping(boolean writes, boolean distinctKeys, boolean lastReadsRepeated) {
        if (writes) {
            return distinctKeys ? Grouping.NONE : Grouping.BY_KEY;
        }
        return lastReadsRepeated ? Grouping.AS_SAMPLED : Grouping.NONE;
    }

    /**
     * Whether a chunk's values read go straight into the caller's pinned result: when the chunk only
     * reads and will run ungrouped. Repeated keys fan their values out in GPU memory first, and a fan-out
     * over PCIe would hold the next chunk's kernels; ungrouped reads written in place brought host
     * batches closer to device-resident ones (docs/lab/2026-11-27-host-batch-timeline.md).
     */
    public static boolean valuesInPlace(boolean resultPinned, boolean reads, boolean writes, boolean lastReadsRepeated) {
        return resultPinned && reads && !writes && !lastReadsRepeated;
    }
}
