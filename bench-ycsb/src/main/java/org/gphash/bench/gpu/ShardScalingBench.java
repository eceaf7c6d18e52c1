package org.gphash.bench.gpu;

import static org.gphash.bench.gpu.GpuBenchArgs.list;
import static org.gphash.bench.gpu.GpuBenchArgs.num;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntConsumer;
import java.util.function.ToLongFunction;
import java.util.stream.Stream;

import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.GPHashIndex;
import org.gphash.IndexMirror;
import org.gphash.OpKind;
import org.gphash.bktcache.BktCacheConfig;
import org.gphash.cuda.DeviceBatch;
import org.gphash.cuda.GpuEngine;
import org.gphash.cuda.GpuEngines;
import org.gphash.cuda.runtime.CudaRuntime;
import org.gphash.cuda.shard.DeviceBatchesAcrossShards;
import org.gphash.shard.ShardFunction;
import org.gphash.shard.ShardManifest;
import org.gphash.shard.ShardedEngine;

/**
 * A sharded index over 1, 2, 4 ... GPUs (issue 30), weak scaling: {@code --keys} keys per GPU
 * loaded through host batches of 2^20 (which the index splits by shard), then per workload each
 * GPU runs {@code --ops} device-resident operations on the keys of its own shard, all GPUs at once
 * (one thread each, started together; the wall time is the last GPU's). Then device-resident
 * batches of keys of every shard through the index's GPU view, one thread per GPU (split by shard on
 * the GPU that holds them); host batches of 2^20 from {@code --threads} Java threads through the
 * index (split by shard, each shard's part run where it lies), with each shard's host time by stage;
 * on several GPUs, one shard's part alone from one thread in place against the same operations as a
 * batch of their own; and the open of the whole
 * index beside the open of each shard alone. Prints one table row per figure and, last, the scaling
 * of each against the run on one GPU.
 *
 * <pre>{@code
 * java -cp ... org.gphash.bench.gpu.ShardScalingBench --gpus 1,2 --keys 16m --ops 4m --threads 8
 * }</pre>
 */
public final class ShardScalingBench {

    private static final int BATCH = 1 << 20;
    private static final int VS = 128;

    private ShardScalingBench() {
    }

    private record Row(int gpus, String what, double mops, String note) {
    }

    public static void main(String[] argv) throws Exception {
        GpuBenchArgs o = GpuBenchArgs.parse(argv, "ShardScalingBench");
        long keysPerGpu = num(o.keys, 1L << 24);
        long opsPerGpu = num(o.ops, 1L << 22);
        int threads = (int) num(o.threads, 8);
        int visible = CudaRuntime.deviceCount();
        System.out.printf(Locale.ROOT, "ShardScalingBench: %d GPUs visible (%s), %,d keys and %,d operations per GPU, "
                + "host batches from %d threads%n", visible, visible > 0 ? CudaRuntime.get().deviceName : "none",
                keysPerGpu, opsPerGpu, threads);
        List<Row> rows = new ArrayList<>();
        for (String g : list(o.gpus, "1,2")) {
            int gpus = Integer.parseInt(g.trim());
            if (gpus > visible) {
                System.out.printf("skipping %d GPUs: %d visible%n", gpus, visible);
                continue;
            }
            rows.addAll(run(o.dir, gpus, keysPerGpu, opsPerGpu, threads));
        }
        System.out.println();
        System.out.println("| GPUs | what | Mops/s | vs 1 GPU | note |");
        System.out.println("| ---: | --- | ---: | ---: | --- |");
        for (Row r : rows) {
            Row one = rows.stream().filter(x -> x.gpus == 1 && x.what.equals(r.what)).findFirst().orElse(null);
            String vs = one == null || one.mops == 0 ? "" : String.format(Locale.ROOT, "%.2fx", r.mops / one.mops);
            System.out.printf(Locale.ROOT, "| %d | %s | %.1f | %s | %s |%n", r.gpus, r.what, r.mops, vs, r.note);
        }
    }

    private static List<Row> run(Path base, int gpus, long keysPerGpu, long opsPerGpu, int threads) throws Exception {
        Path dir = base.resolve("gphash-shard-scaling-" + gpus);
        delete(dir);
        int[] devices = new int[gpus];
        for (int i = 0; i < gpus; i++) {
            devices[i] = i;
        }
        long keys = keysPerGpu * gpus;
        List<Row> rows = new ArrayList<>();
        GPHashIndex index = GPHashIndex.builder(dir).backend(Backend.GPU).devices(devices).keySize(8).valueSize(VS)
                .initialCapacity(keys + opsPerGpu * gpus).seed(20261127L).indexMirror(IndexMirror.REQUIRED)
                .bucketCache(BktCacheConfig.DISABLED).create();
        try {
            ShardedEngine se = (ShardedEngine) index.engine();
            warmUp(index, keys);
            se.stageNanos(true);
            double load = load(index, keys);
            rows.add(row(gpus, "load, host batches of 2^20 (split by shard)", load, keys + " keys; " + stages(se)));
            ShardFunction f = se.function();
            GpuBenchData.ZipfKeys zipf = new GpuBenchData.ZipfKeys(keys, 0.99);
            long fresh = keys * 8;
            rows.add(deviceResident(se, f, gpus, "positive search, uniform", opsPerGpu, r -> r.nextLong(keys), OpKind.GET));
            rows.add(deviceResident(se, f, gpus, "YCSB-C zipf 0.99", opsPerGpu, zipf::next, OpKind.GET));
            rows.add(deviceResident(se, f, gpus, "update, uniform", opsPerGpu, r -> r.nextLong(keys), OpKind.UPDATE));
            long[] next = {fresh};
            rows.add(deviceResident(se, f, gpus, "insert, fresh keys", opsPerGpu / 2, r -> next[0]++, OpKind.INSERT));
            rows.add(splitOnTheGpu(index, gpus, 1, "positive search, uniform", opsPerGpu, keys, OpKind.GET));
            rows.add(splitOnTheGpu(index, gpus, 2, "positive search, uniform", opsPerGpu, keys, OpKind.GET));
            rows.add(splitOnTheGpu(index, gpus, 1, "update, uniform", opsPerGpu, keys, OpKind.UPDATE));
            rows.add(splitOnTheGpu(index, gpus, 2, "update, uniform", opsPerGpu, keys, OpKind.UPDATE));
            rows.add(hostThreads(index, se, gpus, threads, keys));
            if (gpus > 1) {
                rows.add(onePart(index, se, gpus, keys));
            }
        } finally {
            index.close();
        }
        // Open of the whole index against each shard's own open (same GPU each).
        long t0 = System.nanoTime();
        GPHashIndex opened = GPHashIndex.builder(dir).backend(Backend.GPU).devices(devices).indexMirror(IndexMirror.REQUIRED)
                .bucketCache(BktCacheConfig.DISABLED).open();
        double whole = (System.nanoTime() - t0) / 1e6;
        System.out.printf(Locale.ROOT, "open of the whole index, per shard: %s%n", openParts(opened));
        opened.close();
        double slowest = 0;
        StringBuilder each = new StringBuilder();
        for (int s = 0; s < gpus; s++) {
            long t1 = System.nanoTime();
            GPHashIndex alone = GPHashIndex.builder(ShardManifest.shardPath(dir, s)).backend(Backend.GPU).devices(devices[s])
                    .indexMirror(IndexMirror.REQUIRED).bucketCache(BktCacheConfig.DISABLED).open();
            double ms = (System.nanoTime() - t1) / 1e6;
            System.out.printf(Locale.ROOT, "open of shard %d alone: %.0f ms: %s%n", s, ms, openParts(alone));
            alone.close();
            slowest = Math.max(slowest, ms);
            each.append(s == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%.0f", ms));
        }
        System.out.printf(Locale.ROOT, "open of %d x %,d keys: %.0f ms; each shard alone: %s ms; whole / slowest %.2fx%n",
                gpus, keysPerGpu, whole, each, whole / slowest);
        rows.add(new Row(gpus, "open (ms; whole / slowest shard alone)", whole,
                String.format(Locale.ROOT, "%.2fx the slowest shard's own open (%s ms)", whole / slowest, each)));
        delete(dir);
        return rows;
    }

    /** Each shard's recovery time and index placement (which says how long its mirror took to load) after an open. */
    private static String openParts(GPHashIndex index) {
        StringBuilder sb = new StringBuilder();
        for (org.gphash.IndexStats st : index.shardStats()) {
            sb.append(sb.isEmpty() ? "" : " | ").append(String.format(Locale.ROOT, "recovery %d ms, %s",
                    st.lastRecovery().duration().toMillis(), st.indexPlacement()));
        }
        if (index.engine() instanceof ShardedEngine se) {
            for (int s = 0; s < se.shardCount(); s++) {
                sb.append(" | shard ").append(s).append(' ').append(GpuEngines.gpuEngine(se.shard(s)).diagnostics().openTimes());
            }
        }
        return sb.toString();
    }

    private static Row row(int gpus, String what, double mops, String note) {
        System.out.printf(Locale.ROOT, "%d GPUs: %s: %.1f Mops/s (%s)%n", gpus, what, mops, note);
        return new Row(gpus, what, mops, note);
    }

    /**
     * Untimed: eight host batches of 2^20 gets of keys the load will insert, so that the JIT has
     * compiled the split's loops (hashing and listing every operation) before the load is timed;
     * without it the first 2-GPU load measured the interpreter (a split several times slower than
     * once warm).
     */
    private static void warmUp(GPHashIndex index, long keys) {
        Batch b = index.newBatch(BATCH);
        SplittableRandom r = new SplittableRandom(3);
        for (int i = 0; i < BATCH; i++) {
            b.get(r.nextLong(keys));
        }
        BatchResult res = new BatchResult(VS, BATCH);
        for (int i = 0; i < 8; i++) {
            index.execute(b, res);
        }
    }

    /** Loads keys 0..keys-1 through the index in host batches of 2^20 (fresh each); Mops/s wall. */
    private static double load(GPHashIndex index, long keys) {
        BatchResult r = new BatchResult(VS, BATCH);
        Batch b = index.newBatch(BATCH);
        long nanos = 0;
        for (long first = 0; first < keys; first += BATCH) {
            int n = (int) Math.min(BATCH, keys - first);
            b.clear();
            for (long k = first; k < first + n; k++) {
                b.insert(GpuBenchData.key(k), GpuBenchData.value(k, 0, VS));
            }
            long t0 = System.nanoTime();
            index.execute(b, r);
            nanos += System.nanoTime() - t0;
        }
        return keys / (nanos / 1e3);
    }

    /**
     * Each GPU's device-resident batches of its own shard's keys, all GPUs at once; aggregate Mops/s
     * wall (the slowest GPU's end), with each GPU's own GPU-time rate in the note.
     */
    private static Row deviceResident(ShardedEngine se, ShardFunction f, int gpus, String what, long opsPerGpu,
                                      ToLongFunction<SplittableRandom> keys, OpKind kind) throws Exception {
        List<List<DeviceBatch>> work = new ArrayList<>();
        SplittableRandom r = new SplittableRandom(what.hashCode());
        MemorySegment k = MemorySegment.ofArray(new byte[8]);
        List<Batch> building = new ArrayList<>();
        for (int s = 0; s < gpus; s++) {
            building.add(Batch.create(8, VS, BATCH));
            work.add(new ArrayList<>());
        }
        long version = 1;
        long[] filled = new long[gpus];
        long target = opsPerGpu * gpus;
        long placed = 0;
        while (placed < target) {
            long key = keys.applyAsLong(r);
            k.set(ValueLayout.JAVA_LONG_UNALIGNED, 0, key);
            int s = f.shardOf(k, 0, 8);
            if (filled[s] >= opsPerGpu) {
                continue;
            }
            Batch b = building.get(s);
            b.add(kind, GpuBenchData.key(key), kind.hasValue() ? GpuBenchData.value(key, ++version, VS) : null);
            filled[s]++;
            placed++;
            if (b.size() == BATCH || filled[s] == opsPerGpu) {
                GpuEngine g = GpuEngines.gpuEngine(se.shard(s));
                DeviceBatch db = new DeviceBatch(g.cuda(), 8, VS, b.size());
                db.upload(b);
                work.get(s).add(db);
                b.clear();
            }
        }
        // Gets and updates: a pass with per-stage events on every GPU (which also warms the engines
        // up), then the timed pass without. Inserts of fresh keys run once, with the events.
        String profile = "";
        profile(se, gpus, true);
        if (kind != OpKind.INSERT) {
            runAll(se, gpus, work, new long[gpus]);
            profile = stagesOf(se, gpus, opsPerGpu);
            profile(se, gpus, false);
        }
        long[] gpuNanos = new long[gpus];
        long wall = runAll(se, gpus, work, gpuNanos);
        if (kind == OpKind.INSERT) {
            profile = stagesOf(se, gpus, opsPerGpu);
            profile(se, gpus, false);
        }
        StringBuilder per = new StringBuilder("GPU-time per GPU:");
        for (int s = 0; s < gpus; s++) {
            per.append(String.format(Locale.ROOT, " %.0f", opsPerGpu / (gpuNanos[s] / 1e3)));
        }
        System.out.printf(Locale.ROOT, "%d GPUs, %s, stages: %s%n", gpus, what, profile);
        work.forEach(l -> l.forEach(DeviceBatch::close));
        return row(gpus, what + ", device-resident", target / (wall / 1e3), per + " Mops/s");
    }

    /** Each GPU's stage profile since its profiling was turned on. */
    private static String stagesOf(ShardedEngine se, int gpus, long opsPerGpu) {
        StringBuilder sb = new StringBuilder();
        for (int s = 0; s < gpus; s++) {
            GpuEngine g = GpuEngines.gpuEngine(se.shard(s));
            sb.append(s == 0 ? "" : " | ").append("GPU ").append(s).append(": ").append(StageShares.stages(g, opsPerGpu));
        }
        return sb.toString();
    }

    private static void profile(ShardedEngine se, int gpus, boolean on) {
        for (int s = 0; s < gpus; s++) {
            GpuEngines.gpuEngine(se.shard(s)).diagnostics().profileStages(on);
        }
    }

    /** Runs every GPU's batches at once, one thread each, started together; returns the wall time to the last GPU's end. */
    private static long runAll(ShardedEngine se, int gpus, List<List<DeviceBatch>> work, long[] gpuNanos) throws Exception {
        return together(gpus, shard -> {
            GpuEngine g = GpuEngines.gpuEngine(se.shard(shard));
            for (DeviceBatch db : work.get(shard)) {
                g.features().executeOnDevice(db);
                gpuNanos[shard] += g.features().lastBatchGpuNanos();
            }
        });
    }

    /** Runs {@code body(0 .. threads - 1)} on as many threads, started together; returns the wall time to the last one's end. */
    private static long together(int threads, IntConsumer body) throws Exception {
        long[] ends = new long[threads];
        CyclicBarrier start = new CyclicBarrier(threads + 1);
        AtomicReference<RuntimeException> failed = new AtomicReference<>();
        List<Thread> ts = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            int me = i;
            ts.add(Thread.ofPlatform().start(() -> {
                try {
                    start.await();
                    body.accept(me);
                } catch (RuntimeException e) {
                    failed.compareAndSet(null, e);
                } catch (Exception e) {
                    failed.compareAndSet(null, new IllegalStateException(e));
                }
                ends[me] = System.nanoTime();
            }));
        }
        start.await();
        long t0 = System.nanoTime();
        for (Thread t : ts) {
            t.join();
        }
        if (failed.get() != null) {
            throw failed.get();
        }
        return Arrays.stream(ends).max().getAsLong() - t0;
    }

    /**
     * Device-resident batches of 2^20 through the index's GPU view ({@code index.gpu()}), each of keys
     * of every shard, one thread per GPU with its batches in that GPU's memory: the view splits each
     * batch by shard on its GPU, copies the parts to their shards' GPUs, runs them there and merges the
     * outcomes back. On one GPU the index has one shard and runs each batch whole: the baseline.
     * Aggregate Mops/s wall of a second pass (the first warms up).
     */
    private static Row splitOnTheGpu(GPHashIndex index, int gpus, int perGpu, String what, long opsPerGpu, long keys,
                                     OpKind kind) throws Exception {
        org.gphash.GpuFeatures view = index.gpu().orElseThrow();
        List<List<DeviceBatch>> work = new ArrayList<>();
        SplittableRandom r = new SplittableRandom(what.hashCode() + 1L);
        Batch b = Batch.create(8, VS, BATCH);
        long version = 1L << 40;
        int threads = gpus * perGpu;
        long opsPerThread = opsPerGpu / perGpu;
        for (int th = 0; th < threads; th++) {
            int g = th % gpus;
            List<DeviceBatch> mine = new ArrayList<>();
            for (long done = 0; done < opsPerThread; done += BATCH) {
                int n = (int) Math.min(BATCH, opsPerThread - done);
                b.clear();
                for (int i = 0; i < n; i++) {
                    long key = r.nextLong(keys);
                    b.add(kind, GpuBenchData.key(key), kind.hasValue() ? GpuBenchData.value(key, ++version, VS) : null);
                }
                DeviceBatch db = new DeviceBatch(CudaRuntime.get(g), 8, VS, n);
                db.upload(b);
                mine.add(db);
            }
            work.add(mine);
        }
        IntConsumer run = th -> work.get(th).forEach(db -> db.runOn(view));
        together(threads, run);
        DeviceBatchesAcrossShards split = view instanceof DeviceBatchesAcrossShards d ? d : null;
        if (split != null) {
            split.stageNanos(true);
        }
        long wall = together(threads, run);
        String stages = "";
        long[] st = split == null ? new long[4] : split.stageNanos(true);
        if (st[3] > 0) {  // one shard: each batch runs whole on its engine, nothing split
            stages = String.format(Locale.ROOT, "; per batch: split %.2f ms, parts %.2f ms, merge %.2f ms (%d batches)",
                    st[0] / 1e6 / st[3], st[1] / 1e6 / st[3], st[2] / 1e6 / st[3], st[3]);
        }
        work.forEach(l -> l.forEach(DeviceBatch::close));
        return row(gpus, what + ", device-resident, split on the GPU, " + perGpu + (perGpu == 1 ? " thread" : " threads")
                + " a GPU", opsPerGpu * gpus / (wall / 1e3), "batches in their thread's GPU's memory, keys of every shard" + stages);
    }

    /**
     * Shard 0's part of a batch of 2^20 gets from one thread, alone: run where it lies
     * ({@link GpuEngine#executeInPlace}: gathered from the batch and scattered into the result on the
     * GPU) against the same operations copied into a batch of their own (the split before it); both
     * pinned, wall time per part after two untimed runs. Where the host batches' time goes.
     */
    private static Row onePart(GPHashIndex index, ShardedEngine se, int gpus, long keys) {
        GpuEngine shard = GpuEngines.gpuEngine(se.shard(0));
        ShardFunction f = se.function();
        SplittableRandom r = new SplittableRandom(7);
        Batch whole = index.newBatch(BATCH);
        for (int i = 0; i < BATCH; i++) {
            whole.get(r.nextLong(keys));
        }
        MemorySegment positions = Arena.ofAuto().allocate(4L * BATCH, 4);
        Batch copied = index.newBatch(BATCH);
        int count = 0;
        for (int i = 0; i < BATCH; i++) {
            if (f.shardOf(whole.keys(), 8L * i, 8) == 0) {
                positions.setAtIndex(ValueLayout.JAVA_INT, count++, i);
                copied.add(OpKind.GET, whole.keys().asSlice(8L * i, 8), null);
            }
        }
        BatchResult wholeResult = new BatchResult(VS, BATCH);
        BatchResult copiedResult = new BatchResult(VS, BATCH);
        wholeResult.reset(BATCH);
        int rounds = 10;
        long inPlace = 0;
        long asBatch = 0;
        for (int tries = 0; !shard.executeInPlace(whole, wholeResult, positions, count); tries++) {
            if (tries == 2) {  // a batch is pinned on its second run
                throw new IllegalStateException("the part did not run in place");
            }
        }
        shard.diagnostics().profileStages(true);
        for (int i = 0; i < rounds; i++) {
            long t0 = System.nanoTime();
            if (!shard.executeInPlace(whole, wholeResult, positions, count)) {
                throw new IllegalStateException("the part did not run in place");
            }
            inPlace += System.nanoTime() - t0;
        }
        String inPlaceStages = StageShares.stages(shard, (long) count * rounds);
        shard.execute(copied, copiedResult);
        shard.execute(copied, copiedResult);
        shard.diagnostics().profileStages(true);
        for (int i = 0; i < rounds; i++) {
            long t0 = System.nanoTime();
            shard.execute(copied, copiedResult);
            asBatch += System.nanoTime() - t0;
        }
        String copiedStages = StageShares.stages(shard, (long) count * rounds);
        shard.diagnostics().profileStages(false);
        System.out.println("one part, GPU stages: in place " + inPlaceStages + " | copied " + copiedStages);
        return row(gpus, "one shard's part of 2^20 gets from 1 thread, in place", count * (double) rounds / (inPlace / 1e3),
                String.format(Locale.ROOT, "%d gets: %.2f ms in place, %.2f ms copied into a batch of its own (%.1f Mops/s)",
                        count, inPlace / 1e6 / rounds, asBatch / 1e6 / rounds, count * (double) rounds / (asBatch / 1e3)));
    }

    /** {@code threads} Java threads, each running its own two host batches of 2^20 gets over and over through the index. */
    private static Row hostThreads(GPHashIndex index, ShardedEngine se, int gpus, int threads, long keys) throws Exception {
        int rounds = 24;  // six rounds (about 150 ms) moved by up to 15% between runs
        List<Batch> batches = new ArrayList<>();
        SplittableRandom r = new SplittableRandom(99);
        for (int t = 0; t < threads * 2; t++) {
            Batch b = index.newBatch(BATCH);
            for (int i = 0; i < BATCH; i++) {
                b.get(r.nextLong(keys));
            }
            batches.add(b);
        }
        // Counting starts when every thread is past its warm-up (the barrier's action runs before any goes on).
        CyclicBarrier start = new CyclicBarrier(threads + 1, () -> {
            se.stageNanos(true);
            for (int s = 0; s < se.shardCount(); s++) {
                GpuEngines.gpuEngine(se.shard(s)).diagnostics().hostStageNanos(true);
            }
        });
        long[] ends = new long[threads];
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            ts.add(Thread.ofPlatform().start(() -> {
                BatchResult res = new BatchResult(VS, BATCH);
                for (int warm = 0; warm < 2; warm++) {  // pins the batches (second run) and the results
                    index.execute(batches.get(2 * id), res);
                    index.execute(batches.get(2 * id + 1), res);
                }
                try {
                    start.await();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
                for (int i = 0; i < rounds; i++) {
                    index.execute(batches.get(2 * id + (i & 1)), res);
                }
                ends[id] = System.nanoTime();
            }));
        }
        start.await();
        long t0 = System.nanoTime();
        for (Thread t : ts) {
            t.join();
        }
        long wall = Arrays.stream(ends).max().getAsLong() - t0;
        long ops = (long) threads * rounds * BATCH;
        StringBuilder note = new StringBuilder(stages(se));
        for (int s = 0; s < se.shardCount(); s++) {
            note.append("; shard ").append(s).append(' ')
                    .append(StageShares.hostShares(GpuEngines.gpuEngine(se.shard(s)).diagnostics().hostStageNanos(false)));
        }
        return row(gpus, "positive search, host batches of 2^20 from " + threads + " threads", ops / (wall / 1e3),
                note.toString());
    }

    /** The sharded index's split, run and merge time per batch since the last reset (each summed over the calling threads). */
    private static String stages(ShardedEngine se) {
        long[] v = se.stageNanos(true);
        if (v[3] == 0) {
            return "one shard: batches go to its engine unsplit";
        }
        return String.format(Locale.ROOT, "per batch: split %.1f ms, shards' run %.1f ms, of which copies of parts %.1f ms"
                + " (%d batches; parts run in place %d, copied %d)",
                v[0] / 1e6 / v[3], v[1] / 1e6 / v[3], v[2] / 1e6 / v[3], v[3], v[4], v[5]);
    }

    private static void delete(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
