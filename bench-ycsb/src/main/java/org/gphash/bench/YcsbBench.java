package org.gphash.bench;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

import org.gphash.BackendUnavailableException;
import org.gphash.cli.Cli;
import org.gphash.cli.PoolDirectory;
import org.gphash.cli.Progress;
import org.gphash.cli.Report;

/**
 * {@code ./gphash bench ycsb}: the YCSB micro and macro benchmarks on the GPHash engine and its
 * baselines. For each batch size, each system in turn gets a fresh store in a fresh directory, is
 * loaded (the measured LOAD workload) and runs the chosen workloads in order; the operation
 * streams come from one seed, so every system executes the identical operations. Then one table
 * per batch size, the JSON file and the plots.
 *
 * <p>Exit status: 0 done, 1 a system returned a wrong result or failed, 2 bad options, 3 the engine
 * under test cannot run here (e.g. {@code --backend gpu} without a GPU).
 */
public final class YcsbBench {

    private final BenchOptions options;
    private final PrintStream out;
    private final PrintStream err;

    YcsbBench(BenchOptions options, PrintStream out, PrintStream err) {
        this.options = options;
        this.out = out;
        this.err = err;
    }

    public static void main(String[] args) {
        System.setProperty("java.awt.headless", "true");
        BenchOptions options;
        try {
            options = BenchOptions.parse(args);
        } catch (Cli.UsageException e) {
            System.err.println("gphash bench ycsb: " + e.getMessage());
            System.err.println("run './gphash bench ycsb --help' for the options");
            System.exit(2);
            return;
        }
        if (options.help()) {
            System.out.print(BenchOptions.usage(args));
            return;
        }
        int status;
        try {
            status = new YcsbBench(options, System.out, System.err).run();
        } catch (Exception | Error e) {
            System.out.flush();
            System.err.println("gphash bench ycsb: FAILED: " + e);
            e.printStackTrace(System.err);
            status = 1;
        }
        System.exit(status);
    }

    /** Runs everything, prints the tables, writes JSON and plots; returns the exit status. */
    int run() throws Exception {
        List<String> systems = new ArrayList<>(Systems.systems(options.backend(), options.baselines()));
        String cluster = System.getProperty(ClusterStore.MANIFEST);
        if (cluster != null) {
            systems.set(0, ClusterStore.NAME);  // --cluster: the running cluster is the system under test
        }
        printHeader(systems);
        List<Measurement> all = new ArrayList<>();
        boolean wrong = false;
        try (Progress progress = Progress.on(err, options.progress())) {
            warmUp(systems);
            for (int batchSize : options.batchSizes()) {
                List<Measurement> rows = new ArrayList<>();
                for (String system : systems) {
                    try {
                        rows.addAll(runSystem(system, batchSize, progress));
                    } catch (BackendUnavailableException e) {
                        progress.clearLine();
                        err.println("gphash bench ycsb: " + system + " cannot run on this machine: " + e.getMessage());
                        if (system.equals(systems.get(0))) {
                            err.println("  (--backend gpu needs the cuda module, a CUDA driver and a GPU; "
                                    + "use --backend cpu here)");
                            return 3;
                        }
                    }
                }
                progress.clearLine();
                ResultTable.print(out, "batch size " + batchSize + ", " + options.threads() + " thread"
                        + (options.threads() == 1 ? "" : "s"), rows);
                all.addAll(rows);
            }
        }
        for (Measurement m : all) {
            if (m.unexpected() > 0) {
                wrong = true;
                out.println("ERROR: " + m.system() + " " + m.workload() + ": " + m.unexpected()
                        + " operations returned a wrong result");
            }
        }
        ResultTable.printRatios(out, all, systems.get(0));
        if (options.json() != null) {
            JsonReport.write(options.json(), options, all);
            out.println("json: " + options.json());
        }
        if (options.plotDir() != null) {
            for (var p : Plots.write(options.plotDir(), all, options.batchSizes().size() > 1)) {
                out.println("plot: " + p);
            }
        }
        return wrong ? 1 : 0;
    }

    private void printHeader(List<String> systems) {
        out.println("gphash bench ycsb: " + Report.count(options.keys(), "key") + " loaded, "
                + options.keySize() + "-byte keys, " + (options.valueLengths() == ValueLengths.FIXED
                        ? options.valueSize() + "-byte values; " : "values of 16 to " + options.valueSize() + " bytes (mixed); ")
                + Report.count(options.microOps()) + " ops per micro and " + Report.count(options.macroOps())
                + " per macro workload; " + options.distribution()
                + (options.distribution().equals("uniform") ? "" : " theta " + options.theta())
                + "; seed " + options.seed());
        out.println("workloads: " + options.workloads().stream().map(Workload::label).toList()
                + " (LOAD runs first and is measured); systems: " + systems
                + "; machine: " + Runtime.getRuntime().availableProcessors() + " CPUs, JDK "
                + Runtime.version().feature());
        out.println("results: " + StreamRunner.VERIFICATION);
    }

    /** Batches per client thread of each workload the warm-up runs at least ({@link #warmUp}). */
    static final int WARM_UP_BATCHES_PER_THREAD = 2;

    /** One system at one batch size: fresh store, LOAD, then the workloads. */
    private List<Measurement> runSystem(String system, int batchSize, Progress progress) throws Exception {
        long estimate = PoolDirectory.estimatePoolBytes(options.maxItems(), options.keySize(), options.expectedValueBytes());
        List<Measurement> rows = new ArrayList<>();
        try (PoolDirectory dir = PoolDirectory.create(options.dir(), estimate, false)) {
            StoreConfig config = new StoreConfig(dir.path(), options.keySize(), options.valueSize(),
                    options.maxItems(), options.seed(), options.valueLengths());
            try (StoreUnderTest store = Systems.open(system, config)) {
                progress.clearLine();
                err.println("  " + system + ": " + store.description() + " [" + dir.fileSystem() + "]");
                rows.addAll(runWorkloads(store, batchSize, options.keys(), 1, progress));
            }
        }
        return rows;
    }

    /**
     * LOAD then the workloads on {@code store}, with {@code keys} keys and every workload's
     * operations divided by {@code divisor} (the warm-up runs a small copy of the run).
     */
    private List<Measurement> runWorkloads(StoreUnderTest store, int batchSize, long keys, long divisor,
                                           Progress progress) throws Exception {
        List<Measurement> rows = new ArrayList<>();
        StreamGenerator generator = new StreamGenerator(keys, options.distribution(), options.theta(),
                options.seed(), 2L * options.threads() * batchSize);
        StreamRunner runner = new StreamRunner(options.threads(), batchSize, progress, options.valueLengths());
        rows.add(runner.run(store, generator.next(Workload.LOAD, keys), options.keySize(), options.valueSize()));
        for (Workload w : options.workloads()) {
            if (w != Workload.LOAD) {
                OpStream stream = generator.next(w, Math.max(1, options.ops(w) / divisor));
                rows.add(runner.run(store, stream, options.keySize(), options.valueSize()));
            }
        }
        return rows;
    }

    /**
     * Runs every system once on a small copy of the run, unmeasured, so that the JIT has compiled
     * the shared code (stream filling, checking) and each system's own before anything is timed:
     * otherwise the first system measured pays for warming up what the later ones reuse. The copy
     * has at least {@link #WARM_UP_BATCHES_PER_THREAD} batches per thread of every workload (the
     * whole run where that is all of it): with 16 threads and batches of 2^18, a copy of 100k keys
     * gave no thread a whole batch, and the measured phases then ran code still being compiled, at a
     * fraction of their speed.
     */
    private void warmUp(List<String> systems) throws Exception {
        if (options.warmupKeys() == 0) {
            return;
        }
        int batchSize = options.batchSizes().get(0);
        long perThread = (long) WARM_UP_BATCHES_PER_THREAD * options.threads() * batchSize;
        long keys = Math.min(options.keys(), Math.max(options.warmupKeys(), perThread));
        long divisor = Math.max(1, options.keys() / keys);
        // One labelled line, not the progress bar: a bar that ran and restarted for an unmeasured copy
        // looked like the measured run starting over (issue 55).
        if (options.progress()) {
            err.println("gphash bench ycsb: warming up each system on a copy of " + keys + " keys (not measured) ...");
        }
        for (String system : systems) {
            try (PoolDirectory dir = PoolDirectory.create(options.dir(), PoolDirectory.estimatePoolBytes(keys * 4, options.keySize(),
                    options.expectedValueBytes()), false);
                 StoreUnderTest store = Systems.open(system, new StoreConfig(dir.path(), options.keySize(),
                         options.valueSize(), keys * 2, options.seed(), options.valueLengths()))) {
                runWorkloads(store, batchSize, keys, divisor, Progress.NONE);
            } catch (BackendUnavailableException e) {
                // Reported by the measured run.
            }
        }
    }
}
