package org.gphash.cuda.shard;

import static jcuda.driver.JCudaDriver.cuCtxEnablePeerAccess;
import static jcuda.driver.JCudaDriver.cuDeviceCanAccessPeer;
import static jcuda.driver.JCudaDriver.cuDeviceGet;
import static jcuda.driver.JCudaDriver.cuMemcpyPeerAsync;
import static jcuda.driver.JCudaDriver.cuMemsetD8Async;
import static jcuda.driver.JCudaDriver.cuPointerGetAttribute;
import static jcuda.driver.JCudaDriver.cuStreamCreate;
import static jcuda.driver.JCudaDriver.cuStreamDestroy;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Collectors;

import jcuda.CudaException;
import jcuda.Pointer;
import jcuda.driver.CUdevice;
import jcuda.driver.CUpointer_attribute;
import jcuda.driver.CUresult;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;
import org.gphash.GpuFeatures;
import org.gphash.IndexClosedException;
import org.gphash.bktcache.BktCacheConfig;
import org.gphash.bktcache.BktCacheStats;
import org.gphash.cuda.GpuEngine;
import org.gphash.cuda.pipeline.DeviceShardSplit.PartColumns;
import org.gphash.cuda.pipeline.DeviceShardSplit;
import org.gphash.cuda.runtime.CudaRuntime;
import org.gphash.cuda.runtime.DevicePointer;
import org.gphash.cuda.runtime.KernelParams;
import org.gphash.shard.ShardTasks;

/**
 * A sharded index's GPU features ({@link org.gphash.GPHashIndex#gpu()}): a device-resident batch is
 * split by shard on the GPU that holds it ({@link DeviceShardSplit}), each shard's engine runs its
 * part, all parts at once, and the outcomes are scattered to the caller's positions on its GPU.
 * Nothing of the batch passes through the host; only each part's length does.
 *
 * <p>A shard's engine reads its part where the split laid it out and writes the part's outcomes
 * there: on its own GPU, or over NVLink (or PCIe peer to peer) on the split's GPU, peer access
 * enabled once per pair of GPUs. Only where two GPUs cannot reach each other's memory is a part
 * copied to columns on the shard's GPU and its outcomes copied back (the driver stages such copies
 * through the host). {@code Splitting.runPart} chooses, in one place.
 *
 * <p>The batch contract is {@link GpuFeatures#executeOnDevice}'s: a key lives in one shard and the
 * split keeps each shard's operations in batch order, so one key's operations take effect in batch
 * order. Across shards, each shard's part is whole or absent after a crash as a batch on one pool
 * is (the sharded index's contract, {@code org.gphash.shard.ShardedEngine}). A batch with a kind a
 * device batch does not take, or without the values or out column its kinds need, is refused
 * before any shard runs.
 *
 * <p>Batches from several threads run at once: each takes a split of its own from a pool kept per
 * GPU, with the parts' copies on each shard's GPU.
 */
public final class DeviceBatchesAcrossShards implements GpuFeatures, AutoCloseable {

    /** Operations split at once; larger batches run in slices of this many, one after another (batch order kept). */
    static final long SLICE = 1L << 24;

    private final Path dir;
    private final GpuEngine[] shards;
    private final long seed;
    private final Executor workers;
    private final int keySize;
    private final int valueSize;
    @SuppressWarnings("unchecked")
    private final ConcurrentLinkedQueue<Splitting>[] idle = new ConcurrentLinkedQueue[CudaRuntime.MAX_DEVICES];
    private final List<Splitting> made = new ArrayList<>();
    private volatile boolean closed;
    /** Whether a shard on another GPU reads its part on the split's GPU where the two GPUs allow it. */
    private final boolean peerReads;
    private final LongAdder splitNanos = new LongAdder();
    private final LongAdder runNanos = new LongAdder();
    private final LongAdder mergeNanos = new LongAdder();
    private final LongAdder slices = new LongAdder();

    /**
     * The view over {@code shards}, which a sharded index keyed by {@code seed} placed on their GPUs.
     *
     * @param dir     the sharded index's directory
     * @param shards  the shards' engines, in shard order
     * @param seed    the shard function's seed (the manifest's)
     * @param workers threads to run shards' parts on beside the caller's
     */
    public DeviceBatchesAcrossShards(Path dir, List<GpuEngine> shards, long seed, Executor workers) {
        this(dir, shards, seed, workers, true);
    }

    /**
     * As the public constructor; {@code peerReads} false copies every part on another GPU than the
     * split's, as where GPUs cannot reach each other's memory (for the tests of that route on machines
     * whose GPUs can).
     */
    DeviceBatchesAcrossShards(Path dir, List<GpuEngine> shards, long seed, Executor workers, boolean peerReads) {
        this.dir = dir;
        this.peerReads = peerReads;
        this.shards = shards.toArray(GpuEngine[]::new);
        this.seed = seed;
        this.workers = workers;
        this.keySize = this.shards[0].geometry().keySize();
        this.valueSize = this.shards[0].geometry().valueSize();
        for (int i = 0; i < idle.length; i++) {
            idle[i] = new ConcurrentLinkedQueue<>();
        }
    }

    @Override
    public void executeOnDevice(long n, long kinds, long keys, long values, long codes, long out) {
        if (closed) {
            throw new IndexClosedException(dir);
        }
        if (n <= 0) {
            return;
        }
        if (kinds == 0 || keys == 0 || codes == 0) {
            throw new IllegalArgumentException("a device batch needs its kinds, keys and codes columns (addresses 0 given: kinds "
                    + kinds + ", keys " + keys + ", codes " + codes + ")");
        }
        if (shards.length == 1) {
            shards[0].features().executeOnDevice(n, kinds, keys, values, codes, out);
            return;
        }
        int source = deviceOf(keys);
        Splitting s = idle[source].poll();
        if (s == null) {
            s = newSplitting(source);
        }
        try {
            for (long first = 0; first < n; first += SLICE) {
                long m = Math.min(SLICE, n - first);
                runSlice(s, m, kinds + first, keys + first * keySize, values == 0 ? 0 : values + first * valueSize,
                        codes + first, out == 0 ? 0 : out + first * valueSize);
            }
        } finally {
            idle[source].offer(s);
        }
    }

    /** Splits one slice, runs its parts at once, and merges their outcomes; refuses it before any part runs. */
    private void runSlice(Splitting s, long n, long kinds, long keys, long values, long codes, long out) {
        long t0 = System.nanoTime();
        int[] totals = s.split.split(n, kinds, keys, values, seed, shards.length);
        long t1 = System.nanoTime();
        int at = shards.length;
        if (totals[at + KernelParams.SPLIT_REFUSED] > 0) {
            throw new IllegalArgumentException("a device batch takes gets, puts, inserts, updates, deletes and "
                    + "read-modify-writes only: " + totals[at + KernelParams.SPLIT_REFUSED] + " of its " + n
                    + " operations have another kind (conditional kinds run in host batches)");
        }
        boolean writes = totals[at + KernelParams.SPLIT_WRITES] > 0;
        boolean reads = totals[at + KernelParams.SPLIT_READS] > 0;
        if (writes && values == 0) {
            throw new IllegalArgumentException("a device batch with writes needs its values buffer");
        }
        if (reads && out == 0) {
            throw new IllegalArgumentException("a device batch with reads needs its out buffer");
        }
        long[] starts = new long[shards.length];
        long start = 0;
        for (int i = 0; i < shards.length; i++) {
            starts[i] = start;
            start += totals[i];
        }
        RuntimeException failure = null;
        try {
            ShardTasks.atOnce(shards.length, i -> totals[i] > 0, workers, i -> {
                s.runPart(i, starts[i], totals[i], writes, reads);
                return null;
            });
        } catch (RuntimeException e) {
            failure = e;
        }
        // The parts that ran have their outcomes merged whatever another part threw, as a batch on one
        // pool reports the operations before its failure.
        long t2 = System.nanoTime();
        try {
            s.split.merge(codes, reads ? out : 0);
        } catch (RuntimeException e) {
            if (failure == null) {
                throw e;
            }
            failure.addSuppressed(e);
        }
        long t3 = System.nanoTime();
        splitNanos.add(t1 - t0);
        runNanos.add(t2 - t1);
        mergeNanos.add(t3 - t2);
        slices.increment();
        if (failure != null) {
            throw failure;
        }
    }

    /**
     * Where device-resident batches' time went since the last reset, wall time summed over calls: the
     * split (on the batch's GPU, up to the parts' lengths on the host), the parts' runs (all at once,
     * copies GPU to GPU included), and the merge; then the number of slices split. For benchmarks.
     *
     * @param reset whether to start counting again
     * @return split, run and merge nanoseconds, and slices
     */
    public long[] stageNanos(boolean reset) {
        LongAdder[] all = {splitNanos, runNanos, mergeNanos, slices};
        long[] v = new long[all.length];
        for (int i = 0; i < all.length; i++) {
            v[i] = reset ? all[i].sumThenReset() : all[i].sum();
        }
        return v;
    }

    /** The ordinal of the GPU whose memory holds {@code address}. */
    private int deviceOf(long address) {
        shards[0].cuda().bind();
        int[] ordinal = new int[1];
        try {
            cuPointerGetAttribute(Pointer.to(ordinal), CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                    DevicePointer.at(address));
        } catch (CudaException e) {
            throw new IllegalArgumentException("the keys column at 0x" + Long.toHexString(address)
                    + " is not in GPU memory the CUDA driver knows: " + e.getMessage(), e);
        }
        if (ordinal[0] < 0) {
            throw new IllegalArgumentException("the keys column at 0x" + Long.toHexString(address) + " is host memory; a "
                    + "sharded index splits device-resident batches on the GPU that holds them (run host batches with execute)");
        }
        if (ordinal[0] >= CudaRuntime.MAX_DEVICES) {
            throw new IllegalArgumentException("the keys column at 0x" + Long.toHexString(address) + " is on GPU "
                    + ordinal[0] + ", beyond the " + CudaRuntime.MAX_DEVICES + " GPUs a process addresses");
        }
        return ordinal[0];
    }

    private Splitting newSplitting(int source) {
        Splitting s = new Splitting(CudaRuntime.get(source));
        synchronized (made) {
            if (closed) {
                s.close();
                throw new IndexClosedException(dir);
            }
            made.add(s);
        }
        return s;
    }

    /**
     * What one batch at a time uses: the split on the batch's GPU, and for each shard on another GPU,
     * its part's columns there and a stream for the copies. Not thread-safe, but its parts run at
     * once, each touching only its own shard's columns.
     */
    private final class Splitting implements AutoCloseable {
        final DeviceShardSplit split;
        /** Per shard: whether its engine reads its part on the split's GPU (its own GPU, or one it reaches). */
        final boolean[] readsInPlace = new boolean[shards.length];
        final PartColumns[] remote = new PartColumns[shards.length];
        final CUstream[] streams = new CUstream[shards.length];

        Splitting(CudaRuntime source) {
            this.split = new DeviceShardSplit(source, keySize, valueSize);
            for (int s = 0; s < shards.length; s++) {
                CudaRuntime to = shards[s].cuda();
                readsInPlace[s] = to.ordinal == source.ordinal || peerReads && enablePeerAccess(source, to);
            }
        }

        /**
         * Runs shard {@code s}'s part, operations {@code start} to {@code start + count - 1} of the
         * split's columns: where they lie, or copied to the shard's GPU and back where it cannot reach
         * them.
         */
        void runPart(int s, long start, long count, boolean writes, boolean reads) {
            GpuEngine engine = shards[s];
            PartColumns here = split.columns();
            if (readsInPlace[s]) {
                engine.features().executeOnDevice(count, here.kindAt(start), here.keyAt(start), writes ? here.valueAt(start) : 0,
                        here.codeAt(start), reads ? here.outAt(start) : 0);
                return;
            }
            CudaRuntime to = engine.cuda();
            CudaRuntime from = split.cuda();
            to.bind();
            if (remote[s] == null) {
                remote[s] = new PartColumns(keySize, valueSize);
                streams[s] = new CUstream();
                cuStreamCreate(streams[s], CUstream_flags.CU_STREAM_NON_BLOCKING);
            }
            PartColumns there = remote[s];
            CUstream stream = streams[s];
            there.ensure(count);
            cuMemsetD8Async(there.codes.pointer(), (byte) 0, count, stream);  // RETRY, as on the split's GPU
            cuMemcpyPeerAsync(there.kinds.pointer(), to.context, here.kinds.at(start), from.context, count, stream);
            cuMemcpyPeerAsync(there.keys.pointer(), to.context, here.keys.at(start * keySize), from.context,
                    count * keySize, stream);
            if (writes) {
                cuMemcpyPeerAsync(there.values.pointer(), to.context, here.values.at(start * valueSize), from.context,
                        count * valueSize, stream);
            }
            cuStreamSynchronize(stream);
            try {
                engine.features().executeOnDevice(count, there.kindAt(0), there.keyAt(0), writes ? there.valueAt(0) : 0, there.codeAt(0),
                        reads ? there.outAt(0) : 0);
            } finally {
                // The outcomes come back also after a failure: those of the operations that ran.
                to.bind();
                cuMemcpyPeerAsync(here.codes.at(start), from.context, there.codes.pointer(), to.context, count, stream);
                if (reads) {
                    cuMemcpyPeerAsync(here.out.at(start * valueSize), from.context, there.out.pointer(), to.context,
                            count * valueSize, stream);
                }
                cuStreamSynchronize(stream);
            }
        }

        @Override
        public void close() {
            for (int s = 0; s < remote.length; s++) {
                if (remote[s] != null) {
                    shards[s].cuda().bind();
                    cuStreamDestroy(streams[s]);
                    remote[s].close();
                }
            }
            split.close();
        }
    }

    /**
     * Lets {@code a} and {@code b} address each other's memory where the GPUs can (NVLink or PCIe peer
     * to peer), so that kernels on one read and write the other's; returns whether they can. Enabling
     * a pair twice is harmless.
     */
    private static boolean enablePeerAccess(CudaRuntime a, CudaRuntime b) {
        CUdevice da = new CUdevice();
        CUdevice db = new CUdevice();
        cuDeviceGet(da, a.ordinal);
        cuDeviceGet(db, b.ordinal);
        int[] ab = new int[1];
        int[] ba = new int[1];
        cuDeviceCanAccessPeer(ab, da, db);
        cuDeviceCanAccessPeer(ba, db, da);
        if (ab[0] == 0 || ba[0] == 0) {
            return false;
        }
        enable(a, b);
        enable(b, a);
        return true;
    }

    private static void enable(CudaRuntime on, CudaRuntime peer) {
        on.bind();
        try {
            cuCtxEnablePeerAccess(peer.context, 0);
        } catch (CudaException e) {
            if (!e.getMessage().contains(CUresult.stringFor(CUresult.CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED))) {
                throw e;
            }
        }
    }

    // ------------------------------------------------------------------ the rest of GpuFeatures, over every shard

    /** The shards' GPUs: the driver's name of each kind of GPU and their ordinals, as {@code "NAME (GPUs 0, 1)"}. */
    @Override
    public String deviceName() {
        String names = Arrays.stream(shards).map(e -> e.features().deviceName()).distinct().collect(Collectors.joining(", "));
        String ordinals = Arrays.stream(shards).map(e -> String.valueOf(e.cuda().ordinal)).distinct()
                .collect(Collectors.joining(", "));
        return names + " (GPUs " + ordinals + ")";
    }

    /** Whether every shard runs its batches on the pipeline over its index mirror. */
    @Override
    public boolean usesIndexMirror() {
        for (GpuEngine e : shards) {
            if (!e.usesIndexMirror()) {
                return false;
            }
        }
        return true;
    }

    /** The longest of the shards' last parts' GPU times (they run at once). */
    @Override
    public long lastBatchGpuNanos() {
        long most = 0;
        for (GpuEngine e : shards) {
            most = Math.max(most, e.features().lastBatchGpuNanos());
        }
        return most;
    }

    /** Every shard's cache as one ({@link BktCacheStats#total}). */
    @Override
    public BktCacheStats bucketCacheStats() {
        return BktCacheStats.total(Arrays.stream(shards).map(e -> e.features().bucketCacheStats()).toList());
    }

    @Override
    public boolean reloadBucketCache(boolean wait) {
        boolean any = false;
        for (GpuEngine e : shards) {
            any |= e.reloadBucketCache(wait);
        }
        return any;
    }

    @Override
    public void configureBucketCache(BktCacheConfig config) {
        for (GpuEngine e : shards) {
            e.features().configureBucketCache(config);
        }
    }

    /** Frees the splits' device memory; batches must have returned (the sharded index closes it before its shards). */
    @Override
    public void close() {
        closed = true;
        synchronized (made) {
            for (Splitting s : made) {
                s.close();
            }
            made.clear();
        }
    }
}
