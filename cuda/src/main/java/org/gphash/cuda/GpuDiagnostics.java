package org.gphash.cuda;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

import org.gphash.GpuTuning;
import org.gphash.cuda.pipeline.MirrorPath;
import org.gphash.cuda.pipeline.SmallReads;
import org.gphash.cuda.routing.RouteCosts;
import org.gphash.cuda.runtime.GpuFailure;
import org.gphash.table.VerifyReport;

/**
 * What a {@link GpuEngine} did and where its time went, for tests and benchmarks: counters of the
 * routes it took, the stage profile of the pipeline and the GPU's timeline of host batches' chunks.
 * A view ({@link GpuEngine#diagnostics()}), so that the engine's own class holds its entry points and
 * their locking only. Readings that touch the pipeline take the engine's lock, as its entry points do.
 */
public final class GpuDiagnostics {

    private final GpuEngine engine;

    GpuDiagnostics(GpuEngine engine) {
        this.engine = engine;
    }

    /** {@return heap growths whose file space was prepared ahead, off the batch path (0 on the pool path)} */
    public long growthsPreparedAhead() {
        synchronized (engine) {
            MirrorPath m = engine.mirrorPath();
            return m == null ? 0 : m.growthsPreparedAhead();
        }
    }

    /** {@return whether this engine prepares heap growths ahead ({@link GpuTuning#growHeapAhead()}, on the mirror path only)} */
    public boolean preparesGrowthsAhead() {
        synchronized (engine) {
            MirrorPath m = engine.mirrorPath();
            return m != null && m.preparesGrowthsAhead();
        }
    }

    /** Batches run as small batches of gets in one launch ({@link SmallReads}) since open. */
    public long smallReadBatches() {
        MirrorPath m = engine.mirrorPath();
        return m == null ? 0 : m.smallReadBatches();
    }

    /** The most small batches of gets in flight at once since open (they run outside the lock). */
    public int smallReadsMostInFlight() {
        MirrorPath m = engine.mirrorPath();
        return m == null ? 0 : m.smallReadsMostInFlight();
    }

    /** The most host batches with chunks on the GPU at once since open (they are queued, then waited for outside the lock). */
    public int mostBatchesInFlight() {
        synchronized (engine) {
            MirrorPath m = engine.mirrorPath();
            return m == null ? 0 : m.mostBatchesInFlight();
        }
    }

    /** Writing batches and runs in one launch (pipe_small_writes.cuh) since open. */
    public long smallWriteBatches() {
        synchronized (engine) {
            MirrorPath m = engine.mirrorPath();
            return m == null ? 0 : m.pipeline().smallWriteBatches();
        }
    }

    /** Runs of a batch that wrote without grouping, their keys being distinct ({@link org.gphash.cuda.routing.DistinctKeys}), since open. */
    public long distinctWriteRuns() {
        synchronized (engine) {
            MirrorPath m = engine.mirrorPath();
            return m == null ? 0 : m.distinctWriteRuns();
        }
    }

    /**
     * Turns on timing of each stage of the v2 pipeline with GPU events (a diagnostic for benchmarks)
     * and clears what was timed; returns false on the pool path.
     */
    public boolean profileStages(boolean on) {
        synchronized (engine) {
            MirrorPath m = engine.mirrorPath();
            if (m != null) {
                if (!engine.closed) {
                    engine.bindContext();
                    engine.queued.drainBatches();  // the profile times batches awaited one at a time
                }
                m.pipeline().profile(on);
            }
            return m != null;
        }
    }

    /** {@return GPU time per pipeline stage since {@link #profileStages} turned timing on, in nanoseconds} */
    public Map<String, Long> stageNanos() {
        synchronized (engine) {
            Map<String, Long> out = new LinkedHashMap<>();
            MirrorPath m = engine.mirrorPath();
            if (m != null) {
                m.stageNanos().forEach((stage, nanos) -> out.put(stage.name().toLowerCase(Locale.ROOT), nanos));
            }
            return out;
        }
    }

    /**
     * Host nanoseconds per stage of host batches since open or the last reset (lock waits, copies in,
     * queueing, waiting for the GPU, copies out, heap growth, and the total), for benchmarks: on the
     * pool path only the lock waits, entry, path and total are counted. While {@link #timeChunks} is
     * on, the GPU's side of the same chunks follows, as {@code gpu_*} ({@code ChunkTimeline}).
     *
     * @param reset whether to start counting again after reading
     * @return nanoseconds by stage name
     */
    public Map<String, Long> hostStageNanos(boolean reset) {
        Map<String, Long> out = engine.times.snapshot();
        if (reset) {
            engine.times.reset();
        }
        synchronized (engine) {
            MirrorPath m = engine.mirrorPath();
            if (m != null && !engine.closed) {
                out.putAll(m.chunkTimeline(reset));
            }
        }
        return out;
    }

    /**
     * Turns on the GPU's timeline of host batches' chunks (a diagnostic for benchmarks: copies in,
     * kernels, copies out and the kernels' idle time, from GPU events; twelve driver calls a chunk)
     * and clears it, or turns it off. While on, {@link #hostStageNanos} reports it beside the host's
     * stages, as {@code gpu_*}. Returns false on the pool path, which queues no chunks.
     */
    public boolean timeChunks(boolean on) {
        synchronized (engine) {
            MirrorPath m = engine.mirrorPath();
            if (m != null && !engine.closed) {
                engine.bindContext();
                m.timeChunks(on);
            }
            return m != null;
        }
    }

    /** Shards' parts of batches run where they lay since open ({@link GpuEngine#executeInPlace}). */
    public long partsInPlace() {
        return engine.partsInPlace.sum();
    }

    /** Gets run on the host since open (single gets, gets at once, and those of batches run there: {@link HostOperations}). */
    public long hostReads() {
        return engine.hostOps.reads.sum();
    }

    /** Writes run on the host since open. */
    public long hostWrites() {
        return engine.hostOps.writes.sum();
    }

    /** Batches run on the host since open (the router's {@code HOST} route, single gets among them). */
    public long hostBatches() {
        return engine.hostOps.batches.sum();
    }

    /** Times the engine lent the pool to the host (each after GPU work, the heap's bitmap fetched where the GPU had it). */
    public long hostLends() {
        return engine.hostOps.lends.sum();
    }

    /** {@return what batches cost on the host and on the GPU as measured so far: what the router chooses by} */
    public RouteCosts routeCosts() {
        return engine.router.costs();
    }

    /** Heap growths run on the host for host writes that found the heap short. */
    public long hostHeapGrowths() {
        return engine.hostOps.heapGrowths.sum();
    }

    /** Buckets copied again into the GPU's copies (mirror, BktCache) after host writes changed them. */
    public long refreshedBuckets() {
        return engine.hostOps.refreshedBuckets.sum();
    }

    /** {@return where this engine's open (or create) went, stage by stage} */
    public OpenTimes openTimes() {
        return engine.openTimes;
    }

    /**
     * {@return the CPU engine's whole-table verification, run while no kernel is in flight, and on the
     * mirror path the HBM mirror compared with the pool slot by slot}
     */
    public VerifyReport verify() {
        synchronized (engine) {
            engine.ensureOpen();
            GpuFailure.during(engine.pool.file().path(), "fetching the heap for verify", () -> {
                engine.cuda.bind();
                engine.path.syncHost();
            });
            VerifyReport report = engine.pool.verify();
            MirrorPath m = engine.mirrorPath();
            if (m == null) {
                return report;
            }
            return report.withStaleMirrorSlots(GpuFailure.during(engine.pool.file().path(), "comparing the HBM mirror with the pool",
                    () -> {
                        engine.cuda.bind();
                        return m.staleMirrorSlots();
                    }));
        }
    }
}
