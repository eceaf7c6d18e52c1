package org.gphash.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.SplittableRandom;

import org.gphash.OpKind;
import org.gphash.cli.Cli;
import org.gphash.cli.Report;
import org.gphash.cli.ToolVersion;
import org.gphash.cli.ZipfianGenerator;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code ./gphash trace dlrm}: an embedding-lookup trace shaped like DLRM training on Criteo
 * Kaggle. Each sample looks up one row in each of the 26 embedding tables; samples come in
 * training batches, and each training batch becomes trace batches:
 * <ol>
 *   <li>INSERT of every row seen for the first time, with its initial vector (tables are created
 *       lazily, so only rows the trace touches exist; that is also how a real log is replayed);</li>
 *   <li>GET of all 26 x batch rows (the embedding lookup);</li>
 *   <li>with {@code --updates}, UPDATE of each distinct row looked up (the optimizer writing the
 *       trained vector back).</li>
 * </ol>
 * Synthetic ids follow a power law per feature (zipfian over the feature's cardinality, scaled
 * by {@code --scale}; rank r maps to id {@code r * P mod cardinality} so that hot ids are spread
 * out); {@code --criteo FILE} reads a real Criteo log instead (tab-separated: label, 13 dense,
 * 26 categorical hex values; an empty value is its own "missing" id).
 * Keys: (feature, id), 8 bytes (or longer with {@code --key-size}); values: 32 float32, 128 bytes.
 */
public final class DlrmTrace {

    /** A prime larger than every cardinality: r -> r * P mod n is a bijection on [0, n). */
    private static final long SPREAD_PRIME = 2_147_483_647L;
    private static final long MISSING_ID = 0x00FF_FFFF_FFFF_FFFFL;

    record Options(long samples, int batch, double scale, double theta, boolean updates, int keySize, long seed,
                   Path criteo, Path out, ValueLengths valueLengths) {
    }

    private final Options options;
    private final KeyCodec keys;
    private final LongHashSet created = new LongHashSet();
    private final ZipfianGenerator[] zipf;
    private final long[] cardinality;
    private long lookups;

    /** Each table's row width in bytes (float32s): {@link CriteoKaggle#VALUE_SIZE}, or its own where lengths are mixed. */
    private final int[] widths = new int[CriteoKaggle.SPARSE_FEATURES];
    /** The widest row: the trace's value size. */
    private final int valueSize;

    DlrmTrace(Options options) {
        this.options = options;
        int widest = 0;
        for (int f = 0; f < widths.length; f++) {
            widths[f] = options.valueLengths() == ValueLengths.FIXED ? CriteoKaggle.VALUE_SIZE
                    : Float.BYTES * ((ValueLengths.MIXED.of(f, options.seed(), ValueLengths.MIXED_DEFAULT_VALUE_SIZE) + 3) / Float.BYTES);
            widest = Math.max(widest, widths[f]);
        }
        this.valueSize = widest;
        this.keys = new KeyCodec(options.keySize());
        this.cardinality = new long[CriteoKaggle.SPARSE_FEATURES];
        this.zipf = new ZipfianGenerator[CriteoKaggle.SPARSE_FEATURES];
        for (int f = 0; f < cardinality.length; f++) {
            cardinality[f] = Math.max(1, Math.round(CriteoKaggle.CARDINALITIES[f] * options.scale()));
            zipf[f] = new ZipfianGenerator(cardinality[f], options.theta());
        }
    }

    /** The command line ({@link Cli}: picocli). */
    @Command(versionProvider = ToolVersion.class, name = "./gphash trace dlrm", sortOptions = false, usageHelpAutoWidth = false,
            description = {"Writes a DLRM embedding-lookup trace shaped like Criteo Kaggle (26 categorical features, "
                    + "power-law ids, training batches). Keys (feature, id); values 32 float32 (128 bytes)."})
    static final class Line {
        @Option(names = "--samples", paramLabel = "N", description = "training samples; default 1m")
        long samples = 1_000_000;
        @Option(names = "--batch", paramLabel = "B", description = "samples per training batch; default 2048")
        int batch = 2048;
        @Option(names = "--scale", paramLabel = "F", description = "embedding table sizes x F (1 = Criteo Kaggle's); default 1")
        double scale = 1;
        @Option(names = "--theta", paramLabel = "X", description = "zipfian constant of the ids, 0 < X < 1; default 0.99")
        double theta = ZipfianGenerator.DEFAULT_THETA;
        @Option(names = "--updates", description = "write the trained rows back (UPDATE) after each batch")
        boolean updates;
        @Option(names = "--key-size", paramLabel = "B", description = "bytes per key (8 holds (feature, id)); default 8")
        int keySize = 8;
        @Option(names = "--seed", paramLabel = "S", description = "default 42")
        long seed = 42;
        @Option(names = "--criteo", paramLabel = "FILE", description = "take the samples from a Criteo log (train.txt) instead")
        Path criteo;
        @Option(names = "--out", paramLabel = "FILE", description = "default dlrm.trace")
        Path out = Path.of("dlrm.trace");
        @Option(names = "--value-lengths", paramLabel = "fixed|mixed", description = {"fixed: every table's rows 32 float32 "
                + "(default); mixed: each table its own width, 16 B to 4 KiB in float32s, lognormal around 80 B "
                + "(issue 53's sizes): a trace of version 2, replayed on a format 3 pool"})
        String valueLengths = "fixed";
        @Mixin
        Cli.Help help = new Cli.Help();
    }

    static String usage(String... args) {
        return Cli.usage(new Line(), args);
    }

    /** The options, or null when help was asked for. */
    static Options parse(String[] args) throws Cli.UsageException {
        Line l = Cli.parse(new Line(), args);
        if (l.help.requested()) {
            return null;
        }
        Cli.range("--samples", l.samples, 1, Long.MAX_VALUE / 2);
        Cli.range("--batch", l.batch, 1, TraceFormat.MAX_BATCH / CriteoKaggle.SPARSE_FEATURES);
        Cli.range("--key-size", l.keySize, 8, TraceFormat.MAX_KEY_SIZE);
        if (!(l.scale > 0 && l.scale <= 1)) {
            throw new Cli.UsageException("--scale must be in (0, 1], got " + l.scale);
        }
        Cli.theta("--theta", l.theta);
        ValueLengths lengths;
        try {
            lengths = ValueLengths.parse(l.valueLengths);
        } catch (IllegalArgumentException e) {
            throw new Cli.UsageException("--value-lengths: " + e.getMessage());
        }
        return new Options(l.samples, l.batch, l.scale, l.theta, l.updates, l.keySize, l.seed, l.criteo, l.out, lengths);
    }

    static void main(String[] args, PrintStream out) throws Exception {
        Options o = parse(args);
        if (o == null) {
            out.print(usage(args));
            return;
        }
        DlrmTrace t = new DlrmTrace(o);
        long start = System.nanoTime();
        long written = t.write();
        out.printf(Locale.ROOT, "gphash trace dlrm: %s: %s operations (%s lookups, %s rows created) in %.1f s%n",
                o.out(), Report.count(written), Report.count(t.lookups), Report.count(t.created.size()),
                (System.nanoTime() - start) / 1e9);
    }

    /** Writes the trace; returns the number of operations. */
    long write() throws IOException {
        String source = options.criteo() == null
                ? String.format(Locale.ROOT, "synthetic Criteo-Kaggle-shaped, scale %s, zipfian theta %s, seed %d",
                options.scale(), options.theta(), options.seed())
                : "Criteo log " + options.criteo().getFileName();
        boolean mixed = options.valueLengths() != ValueLengths.FIXED;
        TraceFormat.Header header = new TraceFormat.Header(options.keySize(), valueSize,
                "dlrm embedding lookups: " + source + ", training batch " + options.batch() + " samples"
                        + (options.updates() ? ", with updates" : "")
                        + (mixed ? ", rows of " + Arrays.stream(widths).min().orElse(0) + " to " + valueSize + " bytes by table" : ""),
                mixed);
        try (TraceWriter writer = new TraceWriter(options.out(), header)) {
            int features = CriteoKaggle.SPARSE_FEATURES;
            long[] sample = new long[features];
            long[] batchKeys = new long[options.batch() * features];
            int inBatch = 0;
            if (options.criteo() == null) {
                SplittableRandom random = new SplittableRandom(options.seed());
                for (long s = 0; s < options.samples(); s++) {
                    for (int f = 0; f < features; f++) {
                        long rank = zipf[f].next(random);
                        sample[f] = CriteoKaggle.key(f, rank * SPREAD_PRIME % cardinality[f]);
                    }
                    System.arraycopy(sample, 0, batchKeys, inBatch++ * features, features);
                    if (inBatch == options.batch()) {
                        emit(writer, batchKeys, inBatch * features);
                        inBatch = 0;
                    }
                }
            } else {
                try (BufferedReader r = Files.newBufferedReader(options.criteo())) {
                    String line;
                    long lineNo = 0;
                    while ((line = r.readLine()) != null && lineNo < options.samples()) {
                        lineNo++;
                        parseCriteo(line, lineNo, sample);
                        System.arraycopy(sample, 0, batchKeys, inBatch++ * features, features);
                        if (inBatch == options.batch()) {
                            emit(writer, batchKeys, inBatch * features);
                            inBatch = 0;
                        }
                    }
                }
            }
            if (inBatch > 0) {
                emit(writer, batchKeys, inBatch * features);
            }
            return writer.operations();
        }
    }

    /** One Criteo line's 26 categorical values as keys. */
    void parseCriteo(String line, long lineNo, long[] sample) throws IOException {
        String[] cols = line.split("\t", -1);
        int first = 1 + CriteoKaggle.DENSE_FEATURES;
        if (cols.length != first + CriteoKaggle.SPARSE_FEATURES) {
            throw new IOException(options.criteo() + ": line " + lineNo + " has " + cols.length + " tab-separated columns, a "
                    + "Criteo log has " + (first + CriteoKaggle.SPARSE_FEATURES)
                    + " (label, 13 integer and 26 categorical features)");
        }
        for (int f = 0; f < CriteoKaggle.SPARSE_FEATURES; f++) {
            String c = cols[first + f];
            long id;
            if (c.isEmpty()) {
                id = MISSING_ID;
            } else {
                try {
                    id = Long.parseUnsignedLong(c, 16) & 0x00FF_FFFF_FFFF_FFFFL;
                } catch (NumberFormatException e) {
                    throw new IOException(options.criteo() + ": line " + lineNo + ", categorical feature " + (f + 1)
                            + ": '" + c + "' is not hexadecimal");
                }
            }
            sample[f] = CriteoKaggle.key(f, id);
        }
    }

    /** The trace batches of one training batch: inserts of new rows, the lookups, optional updates. */
    private void emit(TraceWriter writer, long[] batchKeys, int n) throws IOException {
        ValueLengths lengths = options.valueLengths();
        OpBatch inserts = new OpBatch(options.keySize(), valueSize, 1024, lengths);
        OpBatch gets = new OpBatch(options.keySize(), valueSize, n, lengths);
        OpBatch updates = new OpBatch(options.keySize(), valueSize, 1024, lengths);
        LongHashSet inThisBatch = options.updates() ? new LongHashSet() : null;
        byte[] value = new byte[valueSize];
        byte[] key = new byte[options.keySize()];
        int features = CriteoKaggle.SPARSE_FEATURES;
        for (int i = 0; i < n; i++) {
            long k = batchKeys[i];
            int width = widths[i % features];   // a sample's keys are its features in order
            keys.encode(k, key, 0);
            if (created.add(k)) {
                embedding(k, 0, value, width);
                inserts.addRaw(OpKind.INSERT, key, 0, value, 0, width);
            }
            gets.addRaw(OpKind.GET, key, 0, value, 0, width);
            if (inThisBatch != null && inThisBatch.add(k)) {
                embedding(k, lookups + i + 1, value, width);
                updates.addRaw(OpKind.UPDATE, key, 0, value, 0, width);
            }
        }
        lookups += n;
        writer.write(inserts);
        writer.write(gets);
        writer.write(updates);
    }

    /** A deterministic vector for (key, step): small floats, as a freshly initialised or trained row. */
    static void embedding(long key, long step, byte[] out) {
        embedding(key, step, out, CriteoKaggle.VALUE_SIZE);
    }

    /** The same, {@code width} bytes of it (a whole number of float32s). */
    static void embedding(long key, long step, byte[] out, int width) {
        ByteBuffer b = ByteBuffer.wrap(out).order(ByteOrder.LITTLE_ENDIAN);
        SplittableRandom r = new SplittableRandom(key * 31 + step);
        for (int d = 0; d < width / Float.BYTES; d++) {
            b.putFloat(d * Float.BYTES, (float) (r.nextDouble() * 0.1 - 0.05));
        }
    }
}
