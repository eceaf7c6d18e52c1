package org.gphash.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.GPHashIndex;
import org.gphash.RecoveryReport;
import org.gphash.cuda.GpuEngines;

/**
 * How long the CPU engine takes to open a pool (issue 13): after a clean close (the close record is
 * trusted, no scan), the same pool with {@code verifyOnOpen} (the full scan every open ran before the
 * close record: the baseline), and after a crash (the engine abandoned with no clean close).
 *
 * <pre>./gphash run org.gphash.bench.OpenTime [items,items...=1000000,16777216] [repeats=5] [dir=/dev/shm] [clean=cpu,gpu]</pre>
 *
 * With a fourth argument, only clean opens are timed, once per engine named (issue 27: the close
 * record is trusted and the table is checked region by region on first touch by the CPU engine, as
 * a whole at open by the GPU engine): one row per engine, median and first open, and the first read
 * of 1M keys after the open (where the CPU engine checks the regions it reaches) beside the second.
 *
 * Prints, per pool size, the median wall time of {@code open()} and of the recovery inside it, and
 * the first clean open of each size (the JVM's code colder, as for an application that opens once).
 * Values of 128 bytes, 8-byte keys; the pool lives in {@code dir} (page cache, so the figures are
 * the engine's work, not the disk's).
 */
public final class OpenTime {

    private static final int VALUE = 128;
    private static final int BATCH = 4096;

    private OpenTime() {
    }

    public static void main(String[] args) throws Exception {
        long[] sizes = Arrays.stream((args.length > 0 ? args[0] : "1000000,16777216").split(","))
                .mapToLong(Long::parseLong).toArray();
        int repeats = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        Path dir = Path.of(args.length > 2 ? args[2]
                : Files.isDirectory(Path.of("/dev/shm")) ? "/dev/shm" : System.getProperty("java.io.tmpdir"));
        if (args.length > 3) {
            cleanOpens(sizes, repeats, dir, args[3].split(","));
            return;
        }
        StringBuilder table = new StringBuilder();
        table.append("| items | pool MiB | clean close (ms) | first open in the JVM (ms) | recovery inside | full scan, verifyOnOpen (ms) | after a crash (ms) | scan / clean |\n");
        table.append("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
        for (long items : sizes) {
            Path pool = built(dir, items);
            try {
                double[] clean = new double[repeats];
                double[] cleanRecovery = new double[repeats];
                double[] scan = new double[repeats];
                double[] crash = new double[repeats];
                for (int r = 0; r < repeats; r++) {
                    long s = System.nanoTime();
                    GPHashIndex a = GPHashIndex.builder(pool).open();
                    clean[r] = ms(s);
                    RecoveryReport report = a.lastRecovery();
                    check(report.fromCloseRecord(), "a clean close was not trusted: " + report);
                    check(report.items() == items, "items " + report.items());
                    cleanRecovery[r] = report.duration().toNanos() / 1e6;
                    a.close();

                    s = System.nanoTime();
                    GPHashIndex b = GPHashIndex.builder(pool).verifyOnOpen(true).open();
                    scan[r] = ms(s);
                    check(!b.lastRecovery().fromCloseRecord(), "verifyOnOpen did not scan");
                    b.engine().abandon();  // a crash: no clean close, no close record

                    s = System.nanoTime();
                    GPHashIndex c = GPHashIndex.builder(pool).open();
                    crash[r] = ms(s);
                    check(!c.lastRecovery().previousShutdownClean(), "the abandoned pool looked clean");
                    check(c.lastRecovery().items() == items, "items after the crash " + c.lastRecovery().items());
                    c.close();
                }
                double cleanMs = median(clean);
                double scanMs = median(scan);
                table.append(String.format(Locale.ROOT, "| %d | %d | %.1f | %.1f | %.1f | %.1f | %.1f | %.0fx |%n", items,
                        Files.size(pool) >> 20, cleanMs, clean[0], median(cleanRecovery), scanMs, median(crash), scanMs / cleanMs));
            } finally {
                Files.deleteIfExists(pool);
            }
        }
        System.out.printf(Locale.ROOT, "open time, %s, %d cores, median of %d, pool in %s%n", Runtime.version(),
                Runtime.getRuntime().availableProcessors(), repeats, dir);
        System.out.print(table);
    }

    /** Clean opens only, per engine: open, a first and a second read of up to 1M keys, close. */
    private static void cleanOpens(long[] sizes, int repeats, Path dir, String[] backends) throws Exception {
        StringBuilder table = new StringBuilder();
        table.append("| items | engine | clean open, median (ms) | first open in the JVM (ms) | recovery inside (ms) "
                + "| first read of 1M keys after open (ms) | second read (ms) | close (ms) |\n");
        table.append("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
        for (long items : sizes) {
            Path pool = built(dir, items);
            try {
                for (String name : backends) {
                    org.gphash.Backend backend = org.gphash.Backend.valueOf(name.trim().toUpperCase(Locale.ROOT));
                    double[] open = new double[repeats];
                    double[] recovery = new double[repeats];
                    double[] firstRead = new double[repeats];
                    double[] secondRead = new double[repeats];
                    double[] close = new double[repeats];
                    for (int r = 0; r < repeats; r++) {
                        long s = System.nanoTime();
                        GPHashIndex a = GPHashIndex.builder(pool).backend(backend).open();
                        open[r] = ms(s);
                        check(a.lastRecovery().fromCloseRecord(), "a clean close was not trusted: " + a.lastRecovery());
                        recovery[r] = a.lastRecovery().duration().toNanos() / 1e6;
                        firstRead[r] = readKeys(a, Math.min(items, 1 << 20));
                        secondRead[r] = readKeys(a, Math.min(items, 1 << 20));
                        s = System.nanoTime();
                        a.close();
                        close[r] = ms(s);
                    }
                    if (backend == org.gphash.Backend.GPU) {
                        gpuOpenStages(pool, items, repeats);
                    }
                    table.append(String.format(Locale.ROOT, "| %d | %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |%n", items,
                            backend.name().toLowerCase(Locale.ROOT), median(open), open[0], median(recovery),
                            median(firstRead), median(secondRead), median(close)));
                }
            } finally {
                Files.deleteIfExists(pool);
            }
        }
        System.out.printf(Locale.ROOT, "clean open time, %s, %d cores, median of %d, pool in %s%n", Runtime.version(),
                Runtime.getRuntime().availableProcessors(), repeats, dir);
        System.out.print(table);
    }

    /**
     * Where the GPU engine's open goes (issue 30): the same pool opened {@code repeats} more times with
     * coalescing off, so that the index's engine is the GPU engine itself, each open's stages printed.
     */
    private static void gpuOpenStages(Path pool, long items, int repeats) {
        for (int r = 0; r < repeats; r++) {
            try (GPHashIndex a = GPHashIndex.builder(pool).backend(org.gphash.Backend.GPU)
                    .coalescing(org.gphash.Coalescing.OFF).open()) {
                System.out.printf(Locale.ROOT, "gpu open stages, %d items: %s%n", items,
                        GpuEngines.gpuEngine(a.engine()).diagnostics().openTimes());
            }
        }
    }

    /** Gets keys spread over the whole key space, in batches; returns the milliseconds taken. */
    private static double readKeys(GPHashIndex index, long n) {
        long items = index.size();
        long stride = Math.max(1, items / n);
        Batch batch = index.newBatch(BATCH);
        BatchResult result = new BatchResult(VALUE, BATCH);
        long s = System.nanoTime();
        for (long i = 0; i < n; i++) {
            batch.get(i * stride % items);
            if (batch.size() == BATCH) {
                index.execute(batch, result);
                batch.clear();
            }
        }
        if (batch.size() > 0) {
            index.execute(batch, result);
            batch.clear();
        }
        return ms(s);
    }

    /** A pool of {@code items} items in {@code dir}, built and closed, the time it took printed. */
    private static Path built(Path dir, long items) {
        Path pool = dir.resolve("open-time-" + items + "-" + ProcessHandle.current().pid() + ".pool");
        long t0 = System.nanoTime();
        build(pool, items);
        System.out.printf(Locale.ROOT, "built %d items in %.1f s%n", items, (System.nanoTime() - t0) / 1e9);
        return pool;
    }

    private static void build(Path pool, long items) {
        try (GPHashIndex index = GPHashIndex.builder(pool).initialCapacity(items).valueSize(VALUE).create()) {
            Batch batch = index.newBatch(BATCH);
            BatchResult result = new BatchResult(VALUE, BATCH);
            byte[] value = new byte[VALUE];
            for (long k = 0; k < items; k++) {
                value[0] = (byte) k;
                batch.insert(k, value);
                if (batch.size() == BATCH) {
                    index.execute(batch, result);
                    batch.clear();
                }
            }
            if (batch.size() > 0) {
                index.execute(batch, result);
            }
        }
    }

    private static double ms(long startNanos) {
        return (System.nanoTime() - startNanos) / 1e6;
    }

    private static double median(double[] xs) {
        double[] s = xs.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }

    private static void check(boolean ok, String what) {
        if (!ok) {
            throw new IllegalStateException(what);
        }
    }
}
