package org.gphash.bench.gpu;

import java.nio.file.Path;
import java.util.List;

import org.gphash.cli.Cli;
import org.gphash.cli.ToolVersion;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * The command line of the GPU benchmarks that run in parts or modes ({@link GpuTargetsBench},
 * {@link GpuCacheBench}), through picocli ({@link Cli}). Each part takes the options it uses, with
 * its own default where one is not given (hence the boxed fields, null when absent, and the
 * {@code num}, {@code real} and {@code list} helpers that supply the part's default).
 */
@Command(versionProvider = ToolVersion.class, name = "GpuTargetsBench|GpuCacheBench|ShardScalingBench", sortOptions = false, usageHelpAutoWidth = false,
        description = "Options of the GPU benchmarks; each part or mode uses some of them, with its own defaults.")
final class GpuBenchArgs {

    @Parameters(arity = "0..1", paramLabel = "MODE", description = "GpuCacheBench: sweep, theta, reload or paths")
    String mode;
    @Option(names = "--parts", split = ",", paramLabel = "LIST", description = "GpuTargetsBench: targets, theta, paper, small, load")
    List<String> parts;
    @Option(names = "--keys", paramLabel = "N", description = "keys loaded")
    Long keys;
    @Option(names = "--ops", paramLabel = "N", description = "operations per point")
    Long ops;
    @Option(names = "--threads", paramLabel = "T", description = "CPU-assisted threads")
    Long threads;
    @Option(names = "--rounds", paramLabel = "N", description = "batches per point (small batches)")
    Long rounds;
    @Option(names = "--batch", paramLabel = "N", description = "operations per batch")
    Long batch;
    @Option(names = "--key-size", paramLabel = "B", description = "bytes per key")
    Long keySize;
    @Option(names = "--key-sizes", split = ",", paramLabel = "LIST", description = "bytes per key, one run each")
    List<String> keySizes;
    @Option(names = "--theta", paramLabel = "X", description = "zipfian constant")
    Double theta;
    @Option(names = "--thetas", split = ",", paramLabel = "LIST", description = "zipfian constants, one point each")
    List<String> thetas;
    @Option(names = "--share", paramLabel = "S", description = "BktCache's share of the buckets")
    Double share;
    @Option(names = "--shares", split = ",", paramLabel = "LIST", description = "BktCache shares, one point each")
    List<String> shares;
    @Option(names = "--sample-shift", paramLabel = "N", description = "BktCache's counterSampleShift: one access in "
            + "2^N counted (default: the cache's own, 2)")
    Integer sampleShift;
    @Option(names = "--policies", split = ",", paramLabel = "LIST", description = "BktCache policies: LFU, LRU, RANDOM")
    List<String> policies;
    @Option(names = "--workloads", split = ",", paramLabel = "LIST", description = "YCSB workloads, e.g. A,B,C,F")
    List<String> workloads;
    @Option(names = "--millis", paramLabel = "MS", description = "reload: length of the run")
    Long millis;
    @Option(names = "--at", paramLabel = "MS", description = "reload: when the workload shifts")
    Long at;
    @Option(names = "--bin", paramLabel = "MS", description = "reload: width of a throughput bin")
    Long bin;
    @Option(names = "--gpus", split = ",", paramLabel = "LIST", description = "ShardScalingBench: GPU counts, one run each")
    List<String> gpus;
    @Option(names = "--value-size", paramLabel = "B", description = "targets: bytes per value (default 128)")
    Long valueSize;
    @Option(names = "--pool-format", paramLabel = "N", description = "targets: the pools' format, 2 or 3 (default: the builder's, 2)")
    Integer poolFormat;
    @Option(names = "--dir", paramLabel = "DIR", description = "where the pools go; default /dev/shm")
    Path dir = Path.of("/dev/shm");
    @Mixin
    Cli.Help help = new Cli.Help();

    /** Parses {@code args}; a bad command line or --help prints and exits (2 and 0). */
    static GpuBenchArgs parse(String[] args, String program) {
        GpuBenchArgs a;
        try {
            a = Cli.parse(new GpuBenchArgs(), args);
        } catch (Cli.UsageException e) {
            System.err.println(program + ": " + e.getMessage());
            System.exit(2);
            return null;
        }
        if (a.help.requested()) {
            System.out.print(Cli.usage(a));
            System.exit(0);
        }
        return a;
    }

    /** {@code value}, or the part's default. */
    static long num(Long value, long fallback) {
        return value != null ? value : fallback;
    }

    /** {@code value}, or the part's default. */
    static double real(Double value, double fallback) {
        return value != null ? value : fallback;
    }

    /** {@code value}, or the part's default (comma-separated). */
    static List<String> list(List<String> value, String fallback) {
        return value != null ? value : List.of(fallback.split(","));
    }
}
