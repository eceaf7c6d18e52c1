package org.gphash.cuda.pipeline;


import java.util.Arrays;
import java.util.List;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.Geometry;
import org.gphash.GpuTuning;
import org.gphash.cuda.cache.BucketCache;
import org.gphash.cuda.path.OneLaunchBatches;
import org.gphash.cuda.path.ReadSlot;
import org.gphash.cuda.routing.DistinctKeys;
import org.gphash.cuda.routing.KindCounts;
import org.gphash.cuda.runtime.KernelParams;
import org.gphash.spi.SubmittedBatch;

/**
 * Small batches on the mirror, each in one launch: batches of gets on slots of their own, claimed
 * under the engine's lock and run outside it ({@link SmallReads}), and writing batches in one copy in,
 * one launch and one copy out under it ({@link SmallWrites}).
 */
final class SmallBatches implements OneLaunchBatches {

    private final MirrorRuns runs;
    /** The host batches' lanes: a small writing batch's operations that need a resize run again on one. */
    private final HostBatches hosts;
    /** The counts of gets, deletes and read-modify-writes of the small batch being planned ({@link KindCounts}). */
    private final long[] kindCounts = new long[3];

    SmallBatches(MirrorRuns runs, HostBatches hosts) {
        this.runs = runs;
        this.hosts = hosts;
        GpuTuning tuning = runs.router.tuning();
        Geometry geometry = runs.geometry;
        this.small = new SmallReads(runs.kernels.smallReads, geometry.keySize(), geometry.valueSize(), tuning.smallReadSlots());
        this.smallWrites = new SmallWrites(tuning.smallWritesMax(), geometry.keySize(), geometry.valueSize());
    }

    private final SmallReads small;

    private final SmallWrites smallWrites;

    @Override
    public ReadSlot claimRead(Batch batch) {
        BucketCache cache = runs.parts.cache();
        byte[] table = runs.parts.tableParams();
        SmallReads.Slot slot = small.claim(table, runs.mirrorTableParams(), cache.params(), cache.lastClock());
        if (slot != null) {
            try {
                cache.operationsRan(batch.size(), table);
            } catch (RuntimeException e) {
                small.release(slot);
                throw e;
            }
        }
        return slot;
    }

    @Override
    public SubmittedBatch issueRead(ReadSlot slot, Batch batch, BatchResult result) {
        return small.issue((SmallReads.Slot) slot, runs.stream, batch, result);  // a slot this path's claimRead gave
    }

    @Override
    public void drainReads() {
        small.drain();
    }

    @Override
    public void abandonReads(RuntimeException why) {
        small.abandon(why);
    }

    /**
     * Runs a batch of gets on another set of small-read slots than the engine's, outside the
     * engine's lock (for SmallReadsThreadsProbe, which measures the driver with several threads
     * queueing at once; nothing may write meanwhile).
     */
    SubmittedBatch readOn(SmallReads reads, Batch batch, BatchResult result) {
        SmallReads.Slot slot = reads.claim(runs.parts.tableParams(), runs.mirrorTableParams(),
                runs.parts.cache().params(), runs.parts.cache().lastClock());
        if (slot == null) {
            throw new IllegalStateException("no free slot");
        }
        return reads.issue(slot, runs.stream, batch, result);
    }

    /** A set of small-read slots of its own, on the engine's kernel (for SmallReadsThreadsProbe). */
    SmallReads newSmallReads() {
        return small.sibling();
    }

    /**
     * A small batch that writes, in one copy in, one launch and one copy out ({@link SmallWrites});
     * grouped by key on the GPU unless the host finds its keys distinct.
     */
    @Override
    public void executeSmallWrites(Batch batch, BatchResult result) {
        int n = batch.size();
        KindCounts.count(batch.kinds(), 0, n, kindCounts);
        long deletes = kindCounts[KindCounts.DELETES];
        long valueWrites = n - kindCounts[KindCounts.GETS] - deletes;
        boolean reads = kindCounts[KindCounts.GETS] + kindCounts[KindCounts.RMWS] > 0;
        runs.ensureFreeBlocks(valueWrites);
        BucketCache cache = runs.parts.cache();
        cache.operationsRan(n, runs.parts.tableParams());
        byte[] cacheParams = cache.params();
        smallWrites.stage(batch, reads, cache.lastClock());
        boolean grouped = !DistinctKeys.test(batch, 0, n);
        if (!grouped) {
            runs.distinctWriteRuns++;
        }
        long[] c = runs.pipeline.runSmallWrites(runs.stream, smallWrites, n, runs.parts.tableParams(),
                runs.mirrorTableParams(), cacheParams, cache.enabled(), runs.heap, reads, grouped);
        runs.account(c, cache);
        smallWrites.copyResults(result);
        if (c[KernelParams.PIPE_NEED_RESIZE] != 0) {
            int[] again = new int[(int) c[KernelParams.PIPE_NEED_RESIZE]];
            int k = 0;
            for (int i = 0; i < n && k < again.length; i++) {
                if ((smallWrites.code(i) & KernelParams.CODE_MASK) == KernelParams.NEED_RESIZE_CODE) {
                    again[k++] = i;
                }
            }
            hosts.rerunAfterResize(batch, result, Arrays.copyOf(again, k));
        }
        runs.afterBatch();
    }

    long smallReadBatches() {
        return small.batches();
    }

    int smallReadsMostInFlight() {
        return small.mostInFlight();
    }

    /** The engine's small-read slots (the device batches' gets in one launch run on their kernel). */
    SmallReads reads() {
        return small;
    }

    /** What this holds on the GPU and in pinned memory, for the path's close. */
    List<AutoCloseable> closeables() {
        return List.of(small, smallWrites);
    }
}
