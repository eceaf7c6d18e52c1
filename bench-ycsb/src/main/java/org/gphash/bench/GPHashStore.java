package org.gphash.bench;

import java.util.Locale;
import java.util.Map;

import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.GPHashIndex;
import org.gphash.IndexStats;
import org.gphash.cuda.GpuDiagnostics;
import org.gphash.cuda.GpuEngineFeatures;

/**
 * The GPHash engine through its public API, on the CPU or the GPU backend: each {@link OpBatch}
 * is one {@link Batch} already (its columns are the engine's), executed in place with
 * {@link GPHashIndex#execute(Batch, BatchResult)} into the results' {@link BatchResult}.
 */
public class GPHashStore implements StoreUnderTest {

    /** Geometry as in the demo (the engine's defaults). */
    static final int LEVELS = 2;
    static final int HASHES = 2;
    static final int SLOTS_PER_BUCKET = 8;

    protected final GPHashIndex index;
    private final Backend backend;
    private final org.gphash.Durability durability;
    /** The pool's format (0: an index opened elsewhere). */
    private final int format;
    /** Whether the pipeline's GPU time by stage is printed per workload ({@code -Dgphash.bench.stageProfile=on}). */
    private final boolean stageProfile;

    /** @throws org.gphash.BackendUnavailableException if the backend cannot run on this machine */
    public GPHashStore(StoreConfig config, Backend backend) {
        this(config, backend, org.gphash.Durability.PER_BATCH);
    }

    /** Over an index opened elsewhere (a cluster's client: {@link ClusterStore}). */
    protected GPHashStore(GPHashIndex index, Backend backend) {
        this.index = index;
        this.backend = backend;
        this.durability = org.gphash.Durability.PER_BATCH;
        this.format = 0;
        this.stageProfile = false;
    }

    /** With a durability mode other than the default (the CPU engine; the GPU engine persists per batch). */
    public GPHashStore(StoreConfig config, Backend backend, org.gphash.Durability durability) {
        this.backend = backend;
        this.durability = durability;
        // -Dgphash.bench.timeline=on adds the GPU's timeline of host batches' chunks to the host
        // stages printed per workload (GpuDiagnostics.timeChunks: twelve driver calls a chunk). Read
        // before the pool is created, so that a bad value refuses before anything is opened.
        boolean timeline = onOff("gphash.bench.timeline");
        this.stageProfile = onOff("gphash.bench.stageProfile");
        this.format = poolFormat(System.getProperty("gphash.bench.poolFormat",
                config.lengths() == ValueLengths.FIXED ? "2" : "3"), config.lengths());
        this.index = GPHashIndex.builder(config.directory().resolve("gphash-" + backend.name().toLowerCase() + "-"
                        + durability.name().toLowerCase() + ".pool"))
                .durability(durability)
                // -Dgphash.bench.coalescing=off measures the engine without the coalescer (merging
                // the client threads' batches is the default for the GPU backend), =on with it on
                // the CPU backend too (what the front end itself costs, no GPU needed).
                .coalescing(coalescing(System.getProperty("gphash.bench.coalescing", "auto"),
                        System.getProperty("gphash.bench.coalescing.inFlight")))
                .keySize(config.keySize()).valueSize(config.valueSize())
                .levels(LEVELS).hashes(HASHES).slotsPerBucket(SLOTS_PER_BUCKET)
                // Sized for the load, as the paper's runs are: resizes are measured by the demo.
                .initialCapacity(Math.max(1024, config.expectedItems()))
                .seed(config.seed())
                .poolFormat(format)
                .backend(backend)
                .create();
        if (timeline) {
            index.gpu().ifPresent(g -> {
                if (g instanceof GpuEngineFeatures engine) {
                    engine.diagnostics().timeChunks(true);
                }
            });
        }
        // -Dgphash.bench.stageProfile=on prints the pipeline's GPU time by stage per workload
        // (GpuDiagnostics.profileStages), for routes that await each run before the next (the
        // packed route's): the staged lanes' overlapped chunks cannot be timed so.
        if (stageProfile) {
            index.gpu().ifPresent(g -> {
                if (g instanceof GpuEngineFeatures engine) {
                    engine.diagnostics().profileStages(true);
                }
            });
        }
    }

    /**
     * The pool format {@code -Dgphash.bench.poolFormat} names (2 or 3; default 2, or 3 where values have
     * lengths of their own, which only format 3 holds).
     */
    private static int poolFormat(String format, ValueLengths lengths) {
        int f = switch (format.strip()) {
            case "2" -> 2;
            case "3" -> 3;
            default -> throw new IllegalArgumentException("gphash.bench.poolFormat must be 2 or 3, got " + format);
        };
        if (f == 2 && lengths != ValueLengths.FIXED) {
            throw new IllegalArgumentException("gphash.bench.poolFormat=2 holds values of the value size only: "
                    + "--value-lengths " + lengths.name().toLowerCase(Locale.ROOT) + " needs format 3");
        }
        return f;
    }

    /** Whether system property {@code property} ({@code gphash.bench.timeline}, {@code stageProfile}) is on or off (the default). */
    private static boolean onOff(String property) {
        String mode = System.getProperty(property, "off");
        return switch (mode) {
            case "on" -> true;
            case "off" -> false;
            default -> throw new IllegalArgumentException(property + " must be on or off, got " + mode);
        };
    }

    /**
     * The coalescer as {@code -Dgphash.bench.coalescing} names it: auto (the index's default), on or off;
     * {@code inFlight} ({@code -Dgphash.bench.coalescing.inFlight}, or null for the default): its batches
     * in flight ({@link org.gphash.Coalescing#withBatchesInFlight}), to measure merged batches pipelined.
     */
    static org.gphash.Coalescing coalescing(String mode, String inFlight) {
        org.gphash.Coalescing c = coalescing(mode);
        if (inFlight == null || c.mode() == org.gphash.Coalescing.Mode.OFF) {
            return c;
        }
        try {
            return c.withBatchesInFlight(Integer.parseInt(inFlight.strip()));
        } catch (IllegalArgumentException e) {  // NumberFormatException too
            throw new IllegalArgumentException("gphash.bench.coalescing.inFlight must be 1 or 2, got " + inFlight, e);
        }
    }

    private static org.gphash.Coalescing coalescing(String mode) {
        return switch (mode) {
            case "off" -> org.gphash.Coalescing.OFF;
            case "on" -> {
                org.gphash.Coalescing a = org.gphash.Coalescing.AUTO;  // its settings, on whatever the backend
                yield new org.gphash.Coalescing(org.gphash.Coalescing.Mode.ON, a.linger(), a.maxBatch(), a.hostCacheBytes(),
                        a.adaptive(), a.spin(), a.batchesInFlight());
            }
            case "auto" -> org.gphash.Coalescing.AUTO;
            default -> throw new IllegalArgumentException("gphash.bench.coalescing must be on, off or auto, got " + mode);
        };
    }

    @Override
    public String name() {
        return backend == Backend.GPU ? "gphash-gpu"
                : durability == org.gphash.Durability.PER_BATCH ? "gphash-cpu" : "gphash-per-op";
    }

    @Override
    public String description() {
        return "GPHash, " + backend + " engine, " + durability + (format == 0 ? "" : ", pool format " + format
                + (index.valueLengths() ? " (values of any length)" : "")) + ", " + index.stats().persistenceMode().description();
    }

    /** Runs the batch's own columns as the engine batch, into the results' own columns: no copy either way. */
    @Override
    public void execute(OpBatch batch, OpResults results) {
        runBatch(batch.engineBatch(), results.engineResult());
        results.adopt();
    }

    /** Runs one engine batch; the CPU-assisted store wraps this in the host/device copies. */
    protected void runBatch(Batch batch, BatchResult result) {
        index.execute(batch, result);
    }

    @Override
    public Figures figures() {
        // The GPU engine's host time by stage since the last workload (lock waits of every thread,
        // copies, GPU waits), on the error stream beside the table: where a host batch's time goes.
        index.gpu().ifPresent(g -> {
            if (g instanceof GpuEngineFeatures engine) {
                Map<String, Long> nanos = engine.diagnostics().hostStageNanos(true);
                StringBuilder sb = new StringBuilder("  host time of " + name() + " by stage (ms, all threads):");
                nanos.forEach((stage, n) -> sb.append(stage.equals("gpu_chunks") ? " gpu_chunks " + n
                        : String.format(Locale.ROOT, " %s %.1f", stage, n / 1e6)));
                System.err.println(sb);
                if (stageProfile) {
                    Map<String, Long> stages = engine.diagnostics().stageNanos();
                    StringBuilder st = new StringBuilder("  GPU time of " + name() + "'s pipeline by stage (ms):");
                    stages.forEach((stage, n) -> st.append(String.format(Locale.ROOT, " %s %.1f", stage, n / 1e6)));
                    System.err.println(st);
                    engine.diagnostics().profileStages(true);  // cleared for the next workload
                }
                // Where its batches ran (counters since open) and what the router chose by.
                GpuDiagnostics d = engine.diagnostics();
                System.err.printf(Locale.ROOT, "  %s since open: host reads %d, host writes %d, host batches %d, lends %d, "
                        + "heap growths on the host %d, buckets refreshed %d; route costs: %s%n", name(), d.hostReads(), d.hostWrites(),
                        d.hostBatches(), d.hostLends(), d.hostHeapGrowths(), d.refreshedBuckets(), d.routeCosts());
            }
        });
        index.coalescerStats().ifPresent(c -> System.err.printf(Locale.ROOT, "  %s since open: coalescer ran %d batches of %d "
                + "operations%n", name(), c.batches(), c.operations()));
        IndexStats s = index.stats();
        // The cache hit rate comes with BktCache (GPU engine); IndexStats has no such figure yet.
        return new Figures(s.loadFactor(), Double.NaN);
    }

    public IndexStats stats() {
        return index.stats();
    }

    @Override
    public void close() {
        index.close();
    }
}
