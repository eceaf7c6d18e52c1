package org.gphash.bench;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.gphash.Backend;
import org.gphash.cli.Cli;
import org.gphash.cli.ToolVersion;
import org.gphash.cli.ValueCodec;
import org.gphash.cli.ZipfianGenerator;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The command line of {@code ./gphash bench ycsb}, parsed into an immutable value. Counts take the
 * demo's forms (underscores, k/m suffixes); see {@link #usage()}.
 *
 * @param keys          keys loaded before the workloads run
 * @param microOps      operations per micro workload
 * @param macroOps      operations per macro workload
 * @param workloads     which workloads, in run order (LOAD always runs first, measured)
 * @param keySize       bytes per key
 * @param valueSize     bytes per value
 * @param batchSizes    one batch size, or the sweep
 * @param threads       client threads
 * @param distribution  zipfian, uniform or latest
 * @param theta         zipfian constant
 * @param seed          seed of the operation streams
 * @param backend       the GPHash engine under test
 * @param baselines     the other systems of the run
 * @param json          where to write the JSON results, or null
 * @param plotDir       where to write PNG plots, or null
 * @param dir           parent of the store directories, or null for /dev/shm or java.io.tmpdir
 * @param warmupKeys    keys of the unmeasured warm-up run of every system (0: none)
 * @param progress      whether to show a progress bar
 */
public record BenchOptions(long keys, long microOps, long macroOps, List<Workload> workloads, int keySize,
                           int valueSize, ValueLengths valueLengths, List<Integer> batchSizes, int threads, String distribution, double theta,
                           long seed, Backend backend, List<String> baselines, Path json, Path plotDir, Path dir,
                           long warmupKeys, boolean progress, boolean help) {

    static final long DEFAULT_KEYS = 16L << 20;
    static final long DEFAULT_MICRO_OPS = 16L << 20;
    static final long DEFAULT_MACRO_OPS = 64L << 20;
    static final int DEFAULT_BATCH = 1 << 12;
    /**
     * Keys of the default warm-up, which runs each workload a {@code keys / warmupKeys}th of its length:
     * 4M, the whole run up to 4M keys. Warmed on 100k keys (some 100,000 operations a workload), the JIT
     * had not compiled the workloads' code when the measured run began, and threw away the code compiled
     * for the load's inserts in the middle of YCSB A at batches of 64, its 16 threads interpreted until it
     * was compiled again: A ran 8.0-16.4 M ops/s on the GPU backend in six runs of one build and
     * 12.3-17.0 on the CPU backend; warmed on the whole run, 17.6-18.1 and 18.1-18.7
     * (docs/lab/2026-12-02-host-route-timers-and-turns.md).
     */
    static final long DEFAULT_WARMUP_KEYS = 4L << 20;

    /** The command line ({@link Cli}: picocli). */
    @Command(versionProvider = ToolVersion.class, name = "./gphash bench ycsb", sortOptions = false, usageHelpAutoWidth = false,
            description = {"YCSB micro (pos-search, neg-search, update, insert, delete) and macro (LOAD, C, B, A, F, D) "
                    + "workloads of the GPHash paper, run on the GPHash engine and the chosen baselines with the "
                    + "identical operation stream, one system after another in this JVM."},
            footer = "counts accept underscores and k/m suffixes: 1_000_000, 500k, 2m")
    static final class Line {
        @Option(names = "--keys", paramLabel = "N", description = "keys loaded first; default 16m (2^24)")
        long keys = DEFAULT_KEYS;
        @Option(names = "--ops", paramLabel = "N", description = "operations per workload (sets both below)")
        Long ops;
        @Option(names = "--micro-ops", paramLabel = "N", description = "operations per micro workload; default 16m (2^24)")
        long microOps = DEFAULT_MICRO_OPS;
        @Option(names = "--macro-ops", paramLabel = "N", description = "operations per macro workload; default 64m (2^26)")
        long macroOps = DEFAULT_MACRO_OPS;
        @Option(names = "--workloads", paramLabel = "LIST", description = {"micro, macro, all, or labels: pos-search,"
                + "neg-search,update,insert,delete,load,a,b,c,d,f; default all"})
        String workloads = "all";
        @Option(names = "--key-size", paramLabel = "B", description = "8, 32 or any size; default 8")
        int keySize = 8;
        @Option(names = "--value-size", paramLabel = "B", description = "at least 16 (values embed their key); default 128 "
                + "(4096 with --value-lengths mixed: the longest value)")
        Integer valueSize;
        @Option(names = "--value-lengths", paramLabel = "fixed|mixed", description = {"fixed: every value of the value size "
                + "(default); mixed: each write's value 16 B to the value size, lognormal around 80 B (mean about 130 B), "
                + "on a format 3 pool (GPHash CPU backend, chm, lmdb)"})
        String valueLengths = "fixed";
        @Option(names = "--batch", paramLabel = "N", description = "operations per batch; default 4096")
        int batch = DEFAULT_BATCH;
        @Option(names = "--batch-sweep", paramLabel = "LIST", split = ",", description = {"batch sizes, e.g. 256,1024,"
                + "4096,16384: one full run per size, for throughput-latency curves (overrides --batch)"})
        List<Long> batchSweep;
        @Option(names = "--threads", paramLabel = "T", description = "client threads, one batch each at a time; default: "
                + "the CPU count")
        int threads = Runtime.getRuntime().availableProcessors();
        @Option(names = "--distribution", paramLabel = "D", description = "zipfian, uniform or latest; default zipfian")
        String distribution = "zipfian";
        @Option(names = "--theta", paramLabel = "X", description = "zipfian constant, 0 < X < 1; default 0.99")
        double theta = ZipfianGenerator.DEFAULT_THETA;
        @Option(names = "--seed", paramLabel = "S", description = "seed of the operation streams; default 42")
        long seed = 42;
        @Option(names = "--backend", paramLabel = "cpu|gpu", description = "the GPHash engine under test; default cpu")
        Backend backend = Backend.CPU;
        @Option(names = "--baselines", paramLabel = "LIST", description = {"cpu-assisted, chm, lmdb, gphash-per-op "
                + "(PER_OPERATION), gpu-device, all or none; default: chm,lmdb with --backend cpu, cpu-assisted with "
                + "--backend gpu"})
        String baselines;
        @Option(names = "--json", paramLabel = "FILE", description = "write every measurement as JSON")
        Path json;
        @Option(names = "--plot", paramLabel = "DIR", description = "write PNG plots (throughput-latency curves, "
                + "per-workload bars)")
        Path plot;
        @Option(names = "--dir", paramLabel = "DIR", description = "put store files under DIR (default /dev/shm, else "
                + "java.io.tmpdir)")
        Path dir;
        @Option(names = "--cluster", paramLabel = "MANIFEST", description = "the system under test is the running cluster "
                + "of MANIFEST (gphash node ...) instead of a pool of its own: it is EMPTIED before every workload")
        Path cluster;
        @Option(names = "--warmup", paramLabel = "N", description = {"keys of an unmeasured warm-up run of every system "
                + "first, at the first batch size, raised to two batches per thread of each workload (0: none); default 4m: the "
                + "whole run up to 4m keys, so that the JIT has compiled every workload's code before the measured run"})
        long warmup = DEFAULT_WARMUP_KEYS;
        @Option(names = "--no-progress", description = "no progress bar")
        boolean noProgress;
        @Mixin
        Cli.Help help = new Cli.Help();
    }

    static String usage(String... args) {
        return Cli.usage(new Line(), args);
    }

    static BenchOptions parse(String[] args) throws Cli.UsageException {
        Line l = Cli.parse(new Line(), args);
        Cli.range("--keys", l.keys, 1, Integer.MAX_VALUE);
        long micro = Cli.range(l.ops != null ? "--ops" : "--micro-ops", l.ops != null ? l.ops : l.microOps, 1,
                Integer.MAX_VALUE);
        long macro = Cli.range(l.ops != null ? "--ops" : "--macro-ops", l.ops != null ? l.ops : l.macroOps, 1,
                Integer.MAX_VALUE);
        Cli.range("--key-size", l.keySize, 1, 1024);
        ValueLengths lengths;
        try {
            lengths = ValueLengths.parse(l.valueLengths);
        } catch (IllegalArgumentException e) {
            throw new Cli.UsageException("--value-lengths: " + e.getMessage());
        }
        int valueSize = l.valueSize != null ? l.valueSize
                : lengths == ValueLengths.FIXED ? 128 : ValueLengths.MIXED_DEFAULT_VALUE_SIZE;
        Cli.range("--value-size", valueSize, ValueCodec.MIN_VALUE_SIZE, 1 << 20);
        List<Integer> batches = new ArrayList<>();
        if (l.batchSweep == null) {
            batches.add((int) Cli.range("--batch", l.batch, 1, Cli.MAX_BATCH));
        } else {
            for (long b : l.batchSweep) {
                batches.add((int) Cli.range("--batch-sweep", b, 1, Cli.MAX_BATCH));
            }
        }
        Cli.range("--threads", l.threads, 1, Cli.MAX_THREADS);
        Cli.theta("--theta", l.theta);
        Cli.range("--warmup", l.warmup, 0, Integer.MAX_VALUE);
        String distribution = l.distribution.strip().toLowerCase(Locale.ROOT);
        List<Workload> workloads;
        List<String> baselines;
        String at = "--workloads";
        try {
            workloads = Workload.parseList(l.workloads);
            at = "--distribution";
            KeyDistribution.parse(distribution, 1, 0.5);
            at = "--baselines";
            baselines = l.baselines == null
                    ? l.backend == Backend.GPU ? List.of("cpu-assisted") : List.of("chm", "lmdb")
                    : Systems.parseBaselines(l.baselines);
        } catch (IllegalArgumentException e) {
            throw new Cli.UsageException(at + ": " + e.getMessage());
        }
        if (l.cluster != null) {
            System.setProperty("gphash.bench.cluster", l.cluster.toString());  // read by ClusterStore
        }
        return new BenchOptions(l.keys, micro, macro, workloads, l.keySize, valueSize, lengths, List.copyOf(batches), l.threads,
                distribution, l.theta, l.seed, l.backend, baselines, l.json, l.plot, l.dir, l.warmup, !l.noProgress,
                l.help.requested());
    }

    /** Bytes a value takes on average, for sizing store files: the value size, or at most 256 where lengths are mixed. */
    int expectedValueBytes() {
        return valueLengths == ValueLengths.FIXED ? valueSize : Math.min(valueSize, 256);
    }

    /** Operations of one workload. */
    long ops(Workload w) {
        return w.group() == Workload.Group.MICRO ? microOps : macroOps;
    }

    /** The most items any store holds during the run (for pre-sizing and space checks). */
    long maxItems() {
        long items = keys;
        if (workloads.contains(Workload.INSERT)) {
            items += microOps;
        }
        if (workloads.contains(Workload.D)) {
            items += macroOps / 10;
        }
        return items;
    }
}
