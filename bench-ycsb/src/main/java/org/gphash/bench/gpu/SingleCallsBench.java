package org.gphash.bench.gpu;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.CyclicBarrier;

import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.Coalescing;
import org.gphash.GPHashIndex;
import org.gphash.bench.KeyDistribution;
import org.gphash.cuda.GpuDiagnostics;
import org.gphash.cuda.GpuEngineFeatures;

/**
 * Single calls from many threads, GPU backend against CPU backend on one pool in one run, without
 * YCSB's client in between (issue 57: where a single call on the GPU backend spends the time the CPU
 * backend does not). Each thread runs gets and updates of zipfian keys for a fixed time through the
 * byte-array API, as YCSB's binding does, and times one call in 16; the GPU backend's host counters
 * (reads, writes, lends of the pool, refreshed buckets) follow its row.
 *
 * <pre>
 * ./gphash run org.gphash.bench.gpu.SingleCallsBench [--keys 1048576] [--threads 16] [--seconds 3]
 *     [--reads 0.5] [--backends gpu,cpu] [--pool /dev/shm/singles.pool]
 * </pre>
 */
public final class SingleCallsBench {

    private static final int KEY = 8;
    private static final int VALUE = 128;
    private static final int SAMPLE_EVERY = 16;

    private SingleCallsBench() {
    }

    public static void main(String[] args) throws Exception {
        long keys = 1 << 20;
        int threads = 16;
        int seconds = 3;
        double reads = 0.5;
        String backends = "gpu,cpu";
        Path pool = Path.of("/dev/shm/gphash-singles.pool");
        for (int i = 0; i + 1 < args.length; i += 2) {
            String v = args[i + 1];
            switch (args[i]) {
                case "--keys" -> keys = Long.parseLong(v);
                case "--threads" -> threads = Integer.parseInt(v);
                case "--seconds" -> seconds = Integer.parseInt(v);
                case "--reads" -> reads = Double.parseDouble(v);
                case "--backends" -> backends = v;
                case "--pool" -> pool = Path.of(v);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        Files.deleteIfExists(pool);
        load(pool, keys);
        System.out.printf(Locale.ROOT, "| backend | threads | reads | ops/s | get p50 / p99 (ns) | update p50 / p99 (ns) |%n");
        System.out.printf(Locale.ROOT, "| --- | ---: | ---: | ---: | --- | --- |%n");
        for (String b : backends.split(",")) {
            Backend backend = Backend.valueOf(b.trim().toUpperCase(Locale.ROOT));
            try (GPHashIndex index = GPHashIndex.builder(pool).backend(backend).coalescing(Coalescing.OFF).open()) {
                run(index, backend, keys, threads, seconds, reads);
            }
        }
        Files.deleteIfExists(pool);
    }

    /** Creates the pool with {@code keys} keys 0..keys-1, on the CPU engine, in batches. */
    private static void load(Path pool, long keys) {
        try (GPHashIndex index = GPHashIndex.builder(pool).backend(Backend.CPU).keySize(KEY).valueSize(VALUE)
                .initialCapacity(keys).create()) {
            Batch batch = index.newBatch(1 << 16);
            byte[] value = new byte[VALUE];
            for (long k = 0; k < keys; k++) {
                batch.put(key(k), value);
                if (batch.size() == 1 << 16 || k == keys - 1) {
                    index.execute(batch);
                    batch.clear();
                }
            }
        }
    }

    private static byte[] key(long k) {
        byte[] b = new byte[KEY];
        for (int i = 0; i < KEY; i++) {
            b[i] = (byte) (k >>> (8 * i));
        }
        return b;
    }

    private static void run(GPHashIndex index, Backend backend, long keys, int threads, int seconds, double reads)
            throws Exception {
        long[][] getNanos = new long[threads][];
        long[][] updateNanos = new long[threads][];
        long[] ops = new long[threads];
        CyclicBarrier start = new CyclicBarrier(threads + 1);
        long[] window = new long[2];
        Thread[] workers = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            int id = t;
            workers[t] = new Thread(() -> {
                SplittableRandom random = new SplittableRandom(id * 7919L + 1);
                KeyDistribution zipf = KeyDistribution.parse("zipfian", keys, 0.99);
                long[] g = new long[1 << 20];
                long[] u = new long[1 << 20];
                int ng = 0;
                int nu = 0;
                byte[] value = new byte[VALUE];
                long n = 0;
                try {
                    start.await();
                    long end = System.nanoTime() + seconds * 1_000_000_000L;
                    while ((n & 255) != 0 || System.nanoTime() < end) {
                        byte[] k = key(zipf.next(random, keys));
                        boolean get = random.nextDouble() < reads;
                        boolean timed = (n % SAMPLE_EVERY) == 0;
                        long t0 = timed ? System.nanoTime() : 0;
                        if (get) {
                            index.get(k);
                        } else {
                            value[0] = (byte) n;
                            index.update(k, value);
                        }
                        if (timed) {
                            long d = System.nanoTime() - t0;
                            if (get && ng < g.length) {
                                g[ng++] = d;
                            } else if (!get && nu < u.length) {
                                u[nu++] = d;
                            }
                        }
                        n++;
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
                ops[id] = n;
                getNanos[id] = Arrays.copyOf(g, ng);
                updateNanos[id] = Arrays.copyOf(u, nu);
            }, "singles-" + t);
            workers[t].start();
        }
        start.await();
        window[0] = System.nanoTime();
        for (Thread w : workers) {
            w.join();
        }
        window[1] = System.nanoTime();
        long total = Arrays.stream(ops).sum();
        System.out.printf(Locale.ROOT, "| %s | %d | %.2f | %,.0f | %s | %s |%n", backend, threads, reads,
                total * 1e9 / (window[1] - window[0]), percentiles(getNanos), percentiles(updateNanos));
        index.gpu().ifPresent(g -> {
            if (g instanceof GpuEngineFeatures engine) {
                GpuDiagnostics d = engine.diagnostics();
                System.out.printf(Locale.ROOT, "  gpu backend: host reads %d, host writes %d, host batches %d, lends %d, "
                        + "buckets refreshed %d%n", d.hostReads(), d.hostWrites(), d.hostBatches(), d.hostLends(),
                        d.refreshedBuckets());
            }
        });
    }

    private static String percentiles(long[][] perThread) {
        long[] all = Arrays.stream(perThread).flatMapToLong(Arrays::stream).sorted().toArray();
        if (all.length == 0) {
            return "-";
        }
        return all[all.length / 2] + " / " + all[(int) (all.length * 0.99)];
    }
}
