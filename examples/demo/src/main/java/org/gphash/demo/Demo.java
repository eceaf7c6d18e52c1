package org.gphash.demo;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Locale;

import org.gphash.Backend;
import org.gphash.BackendUnavailableException;
import org.gphash.GPHashIndex;
import org.gphash.IndexStats;
import org.gphash.RecoveryReport;
import org.gphash.cli.Cli;
import org.gphash.cli.PhaseTally;
import org.gphash.cli.PoolDirectory;
import org.gphash.cli.Report;
import org.gphash.cli.Workers;
import org.gphash.cli.ZipfianGenerator;

/**
 * The gphash demo ({@code ./gphash demo}): a short, self-checking tour of the engine.
 *
 * <ol>
 *   <li>creates a pool in a fresh directory (tmpfs when possible), deliberately small so that it
 *       resizes while loading;</li>
 *   <li>loads {@code --keys} keys with several threads through the batch API;</li>
 *   <li>runs a YCSB-A-like mix (zipfian reads and updates, optionally inserts) and verifies every
 *       read against the key embedded in the value;</li>
 *   <li>closes the pool, reopens it (recovery runs on every open), checks the item count and reads
 *       every key back.</li>
 * </ol>
 *
 * <p>The CPU engine runs first; then, where a GPU and the kernels are present (and the directory is
 * tmpfs), the GPU engine runs the same load and mix on a pool of its own, checked the same way, and
 * the report compares the two; elsewhere one line says why the GPU engine is not shown.
 *
 * Prints a short report; exits 0 when everything checked out, 1 on any verification failure or
 * engine error, 2 on a bad command line.
 */
public final class Demo {

    static final int LEVELS = 2;
    static final int HASHES = 2;
    static final int SLOTS_PER_BUCKET = 8;
    /** Label column width of the report. */
    private static final String INDENT = " ".repeat(13);

    private final DemoOptions options;
    private final PrintStream out;
    private boolean failed;

    Demo(DemoOptions options, PrintStream out) {
        this.options = options;
        this.out = out;
    }

    public static void main(String[] args) {
        DemoOptions options;
        try {
            options = DemoOptions.parse(args);
        } catch (Cli.UsageException e) {
            System.err.println("gphash demo: " + e.getMessage());
            System.err.println("run './gphash demo --help' for the options");
            System.exit(2);
            return;
        }
        if (options.help.requested()) {
            System.out.print(DemoOptions.usage(args));
            return;
        }
        int status;
        try {
            status = new Demo(options, System.out).run();
        } catch (Exception | Error e) {
            System.out.flush();
            System.err.println("gphash demo: FAILED: " + e);
            e.printStackTrace(System.err);
            status = 1;
        }
        System.exit(status);
    }

    /** Runs every phase on each engine and prints the report; returns the exit status. */
    int run() throws Exception {
        long expectedInserts = Math.round(options.ops * options.insertProportion);
        long estimate = PoolDirectory.estimatePoolBytes(options.keys + expectedInserts, DemoOptions.KEY_SIZE, DemoOptions.VALUE_SIZE);
        try (PoolDirectory dir = PoolDirectory.create(options.dir, estimate, options.keep)) {
            printHeader(dir);
            if (!dir.isInMemory() && options.reduceDefaultsForSlowStorage()) {
                line("", "on disk every write waits for an msync: defaults lowered to " + Report.count(options.keys, "key")
                        + " and " + Report.count(options.ops, "op") + " (--keys/--ops override)");
            }
            long[] cpu = runEngine(Backend.CPU, dir);
            // The GPU engine beside it, on the same load and mix, where it can run (issue 55); else one line why not.
            String noGpu = options.cpuOnly ? "--cpu-only" : !dir.isInMemory()
                    ? "GPU pools live on tmpfs, and this directory is on " + dir.fileSystem() : null;
            long[] gpu = null;
            if (noGpu == null) {
                try {
                    gpu = runEngine(Backend.GPU, dir);
                } catch (BackendUnavailableException e) {
                    String why = e.getMessage();
                    int jdk = why.indexOf(": java.");  // the loader's own exception adds nothing a reader can act on
                    noGpu = jdk > 0 ? why.substring(0, jdk) : why;
                }
            }
            out.println();
            if (gpu != null) {
                line("GPU / CPU", String.format("load %.2fx, run %.2fx (the same operations; figures above)",
                        (double) cpu[0] / gpu[0], (double) cpu[1] / gpu[1]));
            } else {
                line("GPU engine", "not shown: " + noGpu);
            }
            if (failed) {
                line("result", "FAILED (see above)");
            } else {
                line("result", "OK: every read verified, size and contents survived close and reopen"
                        + (gpu != null ? ", on both engines" : ""));
            }
            if (options.keep) {
                line("kept", dir.path().toString());
            }
        }
        return failed ? 1 : 0;
    }

    /**
     * Loads, runs the mix, closes, reopens and reads back on {@code backend}; returns the load's and
     * the run's nanoseconds.
     *
     * @throws BackendUnavailableException where the backend cannot run (before anything is printed)
     */
    private long[] runEngine(Backend backend, PoolDirectory dir) throws Exception {
        Path pool = dir.path().resolve("demo-" + backend.name().toLowerCase(Locale.ROOT) + ".pool");
        long expectedSize;
        long[] nanos = new long[2];
        DemoWorkload workload;
        // try-with-resources: a failure while closing is added to, not swapped for, a failure inside.
        try (GPHashIndex index = GPHashIndex.builder(pool).backend(backend)
                .keySize(DemoOptions.KEY_SIZE).valueSize(DemoOptions.VALUE_SIZE)
                .levels(LEVELS).hashes(HASHES).slotsPerBucket(SLOTS_PER_BUCKET)
                .initialCapacity(options.initialCapacity)
                .jdkPersistence(options.msync)
                .create()) {
            out.println();
            out.println(backend == Backend.CPU ? "CPU engine" : "GPU engine");
            line("pool", pool.getFileName().toString());
            line("persistence", index.stats().persistenceMode().description());
            line("geometry", LEVELS + " levels x " + HASHES + " hashes x " + SLOTS_PER_BUCKET + " slots/bucket, "
                    + index.keySize() + "-byte keys, " + index.valueSize() + "-byte values, initial capacity "
                    + Report.count(options.initialCapacity));
            workload = new DemoWorkload(index, options);
            nanos[0] = load(index, workload);
            nanos[1] = runMix(index, workload);
            expectedSize = workload.freshKeyEnd();
            printFinalStats(index.stats(), expectedSize);
        }
        reopen(pool, backend, workload, expectedSize);
        return nanos;
    }

    private void printHeader(PoolDirectory dir) {
        out.println("gphash demo: " + mixName() + ", " + options.threads + " thread"
                + (options.threads == 1 ? "" : "s") + ", batches of " + options.batch);
        line("directory", dir.path() + "  [" + dir.fileSystem() + (dir.isInMemory() ? ", in memory" : "") + "]");
        if (dir.note() != null) {
            line("", dir.note());
        }
    }

    private String mixName() {
        StringBuilder mix = new StringBuilder();
        appendShare(mix, options.readProportion, "read");
        appendShare(mix, options.updateProportion, "update");
        appendShare(mix, options.insertProportion, "insert");
        boolean ycsbA = options.readProportion == 0.5 && options.updateProportion == 0.5;
        return (ycsbA ? "YCSB-A-like " : "") + "workload (" + mix + ")";
    }

    private static void appendShare(StringBuilder mix, double share, String kind) {
        if (share > 0) {
            mix.append(mix.isEmpty() ? "" : " / ").append(Report.percent(share)).append(' ').append(kind);
        }
    }

    private long load(GPHashIndex index, DemoWorkload workload) throws Exception {
        IndexStats before = index.stats();
        Workers.Timed t = Workers.run("load", options.threads, workload::load);
        PhaseTally tally = t.tally();
        phaseLine("load", tally.inserts, "insert", t.nanos(), growth(before, index.stats()));
        if (tally.insertFailures > 0) {
            fail(Report.count(tally.insertFailures) + " inserts of new keys did not report INSERTED");
        }
        return t.nanos();
    }

    private long runMix(GPHashIndex index, DemoWorkload workload) throws Exception {
        IndexStats before = index.stats();
        Workers.Timed t = Workers.run("run", options.threads, workload::run);
        PhaseTally tally = t.tally();
        phaseLine("run", tally.operations(), "op", t.nanos(), growth(before, index.stats()));
        ZipfianGenerator zipf = workload.zipfian();
        // Batch latency is what a client of the batch API waits for; a resize or heap growth
        // (operations drained) shows up in the p99.
        line("", "zipfian theta " + zipf.theta() + " (hottest key "
                + Report.percent(Math.round(zipf.hottestProbability() * 1000) / 1000.0) + " of picks); "
                + "per batch: mean " + Report.millis(tally.meanBatchNanos()) + ", p99 "
                + Report.millis(tally.batchQuantileNanos(0.99)) + " (" + tally.batches() + " batches)");
        line("", "reads " + Report.count(tally.reads) + " verified: " + tally.mismatches + " mismatched, "
                + tally.missing + " missing; updates " + Report.count(tally.updates) + ", inserts "
                + Report.count(tally.inserts) + (tally.insertFailures > 0 ? " (" + tally.insertFailures + " failed)" : ""));
        if (tally.failures() > 0) {
            fail(Report.count(tally.failures()) + " operations of the run phase returned a wrong result");
        }
        return t.nanos();
    }

    /** One phase in fixed columns: what, how long, how fast, then free text. */
    private void phaseLine(String label, long count, String noun, long nanos, String tail) {
        line(label, String.format("%-20s %8s  %11s   %s", Report.count(count, noun), Report.seconds(nanos),
                Report.rate(count, nanos), tail));
    }

    private static String growth(IndexStats before, IndexStats after) {
        return "resizes " + (after.resizes() - before.resizes()) + ", heap growths "
                + (after.heapGrowths() - before.heapGrowths());
    }

    private void printFinalStats(IndexStats s, long expectedSize) {
        out.println();
        line("final", String.format("size %s, capacity %s, load factor %.3f, levels %d (top 2^%d buckets)",
                Report.count(s.size()), Report.count(s.capacity()), s.loadFactor(), s.levels(), s.topLevelLog2()));
        line("", "resizes " + s.resizes() + ", heap growths " + s.heapGrowths() + ", file " + Report.bytes(s.fileBytes())
                + ", value blocks " + Report.count(s.valueBlocks()) + " (" + Report.count(s.valueBlocksFree()) + " free, "
                + Report.count(s.pendingReclamation()) + " awaiting reclamation)");
        if (s.size() != expectedSize) {
            fail("size is " + Report.count(s.size()) + ", expected " + Report.count(expectedSize));
        }
    }

    private void reopen(Path pool, Backend backend, DemoWorkload closedWorkload, long expectedSize) throws Exception {
        long t0 = System.nanoTime();
        try (GPHashIndex index = GPHashIndex.builder(pool).backend(backend).jdkPersistence(options.msync).open()) {
            long openNanos = System.nanoTime() - t0;
            IndexStats s = index.stats();
            RecoveryReport r = index.lastRecovery();
            line("reopen", Report.seconds(openNanos) + " (recovery " + r.duration().toMillis() + " ms), size "
                    + Report.count(s.size()) + (s.size() == expectedSize ? " as expected" : ", EXPECTED " + Report.count(expectedSize)));
            for (String l : Report.wrap(r.toString(), 100 - INDENT.length(), "  ")) {
                line("", l);
            }
            if (s.size() != expectedSize || r.items() != expectedSize) {
                fail("after reopening, size " + s.size() + " and recovered items " + r.items() + " should both be "
                        + expectedSize);
            }
            if (!r.previousShutdownClean() || r.repairedAnything()) {
                fail("the pool was closed cleanly, so recovery should have found nothing to repair");
            }
            // The same workload object knows which keys exist; it reads them through the new index.
            DemoWorkload readBack = closedWorkload.reopenedOn(index);
            Workers.Timed t = Workers.run("read-back", options.threads, readBack::readBack);
            PhaseTally tally = t.tally();
            phaseLine("read-back", tally.reads, "key", t.nanos(),
                    tally.mismatches + " mismatched, " + tally.missing + " missing");
            if (tally.failures() > 0) {
                fail(Report.count(tally.failures()) + " keys did not read back correctly after reopening");
            }
        }
    }

    private void fail(String message) {
        failed = true;
        line("ERROR", message);
    }

    private void line(String label, String text) {
        out.println(label.isEmpty() ? INDENT + text : String.format("%-12s %s", label, text));
    }
}
