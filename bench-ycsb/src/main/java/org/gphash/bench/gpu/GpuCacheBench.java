package org.gphash.bench.gpu;

import static org.gphash.bench.gpu.GpuBenchArgs.list;
import static org.gphash.bench.gpu.GpuBenchArgs.num;
import static org.gphash.bench.gpu.GpuBenchArgs.real;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.GPHashIndex;
import org.gphash.OpKind;
import org.gphash.bktcache.BktCacheConfig;
import org.gphash.bktcache.BktCacheStats;
import org.gphash.bktcache.CachePolicy;
import org.gphash.cuda.DeviceBatch;
import org.gphash.cuda.GpuEngine;
import org.gphash.cuda.GpuEngines;

/**
 * BktCache's measurements on the GPU machine (GPHash §4.6, §4.7): YCSB A, B, C and F under zipf
 * skew through the GPU engine with the cache at several sizes and policies (Figure 11), YCSB C
 * against the skew (Figure 12(b)), and throughput over time across a load with and without
 * concurrent fetching (Figure 15). Every configuration runs on one loaded pool
 * ({@link GpuEngine#configureBucketCache}); the cache-off run of the same workload in the same run
 * is the baseline of each ratio.
 *
 * <p>Each measured point: the workload's batches run once with the new cache (its counters learn
 * the workload), the cache is loaded, and the same batches run again, timed; the hit rate is that of
 * the timed pass. Loads are on demand only (no periodic load during a timed pass). {@code sweep} also
 * prints each workload's GPU time per pipeline stage from one more cache-off pass (stages launched one
 * by one, so short stages read longer than inside the graph a timed pass replays).
 *
 * <pre>
 * GpuCacheBench sweep  --keys N --key-sizes 8,32 --workloads A,B,C,F --shares 0,0.1,0.2,0.4 --policies LFU,LRU,RANDOM
 *                      [--theta 0.99] [--batch 1048576] [--ops 8388608] [--sample-shift 2] [--dir /dev/shm]
 * GpuCacheBench theta  --keys N --thetas 0.5,0.6,...,1.2 [--share 0.2]
 * GpuCacheBench reload --keys N [--share 0.2] [--batch 65536] [--millis 1500] [--at 400]   (device-resident batches)
 * </pre>
 */
public final class GpuCacheBench {

    private static final int VALUE_SIZE = 128;

    private GpuCacheBench() {
    }

    public static void main(String[] argv) throws Exception {
        GpuBenchArgs a = GpuBenchArgs.parse(argv, "GpuCacheBench");
        String mode = a.mode == null ? "" : a.mode;
        long keys = num(a.keys, 1L << 24);
        Path dir = a.dir;
        switch (mode) {
            case "sweep" -> {
                List<String> rows = new ArrayList<>();
                for (String ks : list(a.keySizes, "8,32")) {
                    sweep(a, dir, keys, Integer.parseInt(ks), rows);
                }
                System.out.println();
                System.out.println("| key | workload | cache | policy | host batch Mops/s | device-resident Mops/s "
                        + "| device-resident x cache off | hit rate |");
                System.out.println("| --- | --- | --- | --- | --- | --- | --- | --- |");
                rows.forEach(System.out::println);
            }
            case "theta" -> theta(a, dir, keys);
            case "reload" -> reload(a, dir, keys);
            case "paths" -> paths(a, dir, keys);
            default -> throw new IllegalArgumentException("unknown mode " + mode + ": sweep, theta or reload");
        }
    }

    // ------------------------------------------------------------------ workloads

    /** The YCSB core workloads the study uses: the share of reads, and what the others are. */
    enum Workload {
        A(0.5, OpKind.UPDATE), B(0.95, OpKind.UPDATE), C(1.0, OpKind.UPDATE), F(0.5, OpKind.READ_MODIFY_WRITE);

        final double reads;
        final OpKind write;

        Workload(double reads, OpKind write) {
            this.reads = reads;
            this.write = write;
        }
    }

    static List<Batch> batches(Workload w, GpuBenchData.ZipfKeys zipf, int ks, int batch, long ops, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        List<Batch> out = new ArrayList<>();
        long version = 1;
        for (long done = 0; done < ops; done += batch) {
            int n = (int) Math.min(batch, ops - done);
            Batch b = Batch.create(ks, VALUE_SIZE, n);
            for (int i = 0; i < n; i++) {
                long k = zipf.next(r);
                if (r.nextDouble() < w.reads) {
                    b.add(OpKind.GET, GpuMicroBench.key(k, ks), null);
                } else {
                    b.add(w.write, GpuMicroBench.key(k, ks), GpuMicroBench.value(k, ++version));
                }
            }
            out.add(b);
        }
        return out;
    }

    private static GpuEngine loadedPool(Path dir, long keys, int ks) throws Exception {
        Path p = dir.resolve("gphash-cache-bench-" + ks + ".pool");
        Files.deleteIfExists(p);
        GpuEngine gpu = GpuEngines.create(GPHashIndex.builder(p).backend(Backend.GPU).keySize(ks).valueSize(VALUE_SIZE)
                .initialCapacity((long) (keys * 1.3)).seed(20261121L).bucketCache(BktCacheConfig.DISABLED).config());
        int b = 1 << 20;
        BatchResult r = new BatchResult(VALUE_SIZE, b);
        long t0 = System.nanoTime();
        for (long first = 0; first < keys; first += b) {
            int n = (int) Math.min(b, keys - first);
            Batch batch = Batch.create(ks, VALUE_SIZE, n);
            for (long k = first; k < first + n; k++) {
                batch.insert(GpuMicroBench.key(k, ks), GpuMicroBench.value(k, 0));
            }
            gpu.execute(batch, r);
        }
        System.out.printf(Locale.ROOT, "# %d-byte keys on %s: %,d keys loaded in %.1f s; %s%n", ks, gpu.features().deviceName(), keys,
                (System.nanoTime() - t0) / 1e9, gpu.stats());
        p.toFile().deleteOnExit();
        return gpu;
    }

    /** The workload's batches in GPU memory too, for device-resident runs (no host copies). */
    record Workload2(List<Batch> host, List<DeviceBatch> device) implements AutoCloseable {
        static Workload2 of(List<Batch> host, int ks) {
            List<DeviceBatch> d = new ArrayList<>();
            for (Batch b : host) {
                DeviceBatch db = new DeviceBatch(ks, VALUE_SIZE, b.size());
                db.upload(b);
                d.add(db);
            }
            return new Workload2(host, d);
        }

        @Override
        public void close() {
            device.forEach(DeviceBatch::close);
        }
    }

    /**
     * One measured point: returns {host-batch Mops/s, device-resident Mops/s, hit rate of the
     * device-resident pass}. The device-resident pass shows the kernels' own speed, which is what the
     * cache changes; the host-batch pass adds the copies and the host's per-operation work.
     */
    private static double[] point(GpuEngine gpu, Workload2 w, BktCacheConfig cache) {
        gpu.features().configureBucketCache(cache);
        BatchResult r = new BatchResult(VALUE_SIZE, w.host().getFirst().size());
        for (DeviceBatch b : w.device()) {
            gpu.features().executeOnDevice(b);  // the cache's counters learn the workload
        }
        gpu.reloadBucketCache(true);
        long ops = 0;
        long t0 = System.nanoTime();
        for (Batch b : w.host()) {
            gpu.execute(b, r);
            ops += b.size();
        }
        double hostMops = ops / ((System.nanoTime() - t0) / 1e3);
        BktCacheStats before = gpu.features().bucketCacheStats();
        t0 = System.nanoTime();
        for (DeviceBatch b : w.device()) {
            gpu.features().executeOnDevice(b);
        }
        double deviceMops = ops / ((System.nanoTime() - t0) / 1e3);
        BktCacheStats after = gpu.features().bucketCacheStats();
        long hits = after.hits() - before.hits();
        long misses = after.misses() - before.misses();
        return new double[] {hostMops, deviceMops, hits + misses == 0 ? 0 : (double) hits / (hits + misses)};
    }

    /** One more device-resident pass with the pipeline's stages timed (GpuTargetsBench.stages). */
    private static String profiled(GpuEngine gpu, Workload2 w) {
        gpu.diagnostics().profileStages(true);
        long ops = 0;
        for (DeviceBatch b : w.device()) {
            gpu.features().executeOnDevice(b);
            ops += b.size();
        }
        String s = StageShares.stages(gpu, ops);
        gpu.diagnostics().profileStages(false);
        return s;
    }

    private static BktCacheConfig cache(double share, CachePolicy policy) {
        return cache(share, policy, null);
    }

    /** The cache at {@code share} with {@code policy}, counting one access in 2^{@code sampleShift} (null: the default). */
    private static BktCacheConfig cache(double share, CachePolicy policy, Integer sampleShift) {
        if (share == 0) {
            return BktCacheConfig.DISABLED;
        }
        BktCacheConfig.Builder b = BktCacheConfig.builder().share(share).policy(policy).reloadEveryOperations(0);
        return (sampleShift == null ? b : b.counterSampleShift(sampleShift)).build();
    }

    // ------------------------------------------------------------------ Figure 11

    private static void sweep(GpuBenchArgs a, Path dir, long keys, int ks, List<String> rows) throws Exception {
        int batch = (int) num(a.batch, 1 << 20);
        long ops = num(a.ops, 1L << 23);
        GpuBenchData.ZipfKeys zipf = new GpuBenchData.ZipfKeys(keys, real(a.theta, 0.99));
        try (GpuEngine gpu = loadedPool(dir, keys, ks)) {
            for (String wn : list(a.workloads, "A,B,C,F")) {
                Workload w = Workload.valueOf(wn);
                try (Workload2 batches = Workload2.of(batches(w, zipf, ks, batch, ops, 42), ks)) {
                    double[] off = point(gpu, batches, BktCacheConfig.DISABLED);
                    String base = String.format(Locale.ROOT, "| %d B | %s | 0%% | - | %.2f | %.2f | 1.00 | - |", ks, w,
                            off[0], off[1]);
                    System.out.println(base);
                    rows.add(base);
                    System.out.println("  cache off, device-resident, GPU time by stage: " + profiled(gpu, batches));
                    for (String sn : list(a.shares, "0.1,0.2,0.4")) {
                        double share = Double.parseDouble(sn);
                        if (share == 0) {
                            continue;
                        }
                        for (String pn : list(a.policies, "LFU,LRU,RANDOM")) {
                            double[] p = point(gpu, batches, cache(share, CachePolicy.valueOf(pn), a.sampleShift));
                            String row = String.format(Locale.ROOT, "| %d B | %s | %.0f%% | %s | %.2f | %.2f | %.2f | %.3f |",
                                    ks, w, share * 100, pn, p[0], p[1], p[1] / off[1], p[2]);
                            System.out.println(row);
                            rows.add(row);
                        }
                    }
                }
            }
        }
    }

    // ------------------------------------------------------------------ Figure 12(b)

    private static void theta(GpuBenchArgs a, Path dir, long keys) throws Exception {
        int ks = (int) num(a.keySize, 8);
        int batch = (int) num(a.batch, 1 << 20);
        long ops = num(a.ops, 1L << 23);
        double share = real(a.share, 0.2);
        List<String> rows = new ArrayList<>();
        try (GpuEngine gpu = loadedPool(dir, keys, ks)) {
            for (String tn : list(a.thetas, "0.5,0.6,0.7,0.8,0.9,0.99,1.1,1.2")) {
                double theta = Double.parseDouble(tn);
                try (Workload2 batches = Workload2.of(batches(Workload.C, new GpuBenchData.ZipfKeys(keys, theta), ks, batch, ops, 7), ks)) {
                    double off = point(gpu, batches, BktCacheConfig.DISABLED)[1];
                    double[] on = point(gpu, batches, cache(share, CachePolicy.LFU));
                    String row = String.format(Locale.ROOT, "| %s | %.2f | %.2f | %.2f | %.3f |", tn, off, on[1], on[1] / off,
                            on[2]);
                    System.out.println(row);
                    rows.add(row);
                }
            }
        }
        System.out.println();
        System.out.printf(Locale.ROOT, "| theta | cache off Mops/s | cache %.0f%% LFU Mops/s | ratio | hit rate |%n"
                + "(device-resident YCSB C)%n", share * 100);
        System.out.println("| --- | --- | --- | --- | --- |");
        rows.forEach(System.out::println);
    }

    // ------------------------------------------------------------------ hit path and miss path

    /**
     * Uniform GETs (no same-key groups to speak of): every read a miss with the cache off, and every
     * read a hit once the cache holds every bucket the batches touch (share 1.0).
     */
    private static void paths(GpuBenchArgs a, Path dir, long keys) throws Exception {
        int batch = (int) num(a.batch, 1 << 20);
        long ops = num(a.ops, 1L << 22);
        List<String> rows = new ArrayList<>();
        for (String ksn : list(a.keySizes, "8,32")) {
            int ks = Integer.parseInt(ksn);
            SplittableRandom r = new SplittableRandom(5);
            List<Batch> host = new ArrayList<>();
            for (long done = 0; done < ops; done += batch) {
                Batch b = Batch.create(ks, VALUE_SIZE, batch);
                for (int i = 0; i < batch; i++) {
                    b.add(OpKind.GET, GpuMicroBench.key(r.nextLong(keys), ks), null);
                }
                host.add(b);
            }
            try (GpuEngine gpu = loadedPool(dir, keys, ks); Workload2 w = Workload2.of(host, ks)) {
                double[] miss = point(gpu, w, BktCacheConfig.DISABLED);
                // Every access counted (no sampling), so every bucket the batches touch is loaded.
                double[] hit = point(gpu, w, cache(1.0, CachePolicy.LFU).toBuilder().counterSampleShift(0).build());
                String row = String.format(Locale.ROOT, "| %d B | %.2f | %.2f | %.3f | %.2f | %.2f |", ks, miss[1], hit[1],
                        hit[2], hit[1] / miss[1], hit[0] / miss[0]);
                System.out.println(row);
                rows.add(row);
            }
        }
        System.out.println();
        System.out.println("| key | miss path Mops/s (cache off) | hit path Mops/s (cache 100%) | hit rate | device-resident ratio "
                + "| host-batch ratio |");
        System.out.println("| --- | --- | --- | --- | --- | --- |");
        rows.forEach(System.out::println);
    }

    // ------------------------------------------------------------------ Figure 15

    private static void reload(GpuBenchArgs a, Path dir, long keys) throws Exception {
        int ks = (int) num(a.keySize, 8);
        int batch = (int) num(a.batch, 1 << 16);
        long millis = num(a.millis, 1500);
        long at = num(a.at, 400);
        long binMillis = num(a.bin, 20);
        double share = real(a.share, 0.2);
        GpuBenchData.ZipfKeys zipf = new GpuBenchData.ZipfKeys(keys, real(a.theta, 0.99));
        List<long[]> series = new ArrayList<>();
        try (GpuEngine gpu = loadedPool(dir, keys, ks);
             Workload2 w = Workload2.of(batches(Workload.C, zipf, ks, batch, 64L * batch, 11), ks)) {
            for (boolean concurrent : new boolean[] {true, false}) {
                gpu.features().configureBucketCache(BktCacheConfig.builder().share(share).reloadEveryOperations(0)
                        .concurrentFetch(concurrent).build());
                long[] bins = new long[(int) (millis / binMillis) + 1];
                long t0 = System.nanoTime();
                boolean loaded = false;
                long loadStart = 0;
                long loadEnd = -1;
                for (int i = 0; ; i++) {
                    long now = (System.nanoTime() - t0) / 1_000_000;
                    if (now >= millis) {
                        break;
                    }
                    if (!loaded && now >= at) {
                        loaded = true;
                        loadStart = now;
                        gpu.reloadBucketCache(!concurrent);  // without concurrent fetching, operations wait for it
                    }
                    if (loaded && loadEnd < 0 && !gpu.features().bucketCacheLoading()) {
                        loadEnd = now;
                    }
                    DeviceBatch b = w.device().get(i % w.device().size());
                    gpu.features().executeOnDevice(b);
                    long done = (System.nanoTime() - t0) / 1_000_000;
                    if (done < millis) {
                        bins[(int) (done / binMillis)] += (int) b.size();
                    }
                }
                BktCacheStats s = gpu.features().bucketCacheStats();
                System.out.printf(Locale.ROOT, "# %s fetching: load requested at %d ms, seen done at %d ms; load time %.1f ms "
                                + "(GPU events); %s%n", concurrent ? "concurrent" : "stop-the-world", loadStart, loadEnd,
                        s.lastReloadNanos() / 1e6, s);
                series.add(bins);
            }
        }
        System.out.println();
        System.out.println("| time (ms) | concurrent fetching Mops/s | stop-the-world Mops/s |");
        System.out.println("| --- | --- | --- |");
        for (int i = 0; i < series.getFirst().length - 1; i++) {
            System.out.printf(Locale.ROOT, "| %d | %.2f | %.2f |%n", i * binMillis,
                    series.get(0)[i] / (binMillis * 1e3), series.get(1)[i] / (binMillis * 1e3));
        }
    }
}
