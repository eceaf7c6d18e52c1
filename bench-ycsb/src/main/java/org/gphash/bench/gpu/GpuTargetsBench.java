package org.gphash.bench.gpu;

import static org.gphash.bench.gpu.GpuBenchArgs.list;
import static org.gphash.bench.gpu.GpuBenchArgs.num;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.GPHashConfig;
import org.gphash.GPHashIndex;
import org.gphash.IndexMirror;
import org.gphash.IndexStats;
import org.gphash.OpKind;
import org.gphash.bktcache.BktCacheConfig;
import org.gphash.bktcache.CachePolicy;
import org.gphash.cuda.DeviceBatch;
import org.gphash.cuda.GpuEngine;
import org.gphash.cuda.GpuEngines;
import org.gphash.index.CpuEngine;
import org.gphash.spi.Engine;

/**
 * The GPU engine v2's measurements against its targets (issue "GPU engine v2"), each point with the
 * baselines measured in the same run:
 *
 * <ul>
 *   <li>{@code targets}: 16M keys of 8 bytes with 128-byte values; load, pool size and bytes per
 *       item, open time (recovery and mirror load); device-resident batches of 2^20 for positive and
 *       negative search, update, insert, delete, YCSB-C and YCSB-A at zipf 0.99 (cache off, then
 *       BktCache 20% LFU), wall and GPU time, per-stage GPU time; host batches of the same; the pool
 *       path (mirror off, the same pool reopened) and the CPU-assisted path (CPU engine, 16 threads,
 *       plus the copies a GPU application pays) on the same operations;</li>
 *   <li>{@code theta}: YCSB-C against the skew, zipf 0.5 to 1.2;</li>
 *   <li>{@code paper}: the GPHash artifact's own workload (16M keys, 8-byte keys, 32-byte values,
 *       YCSB-C zipf 0.99 and uniform, YCSB-A zipf 0.99, batches of 2^20 and 2^12, GPU time only, as
 *       the artifact reports it).</li>
 *   <li>{@code load} (not run by default): the load of {@code --keys} keys from fresh host batches of
 *       2^20, with its host time by stage, beside the device-resident insert into the same pool.</li>
 * </ul>
 *
 * <pre>
 * ./gphash run org.gphash.bench.gpu.GpuTargetsBench [--parts targets,theta,paper,load] [--keys 16777216]
 *     [--ops 4194304] [--thetas 0.5,0.7,0.9,0.99,1.1,1.2] [--threads 16] [--dir /dev/shm]
 * </pre>
 *
 * <p>Why this class is long: one benchmark run on one pool, its parts (targets, skew, the artifact's
 * workload, small batches, the load) sharing the loaded pool and the report's table.
 */
public final class GpuTargetsBench {

    private static final int BATCH = 1 << 20;

    private GpuTargetsBench() {
    }

    /** One measured row: what, wall Mops/s, GPU-time Mops/s, and notes. */
    private record Row(String what, double wallMops, double gpuMops, String note) {
        String format() {
            return String.format(Locale.ROOT, "| %s | %.1f | %.1f | %s |", what, wallMops, gpuMops, note);
        }
    }

    public static void main(String[] argv) throws Exception {
        GpuBenchArgs o = GpuBenchArgs.parse(argv, "GpuTargetsBench");
        List<String> parts = list(o.parts, "targets,theta,paper");
        if (parts.contains("targets")) {
            targets(o);
        }
        if (parts.contains("theta")) {
            theta(o);
        }
        if (parts.contains("paper")) {
            paper(o);
        }
        if (parts.contains("load")) {
            loadBesideInsert(o);
        }
    }

    /**
     * The load of {@code --keys} keys from fresh host batches of 2^20 (each run once, as an
     * application that fills a new batch each time runs them), with its host time by stage, beside
     * the device-resident insert of {@code --ops}/2 fresh keys into the same pool: issue 25's load
     * target, without the rest of {@code targets}. Then the same load into a second pool from one
     * batch cleared and filled again for each 2^20 keys (pinned on its first run, as USAGE.md advises),
     * beside the same insert: what registering each fresh batch costs the load.
     */
    private static void loadBesideInsert(GpuBenchArgs o) throws Exception {
        long keys = num(o.keys, 1L << 24);
        long ops = num(o.ops, 1L << 22);
        int vs = 128;
        Path gp = o.dir.resolve("gphash-load-gpu.pool");
        Path rp = o.dir.resolve("gphash-load-reused-gpu.pool");
        Files.deleteIfExists(gp);
        Files.deleteIfExists(rp);
        List<Batch> ins = sequential(keys * 8, ops / 2, BATCH, vs, OpKind.INSERT);
        double insertWall;
        try (GpuEngine gpu = GpuEngines.create(config(gp, Backend.GPU, vs, keys + ops, IndexMirror.REQUIRED,
                BktCacheConfig.DISABLED)); Work wIns = Work.of(ins, vs)) {
            gpu.diagnostics().hostStageNanos(true);
            double lm = load(gpu, keys, vs);
            String ls = StageShares.hostShares(gpu.diagnostics().hostStageNanos(false));
            double[] i = device(gpu, wIns);
            insertWall = i[0];
            System.out.printf(Locale.ROOT, "load of %,d keys from fresh host batches of 2^20: %.1f Mops/s; "
                    + "device-resident insert of %,d fresh keys: %.1f Mops/s wall, %.1f GPU; load / insert %.2fx; %s%n",
                    keys, lm, ops / 2, i[0], i[1], lm / i[0], ls);
        } finally {
            Files.deleteIfExists(gp);
        }
        try (GpuEngine gpu = GpuEngines.create(config(rp, Backend.GPU, vs, keys + ops, IndexMirror.REQUIRED,
                BktCacheConfig.DISABLED))) {
            gpu.diagnostics().hostStageNanos(true);
            double lm = load(gpu, keys, vs, Batch.create(8, vs, BATCH));
            System.out.printf(Locale.ROOT, "load of %,d keys from one host batch of 2^20, refilled: %.1f Mops/s; "
                    + "load / insert above %.2fx; %s%n", keys, lm, lm / insertWall, StageShares.hostShares(gpu.diagnostics().hostStageNanos(false)));
        } finally {
            Files.deleteIfExists(rp);
        }
    }

    static GPHashConfig config(Path p, Backend backend, int valueSize, long keys, IndexMirror mirror,
                                       BktCacheConfig cache) {
        return config(p, backend, valueSize, keys, mirror, cache, null);
    }

    /** {@link #config}, the pool in {@code poolFormat} where it is not null (issue 53's rows in format 3). */
    static GPHashConfig config(Path p, Backend backend, int valueSize, long keys, IndexMirror mirror,
                               BktCacheConfig cache, Integer poolFormat) {
        GPHashIndex.Builder b = GPHashIndex.builder(p).backend(backend).keySize(8).valueSize(valueSize).initialCapacity(keys)
                .seed(20261122L).bucketCache(backend == Backend.GPU ? cache : BktCacheConfig.DISABLED).indexMirror(mirror);
        return (poolFormat == null ? b : b.poolFormat(poolFormat)).config();
    }

    /** A new pool at {@code p} (the mirror required, the cache off) with keys 0..keys-1 loaded. */
    static GpuEngine loaded(Path p, long keys, int vs) throws IOException {
        Files.deleteIfExists(p);
        GpuEngine gpu = GpuEngines.create(config(p, Backend.GPU, vs, keys, IndexMirror.REQUIRED, BktCacheConfig.DISABLED));
        load(gpu, keys, vs);
        return gpu;
    }

    /** Inserts keys 0..keys-1 in fresh batches of 2^20; returns Mops/s (host batches, wall time). */
    static double load(GpuEngine gpu, long keys, int vs) {
        return load(gpu, keys, vs, null);
    }

    /**
     * Inserts keys 0..keys-1 in batches of 2^20: {@code reused}, cleared and filled for each, or a
     * fresh batch each time when it is null; returns Mops/s (the time in {@code execute}).
     */
    static double load(Engine gpu, long keys, int vs, Batch reused) {
        BatchResult r = new BatchResult(vs, BATCH);
        long nanos = 0;
        for (long first = 0; first < keys; first += BATCH) {
            int n = (int) Math.min(BATCH, keys - first);
            Batch b = reused != null ? reused : Batch.create(8, vs, n);
            b.clear();
            for (long k = first; k < first + n; k++) {
                b.insert(GpuBenchData.key(k), GpuBenchData.value(k, 0, vs));
            }
            long t0 = System.nanoTime();
            gpu.execute(b, r);
            nanos += System.nanoTime() - t0;
        }
        return keys / (nanos / 1e3);
    }

    /** The batches of one workload, in Java memory and on the GPU. */
    private record Work(List<Batch> host, List<DeviceBatch> device) implements AutoCloseable {
        static Work of(List<Batch> host, int vs) {
            List<DeviceBatch> d = new ArrayList<>();
            for (Batch b : host) {
                DeviceBatch db = new DeviceBatch(8, vs, b.size());
                db.upload(b);
                d.add(db);
            }
            return new Work(host, d);
        }

        long ops() {
            return host.stream().mapToLong(Batch::size).sum();
        }

        @Override
        public void close() {
            device.forEach(DeviceBatch::close);
        }
    }

    interface KeySource {
        long next(SplittableRandom r);
    }

    static List<Batch> workload(long ops, int batch, int vs, double reads, OpKind write, KeySource keys, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        List<Batch> out = new ArrayList<>();
        long version = 1;
        for (long done = 0; done < ops; done += batch) {
            int n = (int) Math.min(batch, ops - done);
            Batch b = Batch.create(8, vs, n);
            for (int i = 0; i < n; i++) {
                long k = keys.next(r);
                if (reads >= 1 || r.nextDouble() < reads) {
                    b.add(OpKind.GET, GpuBenchData.key(k), null);
                } else {
                    b.add(write, GpuBenchData.key(k), GpuBenchData.value(k, ++version, vs));
                }
            }
            out.add(b);
        }
        return out;
    }

    /** Keys fresh..fresh+ops-1 in order, each once (insert), or the same again (delete). */
    private static List<Batch> sequential(long first, long ops, int batch, int vs, OpKind kind) {
        List<Batch> out = new ArrayList<>();
        for (long done = 0; done < ops; done += batch) {
            int n = (int) Math.min(batch, ops - done);
            Batch b = Batch.create(8, vs, n);
            for (int i = 0; i < n; i++) {
                long k = first + done + i;
                b.add(kind, GpuBenchData.key(k), kind.hasValue() ? GpuBenchData.value(k, 1, vs) : null);
            }
            out.add(b);
        }
        return out;
    }

    /** Device-resident: {wall Mops/s, GPU-time Mops/s}. */
    private static double[] device(GpuEngine gpu, Work w) {
        long gpuNanos = 0;
        long t0 = System.nanoTime();
        for (DeviceBatch b : w.device()) {
            gpu.features().executeOnDevice(b);
            gpuNanos += gpu.features().lastBatchGpuNanos();
        }
        long wall = System.nanoTime() - t0;
        return new double[] {w.ops() / (wall / 1e3), gpuNanos == 0 ? 0 : w.ops() / (gpuNanos / 1e3)};
    }

    /**
     * Host batches: wall Mops/s, after two untimed passes (JIT, staging buffers, the result's pages,
     * and the engine pinning the batches, which it does on a batch's second run): the steady state of
     * an application that reuses its batches.
     */
    private static double host(GpuEngine gpu, Work w, int vs) {
        BatchResult r = new BatchResult(vs, BATCH);
        for (int pass = 0; pass < 2; pass++) {
            for (Batch b : w.host()) {
                gpu.execute(b, r);
            }
        }
        gpu.diagnostics().hostStageNanos(true);
        long t0 = System.nanoTime();
        for (Batch b : w.host()) {
            gpu.execute(b, r);
        }
        double mops = w.ops() / ((System.nanoTime() - t0) / 1e3);
        lastHostStages = StageShares.hostShares(gpu.diagnostics().hostStageNanos(false));
        // One more pass with the GPU's timeline of the chunks on, apart from the timed one: its
        // events cost twelve driver calls a chunk.
        gpu.diagnostics().timeChunks(true);
        for (Batch b : w.host()) {
            gpu.execute(b, r);
        }
        lastHostStages += "; " + StageShares.gpuShares(gpu.diagnostics().hostStageNanos(false));
        gpu.diagnostics().timeChunks(false);
        return mops;
    }

    /** The host stages of the last {@link #host} pass, as shares of its total. */
    private static String lastHostStages = "";

    private static Row profiled(GpuEngine gpu, String what, Work w) {
        gpu.diagnostics().profileStages(true);
        device(gpu, w);  // a pass with per-stage events (they cost a little), then the timed pass without
        String s = StageShares.stages(gpu, w.ops());
        gpu.diagnostics().profileStages(false);
        double[] d = device(gpu, w);
        Row r = new Row(what, d[0], d[1], s);
        System.out.println(r.format());
        return r;
    }

    // ------------------------------------------------------------------ targets

    private static void targets(GpuBenchArgs o) throws Exception {
        long keys = num(o.keys, 1L << 24);
        long ops = num(o.ops, 1L << 22);
        int vs = (int) num(o.valueSize, 128);
        int threads = (int) num(o.threads, 16);
        Path dir = o.dir;
        Path gp = dir.resolve("gphash-targets-gpu.pool");
        Path cp = dir.resolve("gphash-targets-cpu.pool");
        Files.deleteIfExists(gp);
        Files.deleteIfExists(cp);
        List<Row> rows = new ArrayList<>();
        List<String> notes = new ArrayList<>();
        GpuBenchData.ZipfKeys zipf = new GpuBenchData.ZipfKeys(keys, 0.99);
        List<Batch> pos = workload(ops, BATCH, vs, 1.0, OpKind.UPDATE, r -> r.nextLong(keys), 1);
        List<Batch> neg = workload(ops, BATCH, vs, 1.0, OpKind.UPDATE, r -> keys * 4 + r.nextLong(keys), 2);
        List<Batch> upd = workload(ops, BATCH, vs, 0.0, OpKind.UPDATE, r -> r.nextLong(keys), 3);
        // Inserts of ops/2 fresh keys: the table (sized for keys + ops) takes them without a resize.
        List<Batch> ins = sequential(keys * 8, ops / 2, BATCH, vs, OpKind.INSERT);
        List<Batch> del = sequential(keys * 8, ops / 2, BATCH, vs, OpKind.DELETE);
        List<Batch> c = workload(ops, BATCH, vs, 1.0, OpKind.UPDATE, zipf::next, 4);
        List<Batch> a = workload(ops, BATCH, vs, 0.5, OpKind.UPDATE, zipf::next, 5);
        IndexStats loaded;
        try (GpuEngine gpu = GpuEngines.create(config(gp, Backend.GPU, vs, keys + ops, IndexMirror.REQUIRED,
                BktCacheConfig.DISABLED, o.poolFormat))) {
            gpu.diagnostics().hostStageNanos(true);
            double lm = load(gpu, keys, vs);
            String ls = StageShares.hostShares(gpu.diagnostics().hostStageNanos(false));
            loaded = gpu.stats();
            notes.add(String.format(Locale.ROOT, "load of %,d keys: %.1f Mops/s (host batches of 2^20, each run once); %s; %s",
                    keys, lm, ls, loaded));
            long live = keys * (8 + vs);
            notes.add(String.format(Locale.ROOT, "pool %,d bytes for %,d items: %.1f bytes per item, %.2fx the live data "
                    + "(%,d bytes of keys and values)", loaded.fileBytes(), loaded.size(), loaded.poolBytesPerItem(),
                    (double) loaded.fileBytes() / live, live));
        }
        long t0 = System.nanoTime();
        GpuEngine gpu = GpuEngines.open(config(gp, Backend.GPU, vs, keys, IndexMirror.REQUIRED, BktCacheConfig.DISABLED, o.poolFormat));
        long openNanos = System.nanoTime() - t0;
        notes.add(String.format(Locale.ROOT, "open of the %,d-key pool, recovery and mirror load included: %.0f ms; "
                + "recovery: %s; index: %s", keys, openNanos / 1e6, gpu.lastRecovery(), gpu.stats().indexPlacement()));
        try (gpu;
             Work wPos = Work.of(pos, vs); Work wNeg = Work.of(neg, vs); Work wUpd = Work.of(upd, vs);
             Work wC = Work.of(c, vs); Work wA = Work.of(a, vs)) {
            rows.add(profiled(gpu, "positive search, uniform", wPos));
            rows.add(profiled(gpu, "negative search", wNeg));
            rows.add(profiled(gpu, "update, uniform", wUpd));
            try (Work wIns = Work.of(ins, vs); Work wDel = Work.of(del, vs)) {
                gpu.diagnostics().profileStages(true);
                double[] i = device(gpu, wIns);
                String si = StageShares.stages(gpu, wIns.ops());
                gpu.diagnostics().profileStages(true);
                double[] d = device(gpu, wDel);
                String sd = StageShares.stages(gpu, wDel.ops());
                gpu.diagnostics().profileStages(false);
                rows.add(new Row("insert (fresh keys)", i[0], i[1], si));
                rows.add(new Row("delete (the keys just inserted)", d[0], d[1], sd));
                System.out.println(rows.get(rows.size() - 2).format());
                System.out.println(rows.getLast().format());
            }
            rows.add(profiled(gpu, "YCSB-C zipf 0.99, cache off", wC));
            rows.add(profiled(gpu, "YCSB-A zipf 0.99, cache off", wA));
            for (Work w : List.of(wC, wA)) {
                String name = w == wC ? "YCSB-C" : "YCSB-A";
                gpu.features().configureBucketCache(BktCacheConfig.builder().share(0.2).policy(CachePolicy.LFU).reloadEveryOperations(0)
                        .build());
                device(gpu, w);  // the counters learn the workload
                gpu.reloadBucketCache(true);
                long h0 = gpu.features().bucketCacheStats().hits();
                long m0 = gpu.features().bucketCacheStats().misses();
                Row r = profiled(gpu, name + " zipf 0.99, BktCache 20% LFU", w);
                long h = gpu.features().bucketCacheStats().hits() - h0;
                long m = gpu.features().bucketCacheStats().misses() - m0;
                rows.add(new Row(r.what(), r.wallMops(), r.gpuMops(),
                        String.format(Locale.ROOT, "value hit rate %.3f; %s", h + m == 0 ? 0 : (double) h / (h + m), r.note())));
                gpu.features().configureBucketCache(BktCacheConfig.DISABLED);
            }
            double hp = host(gpu, wPos, vs);
            String sp = lastHostStages;
            double hc = host(gpu, wC, vs);
            String sc = lastHostStages;
            double hu = host(gpu, wUpd, vs);
            String su = lastHostStages;
            rows.add(new Row("host batches: positive search", hp, 0, String.format(Locale.ROOT, "%.2fx device-resident; %s",
                    hp / rows.get(0).wallMops(), sp)));
            rows.add(new Row("host batches: YCSB-C zipf 0.99", hc, 0, String.format(Locale.ROOT, "%.2fx device-resident; %s",
                    hc / rows.get(5).wallMops(), sc)));
            rows.add(new Row("host batches: update", hu, 0, String.format(Locale.ROOT, "%.2fx device-resident; %s",
                    hu / rows.get(2).wallMops(), su)));
            System.out.println(rows.get(rows.size() - 3).format() + "\n" + rows.get(rows.size() - 2).format() + "\n"
                    + rows.getLast().format());
            notes.add("after the points: " + gpu.stats());
        }
        // The pool path: the same pool, reopened with the mirror off.
        try (GpuEngine off = GpuEngines.open(config(gp, Backend.GPU, vs, keys, IndexMirror.OFF, BktCacheConfig.DISABLED, o.poolFormat));
             Work wPos = Work.of(pos, vs); Work wC = Work.of(c, vs)) {
            double[] p = device(off, wPos);
            double[] z = device(off, wC);
            rows.add(new Row("pool path (mirror off): positive search", p[0], 0, off.stats().indexPlacement()));
            rows.add(new Row("pool path (mirror off): YCSB-C zipf 0.99", z[0], 0, ""));
            System.out.println(rows.get(rows.size() - 2).format() + "\n" + rows.getLast().format());
        }
        Files.deleteIfExists(gp);
        // The CPU-assisted path: the CPU engine with `threads` threads plus the copies a GPU application pays.
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try (CpuEngine cpu = CpuEngine.create(config(cp, Backend.CPU, vs, keys, IndexMirror.AUTO, BktCacheConfig.DISABLED, o.poolFormat));
             HostRoundTrip copies = new HostRoundTrip()) {
            List<BatchResult> results = new ArrayList<>();
            for (long first = 0; first < keys; first += BATCH) {
                int n = (int) Math.min(BATCH, keys - first);
                Batch b = Batch.create(8, vs, n);
                for (long k = first; k < first + n; k++) {
                    b.insert(GpuBenchData.key(k), GpuBenchData.value(k, 0, vs));
                }
                GpuMicroBench.parallel(cpu, pool, GpuMicroBench.split(b, threads, 8), results);
            }
            for (String[] w : new String[][] {{"positive search", "p"}, {"YCSB-C zipf 0.99", "c"}, {"update", "u"}}) {
                List<Batch> src = switch (w[1]) {
                    case "p" -> pos;
                    case "c" -> c;
                    default -> upd;
                };
                long nanos = 0;
                long n = 0;
                for (Batch b : src) {
                    List<Batch> split = GpuMicroBench.split(b, threads, 8);
                    copies.placeOnDevice(b.keys());
                    long t1 = System.nanoTime();
                    copies.keysToHost(b.keys());
                    if (!w[1].equals("u")) {
                        GpuMicroBench.parallel(cpu, pool, split, results);
                        for (int i = 0; i < split.size(); i++) {
                            copies.valuesToDevice(results.get(i).values());
                        }
                    } else {
                        copies.keysToHost(b.values());
                        GpuMicroBench.parallel(cpu, pool, split, results);
                    }
                    nanos += System.nanoTime() - t1;
                    n += b.size();
                }
                rows.add(new Row("CPU-assisted (" + threads + " threads): " + w[0], n / (nanos / 1e3), 0, ""));
                System.out.println(rows.getLast().format());
            }
        } finally {
            pool.shutdownNow();
            Files.deleteIfExists(cp);
        }
        System.out.println();
        notes.forEach(n -> System.out.println("# " + n));
        System.out.println();
        System.out.println("| operation (8-byte keys, " + vs + "-byte values, " + keys + " keys, pool format "
                + (o.poolFormat == null ? "2" : o.poolFormat) + ", batches of 2^20) | Mops/s (wall) "
                + "| Mops/s (GPU time) | GPU time per stage (profiled pass) |");
        System.out.println("| --- | --- | --- | --- |");
        rows.forEach(r -> System.out.println(r.format()));
    }

    // ------------------------------------------------------------------ skew

    private static void theta(GpuBenchArgs o) throws Exception {
        long keys = num(o.keys, 1L << 24);
        long ops = num(o.ops, 1L << 22);
        int vs = 128;
        Path gp = o.dir.resolve("gphash-theta.pool");
        List<String> rows = new ArrayList<>();
        try (GpuEngine gpu = loaded(gp, keys, vs)) {
            for (String tn : list(o.thetas, "0.5,0.7,0.9,0.99,1.1,1.2")) {
                GpuBenchData.ZipfKeys z = new GpuBenchData.ZipfKeys(keys, Double.parseDouble(tn));
                try (Work c = Work.of(workload(ops, BATCH, vs, 1.0, OpKind.UPDATE, z::next, 7), vs);
                     Work a = Work.of(workload(ops, BATCH, vs, 0.5, OpKind.UPDATE, z::next, 8), vs)) {
                    double[] dc = device(gpu, c);
                    double[] da = device(gpu, a);
                    String row = String.format(Locale.ROOT, "| %s | %.1f | %.1f | %.1f | %.1f |", tn, dc[0], dc[1], da[0], da[1]);
                    System.out.println(row);
                    rows.add(row);
                }
            }
        } finally {
            Files.deleteIfExists(gp);
        }
        System.out.println();
        System.out.println("| zipf theta | YCSB-C Mops/s (wall) | YCSB-C (GPU time) | YCSB-A Mops/s (wall) | YCSB-A (GPU time) |");
        System.out.println("| --- | --- | --- | --- | --- |");
        rows.forEach(System.out::println);
    }

    // ------------------------------------------------------------------ the GPHash artifact's workload

    private static void paper(GpuBenchArgs o) throws Exception {
        long keys = num(o.keys, 1L << 24);
        long ops = num(o.ops, 1L << 22);
        int vs = 32;
        Path gp = o.dir.resolve("gphash-paper.pool");
        List<String> rows = new ArrayList<>();
        double[][] artifact = {{46.1, 24.6}, {36.9, 21.6}, {24.7, 12.9}};
        try (GpuEngine gpu = loaded(gp, keys, vs)) {
            GpuBenchData.ZipfKeys z = new GpuBenchData.ZipfKeys(keys, 0.99);
            String[] names = {"YCSB-C zipf 0.99", "YCSB-C uniform", "YCSB-A zipf 0.99"};
            for (int wi = 0; wi < 3; wi++) {
                for (int bi = 0; bi < 2; bi++) {
                    int batch = bi == 0 ? 1 << 20 : 1 << 12;
                    long points = bi == 0 ? ops : Math.min(ops, 1L << 20);
                    KeySource ks = wi == 1 ? r -> r.nextLong(keys) : z::next;
                    double reads = wi == 2 ? 0.5 : 1.0;
                    try (Work w = Work.of(workload(points, batch, vs, reads, OpKind.UPDATE, ks, 11 + wi), vs)) {
                        device(gpu, w);  // warm-up pass
                        double[] d = device(gpu, w);
                        gpu.diagnostics().profileStages(true);
                        device(gpu, w);
                        System.out.printf(Locale.ROOT, "# %s, batch 2^%d: GPU time per stage %s%n", names[wi],
                                bi == 0 ? 20 : 12, StageShares.stages(gpu, w.ops()));
                        gpu.diagnostics().profileStages(false);
                        String row = String.format(Locale.ROOT, "| %s | 2^%d | %.1f | %.1f | %.1f | %.1fx |", names[wi],
                                bi == 0 ? 20 : 12, d[1], d[0], artifact[wi][bi], d[1] / artifact[wi][bi]);
                        System.out.println(row);
                        rows.add(row);
                    }
                }
            }
        } finally {
            Files.deleteIfExists(gp);
        }
        System.out.println();
        System.out.println("| workload (16M keys, 8-byte keys, 32-byte values) | batch | gphash Mops/s (GPU time) "
                + "| gphash Mops/s (wall) | GPHash artifact Mops/s (kernel time, docs/FACTS.md) | ratio |");
        System.out.println("| --- | --- | --- | --- | --- | --- |");
        rows.forEach(System.out::println);
    }
}
