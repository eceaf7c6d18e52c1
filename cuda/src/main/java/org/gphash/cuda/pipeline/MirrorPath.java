package org.gphash.cuda.pipeline;

import static jcuda.driver.JCudaDriver.cuStreamDestroy;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.IndexStats;
import org.gphash.cuda.path.BatchPath;
import org.gphash.cuda.path.EngineParts;
import org.gphash.cuda.path.OneLaunchBatches;
import org.gphash.cuda.path.QueuedBatches;
import org.gphash.cuda.routing.Router;
import org.gphash.cuda.staging.HostStageTimes;
import org.gphash.cuda.staging.PreparedBatch;
import org.gphash.spi.SubmittedBatch;
import org.gphash.table.PoolTable;

/**
 * Batches run by the v2 pipeline ({@link BatchPipeline}) over the HBM index mirror: probes read GPU
 * memory, pool accesses are values and slot words only, each stage's issued in address order, and
 * operations on one key are combined (batch order within the key, one net write).
 *
 * <p>The engine is the pool's only writer while it is open, so slots are claimed in the mirror and
 * the pool receives the slot protocol's states by plain stores, phase by phase (DESIGN.md). The value
 * heap's bitmap lives in GPU memory ({@link DeviceHeap}); the host sizes the heap before a batch so
 * that every value write finds a block, and takes the bitmap back before it grows the heap or resizes.
 *
 * <p>This class is the engine's {@link BatchPath} over the mirror and hands each job to its own
 * class: host batches in chunks on a ring of lanes ({@link HostBatches}), small batches in one launch
 * ({@link SmallBatches}), device-resident batches ({@link DeviceBatches}), all of them over one
 * pipeline, heap and mirror ({@link MirrorRuns}).
 */
public final class MirrorPath implements BatchPath {

    private final MirrorRuns runs;
    private final HostBatches hosts;
    private final SmallBatches small;
    private final DeviceBatches devices;

    public MirrorPath(EngineParts parts, PipelineKernels kernels, Router router, HostStageTimes times) {
        this.runs = new MirrorRuns(parts, kernels, router);
        this.hosts = new HostBatches(runs, times);
        this.small = new SmallBatches(runs, hosts);
        this.devices = new DeviceBatches(runs, small.reads());
        try {
            runs.open();
        } catch (RuntimeException e) {
            closeQuietly();
            throw e;
        }
    }

    /** GPU memory the mirror of this pool and the buffers of a full slice take. */
    public static long bytesNeeded(PoolTable pool) {
        int vs = pool.geometry().valueSize();
        int ks = pool.geometry().keySize();
        int slice = MirrorRuns.maxSlice(vs);
        long staging = (long) BatchPipeline.LANES * HostBatches.hostChunk(slice, slice) * (2 + ks + 2L * vs);  // the lanes of a slice's chunks
        return DeviceIndexMirror.bytesFor(pool.layout(), pool.geometry().slotsPerBucket())
                + PipelineBuffers.bytesFor(PipelineBuffers.capacityFor(slice), vs) + staging;
    }

    @Override
    public QueuedBatches queued() {
        return hosts;
    }

    @Override
    public OneLaunchBatches oneLaunch() {
        return small;
    }

    // ------------------------------------------------------------------ small batches

    /**
     * Runs a batch of gets on another set of small-read slots than the engine's, outside the
     * engine's lock (for SmallReadsThreadsProbe, which measures the driver with several threads
     * queueing at once; nothing may write meanwhile).
     */
    public SubmittedBatch readOn(SmallReads reads, Batch batch, BatchResult result) {
        return small.readOn(reads, batch, result);
    }

    /** A set of small-read slots of its own, on the engine's kernel (for SmallReadsThreadsProbe). */
    public SmallReads newSmallReads() {
        return small.newSmallReads();
    }

    // ------------------------------------------------------------------ host batches

    @Override
    public void execute(Batch batch, BatchResult result, PreparedBatch prepared) {
        hosts.execute(batch, result, prepared);
    }

    // ------------------------------------------------------------------ device-resident batches

    @Override
    public void executeOnDevice(long n, long kindsAt, long keysAt, long valuesAt, long lengthsAt, long codesAt, long outAt,
                                long outLengthsAt) {
        devices.executeOnDevice(n, kindsAt, keysAt, valuesAt, lengthsAt, codesAt, outAt, outLengthsAt);
    }

    // ------------------------------------------------------------------ the mirror, figures and diagnostics

    @Override
    public byte[] mirrorTableParams() {
        return runs.mirrorTableParams();
    }

    /** Slots whose HBM mirror copy or tag differs from the pool (DeviceIndexMirror.staleSlots); nothing in flight. */
    public long staleMirrorSlots() {
        return runs.staleMirrorSlots();
    }

    @Override
    public void syncHost() {
        runs.heap.pull(runs.parts.pool());
    }

    @Override
    public void heapToDevice() {
        runs.heap.push(runs.parts.pool());
    }

    @Override
    public IndexStats stats(IndexStats pool) {
        return pool.withEngineState(runs.heap.totalBlocks(), runs.heap.freeBlocks(),
                "HBM mirror (" + (runs.mirror.bytes() >> 20) + " MiB, loaded in " + runs.mirror.lastLoadNanos() / 1_000_000
                        + " ms; " + small.smallReadBatches() + " small batches of gets in one launch, " + runs.distinctWriteRuns
                        + " writing runs of distinct keys ungrouped, " + runs.pipeline.smallWriteBatches() + " of them in one launch)");
    }

    /** {@return how long the last load of the HBM mirror took (at open, or after a resize)} */
    public long mirrorLoadNanos() {
        return runs.mirror.lastLoadNanos();
    }

    @Override
    public long lastBatchGpuNanos() {
        return runs.pipeline.lastGpuNanos();
    }

    public long smallReadBatches() {
        return small.smallReadBatches();
    }

    public int smallReadsMostInFlight() {
        return small.smallReadsMostInFlight();
    }

    public long distinctWriteRuns() {
        return runs.distinctWriteRuns;
    }

    /** The most host batches (of any threads) with chunks on the GPU at once since open. */
    public int mostBatchesInFlight() {
        return hosts.mostBatchesInFlight();
    }

    /** The router this path's chunks are planned by (the engine routes its calls by it too). */
    public Router router() {
        return runs.router;
    }

    /** The pipeline, for the profile of its stages (benchmarks and tests). */
    public BatchPipeline pipeline() {
        return runs.pipeline;
    }

    /** {@return heap growths whose file space was prepared ahead, off the batch path} */
    public long growthsPreparedAhead() {
        return runs.ahead.prepared();
    }

    /** {@return whether heap growths are prepared ahead ({@link HeapGrowthAhead}, opt-in)} */
    public boolean preparesGrowthsAhead() {
        return runs.ahead.active();
    }

    public Map<StageProfile.Stage, Long> stageNanos() {
        return runs.pipeline.stageNanos();
    }

    /** Under the engine's lock: turns the chunk timeline on (clearing it) or off, with no chunk in flight. */
    public void timeChunks(boolean on) {
        hosts.timeChunks(on);
    }

    /** Under the engine's lock: the chunk timeline's sums, empty while it is off; reset after reading if asked. */
    public Map<String, Long> chunkTimeline(boolean reset) {
        return hosts.chunkTimeline(reset);
    }

    private void closeQuietly() {
        List<AutoCloseable> all = new ArrayList<>(runs.closeables());
        all.addAll(small.closeables());
        all.addAll(hosts.closeables());
        for (AutoCloseable c : all) {
            try {
                c.close();
            } catch (Exception ignored) {
                // closing what was allocated; the first failure is the one reported
            }
        }
    }

    @Override
    public void close() {
        cuStreamSynchronize(runs.stream);
        closeQuietly();
        cuStreamDestroy(runs.stream);
    }
}
