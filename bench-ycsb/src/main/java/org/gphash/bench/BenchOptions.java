package org.gphash.bench;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.gphash.Backend;
import org.gphash.bktcache.ZipfianGenerator;

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
                           int valueSize, List<Integer> batchSizes, int threads, String distribution, double theta,
                           long seed, Backend backend, List<String> baselines, Path json, Path plotDir, Path dir,
                           long warmupKeys, boolean progress, boolean help) {

    static final long DEFAULT_KEYS = 16L << 20;
    static final long DEFAULT_MICRO_OPS = 16L << 20;
    static final long DEFAULT_MACRO_OPS = 64L << 20;
    static final int DEFAULT_BATCH = 1 << 12;
    static final long DEFAULT_WARMUP_KEYS = 100_000;

    static String usage() {
        return """
                usage: ./gphash bench ycsb [options]

                YCSB micro (pos-search, neg-search, update, insert, delete) and macro (LOAD, C, B, A,
                F, D) workloads of the GPHash paper, run on the GPHash engine and the chosen baselines
                with the identical operation stream, one system after another in this JVM.

                options:
                  --keys N              keys loaded first                         default 16m (2^24)
                  --ops N               operations per workload (sets both below)
                  --micro-ops N         operations per micro workload             default 16m (2^24)
                  --macro-ops N         operations per macro workload             default 64m (2^26)
                  --workloads LIST      micro, macro, all, or labels: pos-search,neg-search,update,
                                        insert,delete,load,a,b,c,d,f              default all
                  --key-size B          8, 32 or any size                         default 8
                  --value-size B        at least 16 (values embed their key)      default 128
                  --batch N             operations per batch                      default 4096
                  --batch-sweep LIST    batch sizes, e.g. 256,1024,4096,16384: one full run per size,
                                        for throughput-latency curves (overrides --batch)
                  --threads T           client threads, one batch each at a time  default: CPU count
                  --distribution D      zipfian, uniform or latest                default zipfian
                  --theta X             zipfian constant, 0 < X < 1               default 0.99
                  --seed S              seed of the operation streams             default 42
                  --backend cpu|gpu     the GPHash engine under test              default cpu
                  --baselines LIST      cpu-assisted, chm, lmdb, gphash-per-op    default: chm,lmdb with
                        (PER_OPERATION), all or none              --backend cpu, cpu-assisted with --backend gpu
                  --json FILE           write every measurement as JSON
                  --plot DIR            write PNG plots (throughput-latency curves, per-workload bars)
                  --dir DIR             put store files under DIR (default /dev/shm, else java.io.tmpdir)
                  --warmup N            keys of an unmeasured warm-up run of every system first,
                                        at the first batch size (0: none)       default 100k
                  --no-progress         no progress bar
                  -h, --help            show this message

                counts accept underscores and k/m suffixes: 1_000_000, 500k, 2m
                """;
    }

    static BenchOptions parse(String[] args) throws DemoOptions.UsageException {
        long keys = DEFAULT_KEYS;
        long microOps = DEFAULT_MICRO_OPS;
        long macroOps = DEFAULT_MACRO_OPS;
        List<Workload> workloads = Workload.parseList("all");
        int keySize = 8;
        int valueSize = 128;
        List<Integer> batches = List.of(DEFAULT_BATCH);
        int threads = Runtime.getRuntime().availableProcessors();
        String distribution = "zipfian";
        double theta = ZipfianGenerator.DEFAULT_THETA;
        long seed = 42;
        Backend backend = Backend.CPU;
        List<String> baselines = null;
        Path json = null;
        Path plot = null;
        Path dir = null;
        boolean progress = true;
        boolean help = false;
        long warmup = DEFAULT_WARMUP_KEYS;
        for (int i = 0; i < args.length; i++) {
            String name = args[i];
            String value = null;
            int eq = name.indexOf('=');
            if (name.startsWith("--") && eq > 0) {
                value = name.substring(eq + 1);
                name = name.substring(0, eq);
            }
            if (name.equals("-h") || name.equals("--help")) {
                help = true;
                continue;
            }
            if (name.equals("--no-progress")) {
                progress = false;
                continue;
            }
            if (!name.startsWith("--")) {
                throw new DemoOptions.UsageException("unexpected argument '" + name + "' (options start with --)");
            }
            if (value == null) {
                if (i + 1 >= args.length) {
                    throw new DemoOptions.UsageException(name + " needs a value");
                }
                value = args[++i];
            }
            try {
                switch (name) {
                    case "--keys" -> keys = DemoOptions.count(name, value, 1, Integer.MAX_VALUE);
                    case "--ops" -> microOps = macroOps = DemoOptions.count(name, value, 1, Integer.MAX_VALUE);
                    case "--micro-ops" -> microOps = DemoOptions.count(name, value, 1, Integer.MAX_VALUE);
                    case "--macro-ops" -> macroOps = DemoOptions.count(name, value, 1, Integer.MAX_VALUE);
                    case "--workloads" -> workloads = Workload.parseList(value);
                    case "--key-size" -> keySize = (int) DemoOptions.count(name, value, 1, 1024);
                    case "--value-size" -> valueSize = (int) DemoOptions.count(name, value, ValueCodec.MIN_VALUE_SIZE, 1 << 20);
                    case "--batch" -> batches = List.of((int) DemoOptions.count(name, value, 1, DemoOptions.MAX_BATCH));
                    case "--batch-sweep" -> {
                        List<Integer> list = new ArrayList<>();
                        for (String part : value.split(",")) {
                            list.add((int) DemoOptions.count(name, part, 1, DemoOptions.MAX_BATCH));
                        }
                        batches = List.copyOf(list);
                    }
                    case "--threads" -> threads = (int) DemoOptions.count(name, value, 1, DemoOptions.MAX_THREADS);
                    case "--distribution" -> {
                        distribution = value.strip().toLowerCase(Locale.ROOT);
                        KeyDistribution.parse(distribution, 1, 0.5);
                    }
                    case "--theta" -> {
                        theta = Double.parseDouble(value);
                        if (!(theta > 0 && theta < 1)) {
                            throw new DemoOptions.UsageException("--theta must be between 0 and 1 (exclusive), got " + value);
                        }
                    }
                    case "--seed" -> seed = Long.parseLong(value.strip());
                    case "--backend" -> backend = switch (value.strip().toLowerCase(Locale.ROOT)) {
                        case "cpu" -> Backend.CPU;
                        case "gpu" -> Backend.GPU;
                        default -> throw new DemoOptions.UsageException("--backend must be cpu or gpu, got " + value);
                    };
                    case "--baselines" -> baselines = Systems.parseBaselines(value);
                    case "--json" -> json = Path.of(value);
                    case "--plot" -> plot = Path.of(value);
                    case "--dir" -> dir = Path.of(value);
                    case "--warmup" -> warmup = DemoOptions.count(name, value, 0, Integer.MAX_VALUE);
                    default -> throw new DemoOptions.UsageException("unknown option " + name);
                }
            } catch (IllegalArgumentException e) {
                throw new DemoOptions.UsageException(name + ": " + e.getMessage());
            }
        }
        if (baselines == null) {
            baselines = backend == Backend.GPU ? List.of("cpu-assisted") : List.of("chm", "lmdb");
        }
        return new BenchOptions(keys, microOps, macroOps, workloads, keySize, valueSize, batches, threads, distribution,
                theta, seed, backend, baselines, json, plot, dir, warmup, progress, help);
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
