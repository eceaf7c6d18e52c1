package org.gphash.demo;

import java.math.BigDecimal;
import java.math.MathContext;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

import org.gphash.cli.Cli;
import org.gphash.cli.ToolVersion;
import org.gphash.cli.ZipfianGenerator;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The demo's command line ({@code ./gphash demo --help}), through picocli ({@link Cli}): each
 * option is {@code --name VALUE} or {@code --name=VALUE}; counts accept underscores and a k/m
 * suffix ({@code 1_000_000}, {@code 500k}, {@code 2m}). A bad option is reported as a
 * {@link Cli.UsageException} whose message names the option and what was wrong.
 */
@Command(versionProvider = ToolVersion.class, name = "./gphash demo", sortOptions = false, usageHelpAutoWidth = false,
        description = {"Loads a persistent GPHash pool, runs a YCSB-like workload on it through the batch API with "
                + "several threads, verifies every read, then closes, reopens (recovery) and checks the pool. Exit "
                + "status: 0 ok, 1 verification or engine failure, 2 bad options."},
        footer = "counts accept underscores and k/m suffixes: 1_000_000, 500k, 2m")
final class DemoOptions {

    static final long DEFAULT_KEYS = 1_000_000;
    static final long DEFAULT_OPS = 2_000_000;
    static final int DEFAULT_BATCH = 4096;
    static final int KEY_SIZE = 8;
    static final int VALUE_SIZE = 128;

    /**
     * Defaults for a pool on a disk-backed file system, where every persist is a real msync
     * (docs/PERFORMANCE.md, "Durability modes on a disk"): the in-memory
     * defaults would take many minutes there.
     */
    static final long SLOW_STORAGE_KEYS = 10_000;
    static final long SLOW_STORAGE_OPS = 20_000;

    @Option(names = "--keys", paramLabel = "N", description = "keys loaded (8-byte keys, 128-byte values); default 1_000_000")
    private Long keysOption;
    @Option(names = "--ops", paramLabel = "M", description = "operations in the run phase; default 2_000_000")
    private Long opsOption;
    @Option(names = "--threads", paramLabel = "T", description = "worker threads, one batch each; default: the CPU count")
    int threads = Runtime.getRuntime().availableProcessors();
    @Option(names = "--batch", paramLabel = "B", description = "operations per batch; default 4096")
    int batch = DEFAULT_BATCH;
    @Option(names = "--initial-capacity", paramLabel = "C",
            description = "items the new pool holds before resizing; default keys / 8")
    private Long initialCapacityOption;
    @Option(names = "--read-proportion", paramLabel = "P", description = "share of reads (zipfian existing keys); default 0.5")
    private Double readOption;
    @Option(names = "--update-proportion", paramLabel = "P",
            description = "share of updates (zipfian existing keys); default 0.5")
    private Double updateOption;
    @Option(names = "--insert-proportion", paramLabel = "P",
            description = {"share of inserts (fresh keys); default 0", "(when any proportion is given, the others default "
                    + "to 0; they must add up to 1)"})
    private Double insertOption;
    @Option(names = "--theta", paramLabel = "X", description = "zipfian constant, 0 < X < 1; default 0.99")
    double theta = ZipfianGenerator.DEFAULT_THETA;
    @Option(names = "--seed", paramLabel = "S", description = "seed of the workload's random choices; default 42")
    long seed = 42;
    /** Parent of the fresh pool directory; null means /dev/shm if usable, else java.io.tmpdir. */
    @Option(names = "--dir", paramLabel = "DIR", description = {"create the pool directory under DIR instead of /dev/shm "
            + "(tmpfs) or java.io.tmpdir; on a disk-backed file system every write is an msync to disk, so the defaults "
            + "drop to 10k keys and 20k ops there"})
    Path dir;
    @Option(names = "--keep", description = "keep the pool directory at the end")
    boolean keep;
    @Option(names = "--cpu-only", description = "run the CPU engine only (by default the GPU engine runs the same "
            + "load and mix after it, where a GPU and the kernels are present)")
    boolean cpuOnly;
    @Option(names = "--msync", description = "persist with MemorySegment.force (msync) even on tmpfs, where the engine "
            + "otherwise skips it (a baseline)")
    boolean msync;
    @Mixin
    Cli.Help help = new Cli.Help();

    long keys = DEFAULT_KEYS;
    long ops = DEFAULT_OPS;
    /** Unless given: keys / 8, so that the load phase resizes a few times. */
    long initialCapacity;
    double readProportion = 0.5;
    double updateProportion = 0.5;
    double insertProportion = 0.0;

    static String usage(String... args) {
        return Cli.usage(new DemoOptions(), args);
    }

    static DemoOptions parse(String[] args) throws Cli.UsageException {
        DemoOptions o = Cli.parse(new DemoOptions(), args);
        o.check();
        return o;
    }

    /** Ranges, the proportions' sum, and the values derived from what was given. */
    private void check() throws Cli.UsageException {
        keys = keysOption == null ? DEFAULT_KEYS : Cli.range("--keys", keysOption, 1, Long.MAX_VALUE / 2);
        ops = opsOption == null ? DEFAULT_OPS : Cli.range("--ops", opsOption, 0, Long.MAX_VALUE / 2);
        Cli.range("--threads", threads, 1, Cli.MAX_THREADS);
        Cli.range("--batch", batch, 1, Cli.MAX_BATCH);
        if (initialCapacityOption != null) {
            Cli.range("--initial-capacity", initialCapacityOption, 1, Long.MAX_VALUE / 2);
        }
        Cli.theta("--theta", theta);
        if (dir != null && dir.toString().isBlank()) {
            throw new Cli.UsageException("--dir needs a directory");
        }
        if (dir != null && !Files.isDirectory(dir)) {
            // The demo makes only its own temporary directory, inside DIR; it creates no tree the user
            // did not ask for (issue 28: --dir /nonexistent/dir was created at the root and left behind).
            throw new Cli.UsageException("--dir " + dir + " is not an existing directory (create it first; the demo "
                    + "makes its pool directory inside it)");
        }
        if (readOption != null || updateOption != null || insertOption != null) {
            readProportion = readOption == null ? 0 : Cli.proportion("--read-proportion", readOption);
            updateProportion = updateOption == null ? 0 : Cli.proportion("--update-proportion", updateOption);
            insertProportion = insertOption == null ? 0 : Cli.proportion("--insert-proportion", insertOption);
            double sum = readProportion + updateProportion + insertProportion;
            if (Math.abs(sum - 1.0) > 1e-9) {
                throw new Cli.UsageException(String.format(Locale.ROOT,
                        "--read-proportion, --update-proportion and --insert-proportion must add up to 1; "
                                + "got %s + %s + %s = %s (an unset one counts as 0)",
                        trim(readProportion), trim(updateProportion), trim(insertProportion), trim(sum)));
            }
        }
        deriveInitialCapacity();
    }

    private void deriveInitialCapacity() {
        initialCapacity = initialCapacityOption != null ? initialCapacityOption : Math.max(1, keys / 8);
    }

    /**
     * Lowers the default key and operation counts (not ones given on the command line) to
     * {@link #SLOW_STORAGE_KEYS} and {@link #SLOW_STORAGE_OPS}; returns whether anything changed.
     */
    boolean reduceDefaultsForSlowStorage() {
        boolean changed = false;
        if (keysOption == null && keys > SLOW_STORAGE_KEYS) {
            keys = SLOW_STORAGE_KEYS;
            changed = true;
        }
        if (opsOption == null && ops > SLOW_STORAGE_OPS) {
            ops = SLOW_STORAGE_OPS;
            changed = true;
        }
        deriveInitialCapacity();
        return changed;
    }

    private static String trim(double d) {
        return BigDecimal.valueOf(d).round(new MathContext(6)).stripTrailingZeros().toPlainString();
    }
}
