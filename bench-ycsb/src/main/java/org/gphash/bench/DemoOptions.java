package org.gphash.bench;

import java.nio.file.Path;
import java.util.Locale;

import org.gphash.bktcache.ZipfianGenerator;

/**
 * The demo's command line, parsed by hand (the demo has no dependency besides the index). Each
 * option is {@code --name VALUE} or {@code --name=VALUE}; counts accept underscores and a k/m
 * suffix ({@code 1_000_000}, {@code 500k}, {@code 2m}). A bad option is reported as a
 * {@link UsageException} whose message names the option and what was wrong.
 */
final class DemoOptions {

    /** A command line that cannot be run; the demo prints the message and exits with status 2. */
    static final class UsageException extends Exception {
        UsageException(String message) {
            super(message);
        }
    }

    static final long DEFAULT_KEYS = 1_000_000;
    static final long DEFAULT_OPS = 2_000_000;
    static final int DEFAULT_BATCH = 4096;
    static final int MAX_THREADS = 1024;
    static final int MAX_BATCH = 1 << 20;
    static final int KEY_SIZE = 8;
    static final int VALUE_SIZE = 128;

    /**
     * Defaults for a pool on a disk-backed file system, where every persist is a real msync
     * (about 0.1 ms on an SSD, measured at 3k inserts/s; an HDD is slower): the in-memory
     * defaults would take many minutes there.
     */
    static final long SLOW_STORAGE_KEYS = 10_000;
    static final long SLOW_STORAGE_OPS = 20_000;

    long keys = DEFAULT_KEYS;
    long ops = DEFAULT_OPS;
    int threads = Runtime.getRuntime().availableProcessors();
    int batch = DEFAULT_BATCH;
    /** Unless given: keys / 8, so that the load phase resizes a few times. */
    long initialCapacity;
    double readProportion = 0.5;
    double updateProportion = 0.5;
    double insertProportion = 0.0;
    double theta = ZipfianGenerator.DEFAULT_THETA;
    long seed = 42;
    /** Parent of the fresh pool directory; null means /dev/shm if usable, else java.io.tmpdir. */
    Path dir;
    boolean keep;
    boolean msync;
    boolean help;
    /** Which sizes came from the command line (those are never changed behind the user's back). */
    private boolean keysGiven;
    private boolean opsGiven;
    private boolean initialCapacityGiven;

    static String usage() {
        return """
                usage: ./gphash demo [options]

                Loads a persistent GPHash pool, runs a YCSB-like workload on it through the batch
                API with several threads, verifies every read, then closes, reopens (recovery)
                and checks the pool. Exit status: 0 ok, 1 verification or engine failure, 2 bad options.

                options:
                  --keys N                keys loaded (8-byte keys, 128-byte values)   default 1_000_000
                  --ops M                 operations in the run phase                  default 2_000_000
                  --threads T             worker threads, one batch each               default: CPU count (%d)
                  --batch B               operations per batch                         default 4096
                  --initial-capacity C    items the new pool holds before resizing     default keys / 8
                  --read-proportion P     share of reads (zipfian existing keys)       default 0.5
                  --update-proportion P   share of updates (zipfian existing keys)     default 0.5
                  --insert-proportion P   share of inserts (fresh keys)                default 0
                                          (when any proportion is given, the others default to 0;
                                          they must add up to 1)
                  --theta X               zipfian constant, 0 < X < 1                  default 0.99
                  --seed S                seed of the workload's random choices        default 42
                  --dir DIR               create the pool directory under DIR instead of
                                          /dev/shm (tmpfs) or java.io.tmpdir; on a disk-backed
                                          file system every write is an msync to disk, so the
                                          defaults drop to 10k keys and 20k ops there
                  --keep                  keep the pool directory at the end
                  --msync                 persist with MemorySegment.force (msync) even on tmpfs,
                                          where the engine otherwise skips it (a baseline)
                  -h, --help              show this message

                counts accept underscores and k/m suffixes: 1_000_000, 500k, 2m
                """.formatted(Runtime.getRuntime().availableProcessors());
    }

    static DemoOptions parse(String[] args) throws UsageException {
        DemoOptions o = new DemoOptions();
        boolean proportionGiven = false;
        double read = Double.NaN;
        double update = Double.NaN;
        double insert = Double.NaN;
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            String name = arg;
            String value = null;
            int eq = arg.indexOf('=');
            if (arg.startsWith("--") && eq > 0) {
                name = arg.substring(0, eq);
                value = arg.substring(eq + 1);
            }
            switch (name) {
                case "-h", "--help" -> o.help = true;
                case "--keep" -> o.keep = true;
                case "--msync" -> o.msync = true;
                case "--keys", "--ops", "--threads", "--batch", "--initial-capacity", "--read-proportion",
                     "--update-proportion", "--insert-proportion", "--theta", "--seed", "--dir" -> {
                    if (value == null) {
                        if (i + 1 >= args.length) {
                            throw new UsageException(name + " needs a value");
                        }
                        value = args[++i];
                    }
                    switch (name) {
                        case "--keys" -> {
                            o.keys = count(name, value, 1, Long.MAX_VALUE / 2);
                            o.keysGiven = true;
                        }
                        case "--ops" -> {
                            o.ops = count(name, value, 0, Long.MAX_VALUE / 2);
                            o.opsGiven = true;
                        }
                        case "--threads" -> o.threads = (int) count(name, value, 1, MAX_THREADS);
                        case "--batch" -> o.batch = (int) count(name, value, 1, MAX_BATCH);
                        case "--initial-capacity" -> {
                            o.initialCapacity = count(name, value, 1, Long.MAX_VALUE / 2);
                            o.initialCapacityGiven = true;
                        }
                        case "--read-proportion" -> {
                            read = proportion(name, value);
                            proportionGiven = true;
                        }
                        case "--update-proportion" -> {
                            update = proportion(name, value);
                            proportionGiven = true;
                        }
                        case "--insert-proportion" -> {
                            insert = proportion(name, value);
                            proportionGiven = true;
                        }
                        case "--theta" -> {
                            o.theta = decimal(name, value);
                            if (!(o.theta > 0 && o.theta < 1)) {
                                throw new UsageException(name + " must be between 0 and 1 (exclusive), got " + value);
                            }
                        }
                        case "--seed" -> o.seed = integer(name, value);
                        case "--dir" -> {
                            if (value.isBlank()) {
                                throw new UsageException(name + " needs a directory");
                            }
                            o.dir = Path.of(value);
                        }
                        default -> throw new AssertionError(name);
                    }
                }
                default -> {
                    if (arg.startsWith("-")) {
                        throw new UsageException("unknown option " + name);
                    }
                    throw new UsageException("unexpected argument '" + arg + "' (options start with --)");
                }
            }
        }
        if (proportionGiven) {
            o.readProportion = Double.isNaN(read) ? 0 : read;
            o.updateProportion = Double.isNaN(update) ? 0 : update;
            o.insertProportion = Double.isNaN(insert) ? 0 : insert;
            double sum = o.readProportion + o.updateProportion + o.insertProportion;
            if (Math.abs(sum - 1.0) > 1e-9) {
                throw new UsageException(String.format(Locale.ROOT,
                        "--read-proportion, --update-proportion and --insert-proportion must add up to 1; "
                                + "got %s + %s + %s = %s (an unset one counts as 0)",
                        trim(o.readProportion), trim(o.updateProportion), trim(o.insertProportion), trim(sum)));
            }
        }
        o.deriveInitialCapacity();
        return o;
    }

    private void deriveInitialCapacity() {
        if (!initialCapacityGiven) {
            initialCapacity = Math.max(1, keys / 8);
        }
    }

    /**
     * Lowers the default key and operation counts (not ones given on the command line) to
     * {@link #SLOW_STORAGE_KEYS} and {@link #SLOW_STORAGE_OPS}; returns whether anything changed.
     */
    boolean reduceDefaultsForSlowStorage() {
        boolean changed = false;
        if (!keysGiven && keys > SLOW_STORAGE_KEYS) {
            keys = SLOW_STORAGE_KEYS;
            changed = true;
        }
        if (!opsGiven && ops > SLOW_STORAGE_OPS) {
            ops = SLOW_STORAGE_OPS;
            changed = true;
        }
        deriveInitialCapacity();
        return changed;
    }

    private static String trim(double d) {
        return java.math.BigDecimal.valueOf(d).round(new java.math.MathContext(6)).stripTrailingZeros().toPlainString();
    }

    /** A whole number with optional underscores and a k (10^3) or m (10^6) suffix, in [min, max]. */
    static long count(String name, String text, long min, long max) throws UsageException {
        String t = text.strip().replace("_", "").toLowerCase(Locale.ROOT);
        long scale = 1;
        if (t.endsWith("k")) {
            scale = 1_000;
            t = t.substring(0, t.length() - 1);
        } else if (t.endsWith("m")) {
            scale = 1_000_000;
            t = t.substring(0, t.length() - 1);
        }
        long v;
        try {
            v = Math.multiplyExact(Long.parseLong(t), scale);
        } catch (NumberFormatException | ArithmeticException e) {
            throw new UsageException(name + " needs a whole number (like 1_000_000, 500k or 2m), got '" + text + "'");
        }
        if (v < min || v > max) {
            throw new UsageException(name + " must be " + (max == Long.MAX_VALUE / 2 ? "at least " + min
                    : "between " + min + " and " + max) + ", got " + text);
        }
        return v;
    }

    private static long integer(String name, String text) throws UsageException {
        try {
            return Long.parseLong(text.strip().replace("_", ""));
        } catch (NumberFormatException e) {
            throw new UsageException(name + " needs an integer, got '" + text + "'");
        }
    }

    private static double decimal(String name, String text) throws UsageException {
        try {
            double d = Double.parseDouble(text.strip());
            if (!Double.isFinite(d)) {
                throw new NumberFormatException();
            }
            return d;
        } catch (NumberFormatException e) {
            throw new UsageException(name + " needs a number, got '" + text + "'");
        }
    }

    private static double proportion(String name, String text) throws UsageException {
        double p = decimal(name, text);
        if (p < 0 || p > 1) {
            throw new UsageException(name + " must be between 0 and 1, got " + text);
        }
        return p;
    }
}
