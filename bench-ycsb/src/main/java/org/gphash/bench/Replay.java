package org.gphash.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.gphash.Backend;
import org.gphash.BackendUnavailableException;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.cli.Cli;
import org.gphash.cli.PhaseTally;
import org.gphash.cli.PoolDirectory;
import org.gphash.cli.Progress;
import org.gphash.cli.Report;
import org.gphash.cli.ToolVersion;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code ./gphash replay FILE}: replays a trace on the GPHash engine and the chosen baselines, one
 * system after another, each on a fresh store. Batches run in trace order (a later batch may
 * depend on an earlier one); each batch is split into one contiguous part per thread, and the
 * parts run in parallel, except on a store that runs batches resident in GPU memory
 * ({@link StoreUnderTest#deviceResident()}), which takes each batch whole, as a GPU application
 * issues it, and is timed on the engine's run alone. Prints one table row per system and a digest of all outcomes: equal
 * digests mean the systems answered every operation alike.
 */
public final class Replay {

    record Options(Path file, Backend backend, List<String> baselines, int threads, Path json, Path dir,
                   boolean progress) {
    }

    /** Operations of the unmeasured warm-up replay of every system. */
    static final long WARMUP_OPS = 300_000;

    /** The command line ({@link Cli}: picocli). */
    @Command(versionProvider = ToolVersion.class, name = "./gphash replay", sortOptions = false, usageHelpAutoWidth = false,
            description = {"Replays a trace (docs/TRACES.md; written by ./gphash trace dlrm|pagerank) on the GPHash "
                    + "engine and its baselines, each on a fresh store, batches in trace order."})
    static final class Line {
        @Parameters(arity = "0..1", paramLabel = "FILE", description = "the trace")
        Path file;
        @Option(names = "--backend", paramLabel = "cpu|gpu", description = "the GPHash engine under test; default cpu")
        Backend backend = Backend.CPU;
        @Option(names = "--baselines", paramLabel = "LIST", description = {"cpu-assisted, chm, lmdb, gpu-device, all or "
                + "none; default: chm,lmdb (cpu), gpu-device,cpu-assisted (gpu)"})
        String baselines;
        @Option(names = "--threads", paramLabel = "T", description = "threads per batch; default: the CPU count")
        int threads = Runtime.getRuntime().availableProcessors();
        @Option(names = "--json", paramLabel = "FILE", description = "write the measurements as JSON")
        Path json;
        @Option(names = "--dir", paramLabel = "DIR", description = "put store files under DIR (default /dev/shm, else "
                + "java.io.tmpdir)")
        Path dir;
        @Option(names = "--no-progress", description = "no progress bar")
        boolean noProgress;
        @Mixin
        Cli.Help help = new Cli.Help();
    }

    private Replay() {
    }

    static String usage(String... args) {
        return Cli.usage(new Line(), args);
    }

    public static void main(String[] args) {
        Options o;
        try {
            o = parse(args);
        } catch (Cli.UsageException e) {
            System.err.println("gphash replay: " + e.getMessage());
            System.err.println("run './gphash replay --help' for the options");
            System.exit(2);
            return;
        }
        if (o == null) {
            System.out.print(usage(args));
            return;
        }
        int status;
        try {
            status = run(o, System.out, System.err);
        } catch (TraceFormatException e) {
            System.err.println("gphash replay: malformed trace: " + e.getMessage());
            status = 2;
        } catch (Exception | Error e) {
            System.err.println("gphash replay: FAILED: " + e);
            e.printStackTrace(System.err);
            status = 1;
        }
        System.exit(status);
    }

    /** The options, or null when help was asked for. */
    static Options parse(String[] args) throws Cli.UsageException {
        Line l = Cli.parse(new Line(), args);
        if (l.help.requested()) {
            return null;
        }
        if (l.file == null) {
            throw new Cli.UsageException("which trace? ./gphash replay FILE");
        }
        Cli.range("--threads", l.threads, 1, Cli.MAX_THREADS);
        List<String> baselines;
        try {
            baselines = l.baselines == null
                    ? l.backend == Backend.GPU ? List.of(Systems.GPU_DEVICE, "cpu-assisted") : List.of("chm", "lmdb")
                    : Systems.parseBaselines(l.baselines);
        } catch (IllegalArgumentException e) {
            throw new Cli.UsageException("--baselines: " + e.getMessage());
        }
        return new Options(l.file, l.backend, baselines, l.threads, l.json, l.dir, !l.noProgress);
    }

    static int run(Options o, PrintStream out, PrintStream err) throws Exception {
        if (!Files.isRegularFile(o.file())) {
            err.println("gphash replay: no such file: " + o.file());
            return 2;
        }
        TraceFormat.Header header;
        long operations = 0;
        long maxBatch = 0;
        long writes = 0;
        // A first pass validates the whole file before any store is created, and sizes the stores.
        try (TraceReader reader = new TraceReader(o.file())) {
            header = reader.header();
            OpBatch batch = new OpBatch(header.keySize(), header.valueSize(), 1024, lengthsOf(header));
            while (reader.next(batch)) {
                operations += batch.size();
                maxBatch = Math.max(maxBatch, batch.size());
                for (int i = 0; i < batch.size(); i++) {
                    writes += batch.kind(i) == OpKind.INSERT || batch.kind(i) == OpKind.PUT ? 1 : 0;
                }
            }
        }
        out.println("gphash replay: " + o.file() + ": " + header.description());
        out.println("  " + Report.count(operations, "operation") + ", " + header.keySize() + "-byte keys, "
                + (header.lengths() ? "values of up to " + header.valueSize() + " bytes" : header.valueSize() + "-byte values")
                + ", largest batch " + Report.count(maxBatch) + "; "
                + o.threads() + " thread" + (o.threads() == 1 ? "" : "s") + " per batch");
        List<String> systems = Systems.systems(o.backend(), o.baselines());
        List<Measurement> rows = new ArrayList<>();
        List<String> digests = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(o.threads());
        // Stores are sized for the items the trace inserts (an upper bound: inserts of present keys count too).
        long items = Math.max(1024, writes);
        long estimate = PoolDirectory.estimatePoolBytes(items, header.keySize(), header.valueSize());
        try (Progress progress = Progress.on(err, o.progress())) {
            for (String system : systems) {
                // Unmeasured: the trace's first WARMUP_OPS operations on a throwaway store, so that
                // no system is timed while the JIT is still compiling its code.
                try (PoolDirectory dir = PoolDirectory.create(o.dir(), estimate, false);
                     StoreUnderTest store = Systems.open(system, new StoreConfig(dir.path(), header.keySize(),
                             header.valueSize(), items, 42, lengthsOf(header)))) {
                    progress.start(system + " warm-up", Math.min(operations, WARMUP_OPS));
                    replay(o.file(), store, o.threads(), pool, progress, WARMUP_OPS);
                } catch (BackendUnavailableException e) {
                    // Reported below.
                }
                try (PoolDirectory dir = PoolDirectory.create(o.dir(), estimate, false);
                     StoreUnderTest store = Systems.open(system, new StoreConfig(dir.path(), header.keySize(),
                             header.valueSize(), items, 42, lengthsOf(header)))) {
                    progress.start(system + " " + header.label(), operations);
                    Result r = replay(o.file(), store, o.threads(), pool, progress, Long.MAX_VALUE);
                    rows.add(r.measurement(system, header.label(), store.figures()));
                    digests.add(String.format(Locale.ROOT, "%-13s outcomes digest %016x  (%s)", system, r.digest,
                            r.outcomeCounts()));
                    digests.add(String.format(Locale.ROOT, "%-13s batches by kind: %s", system, r.batchKinds()));
                } catch (BackendUnavailableException e) {
                    progress.clearLine();
                    err.println("gphash replay: " + system + " cannot run on this machine: " + e.getMessage());
                    if (system.equals(systems.get(0))) {
                        return 3;
                    }
                }
            }
        } finally {
            pool.shutdownNow();
        }
        ResultTable.print(out, "replay of " + o.file().getFileName(), rows);
        out.println();
        digests.forEach(out::println);
        ResultTable.printRatios(out, rows, systems.get(0));
        if (!systems.get(0).equals(Systems.GPU_DEVICE) && systems.contains(Systems.GPU_DEVICE)) {
            ResultTable.printRatios(out, rows, Systems.GPU_DEVICE);
        }
        if (o.json() != null) {
            Map<String, Object> head = new LinkedHashMap<>();
            head.put("benchmark", "replay");
            head.put("trace", o.file().toString());
            head.put("description", header.description());
            JsonReport.write(o.json(), head, rows);
            out.println("json: " + o.json());
        }
        return 0;
    }

    /** What one system did over the whole trace. */
    static final class Result {
        final PhaseTally tally = new PhaseTally();
        final long[] outcomes = new long[Outcome.values().length];
        long nanos;
        long digest = 0xcbf29ce484222325L;
        int threads;
        /** Batches and their time by the kind of their first operation (a trace's batches are of one kind each). */
        final long[] kindBatches = new long[OpKind.values().length];
        final long[] kindOps = new long[kindBatches.length];
        final long[] kindNanos = new long[kindBatches.length];

        void recordBatch(OpBatch whole, long nanos) {
            tally.recordBatch(nanos);
            int k = whole.size() == 0 ? 0 : whole.kind(0).ordinal();
            kindBatches[k]++;
            kindOps[k] += whole.size();
            kindNanos[k] += nanos;
        }

        /** Where the time went, by the kind of batch: count, mean size, mean time, share. */
        String batchKinds() {
            StringBuilder sb = new StringBuilder();
            for (OpKind k : OpKind.values()) {
                int i = k.ordinal();
                if (kindBatches[i] > 0) {
                    sb.append(sb.isEmpty() ? "" : "; ").append(String.format(Locale.ROOT,
                            "%s %d batches of %.0f ops, %.1f us each, %.0f%% of the time", k.name().toLowerCase(Locale.ROOT),
                            kindBatches[i], (double) kindOps[i] / kindBatches[i], kindNanos[i] / 1e3 / kindBatches[i],
                            100.0 * kindNanos[i] / Math.max(1, nanos)));
                }
            }
            return sb.toString();
        }

        Measurement measurement(String system, String label, StoreUnderTest.Figures f) {
            return new Measurement(system, label, -1, threads, tally.operations(), nanos, tally.meanBatchNanos(),
                    tally.batchQuantileNanos(0.99), f.loadFactor(), f.cacheHitRate(), 0);
        }

        String outcomeCounts() {
            StringBuilder sb = new StringBuilder();
            for (Outcome x : Outcome.values()) {
                if (outcomes[x.ordinal()] > 0) {
                    sb.append(sb.isEmpty() ? "" : ", ").append(x.name().toLowerCase(Locale.ROOT)).append(' ')
                            .append(Report.count(outcomes[x.ordinal()]));
                }
            }
            return sb.toString();
        }
    }

    /** Replays {@code file} on {@code store}; throughput counts only the time inside the store. */
    static Result replay(Path file, StoreUnderTest store, int threads, ExecutorService pool, Progress progress,
                         long maxOps) throws IOException, Exception {
        Result r = new Result();
        r.threads = threads;
        try (TraceReader reader = new TraceReader(file)) {
            int ks = reader.header().keySize();
            int vs = reader.header().valueSize();
            ValueLengths lengths = lengthsOf(reader.header());
            OpBatch whole = new OpBatch(ks, vs, 4096, lengths);
            OpBatch[] parts = new OpBatch[threads];
            OpResults[] results = new OpResults[threads];
            for (int t = 0; t < threads; t++) {
                parts[t] = new OpBatch(ks, vs, 1024, lengths);
                results[t] = new OpResults(vs, 1024, lengths);
            }
            byte[] key = new byte[ks];
            List<Future<?>> running = new ArrayList<>();
            long done = 0;
            var resident = store.deviceResident();
            if (resident.isPresent()) {
                r.threads = 1;
            }
            OpResults wholeResults = new OpResults(vs, 1024, lengths);
            while (done < maxOps && reader.next(whole)) {
                int n = whole.size();
                if (resident.isPresent()) {
                    // A GPU application issues the whole batch from GPU memory: staged before the
                    // clock, its results fetched after it.
                    resident.get().stage(whole);
                    long t0 = System.nanoTime();
                    resident.get().run();
                    long dt = System.nanoTime() - t0;
                    r.nanos += dt;
                    r.recordBatch(whole, dt);
                    resident.get().fetch(whole, wholeResults);
                    tally(whole, wholeResults, r);
                    progress.advance(n);
                    done += n;
                    continue;
                }
                int used = Math.min(threads, n);
                for (int t = 0; t < used; t++) {
                    OpBatch part = parts[t];
                    part.clear();
                    for (int i = (int) ((long) n * t / used); i < (long) n * (t + 1) / used; i++) {
                        part.addFrom(whole, i);
                    }
                    results[t].ensureCapacity(part.size());
                }
                long t0 = System.nanoTime();
                if (used == 1) {
                    store.execute(parts[0], results[0]);
                } else {
                    running.clear();
                    for (int t = 0; t < used; t++) {
                        int tt = t;
                        running.add(pool.submit(() -> {
                            store.execute(parts[tt], results[tt]);
                            return null;
                        }));
                    }
                    for (Future<?> f : running) {
                        f.get();
                    }
                }
                long dt = System.nanoTime() - t0;
                r.nanos += dt;
                r.recordBatch(whole, dt);
                for (int t = 0; t < used; t++) {
                    tally(parts[t], results[t], r);
                }
                progress.advance(n);
                done += n;
            }
        }
        return r;
    }

    /** Counts outcomes by kind and folds them, in trace order, into the digest (FNV-1a). */
    private static void tally(OpBatch part, OpResults results, Result r) {
        for (int i = 0; i < part.size(); i++) {
            switch (part.kind(i)) {
                case GET -> r.tally.reads++;
                case UPDATE, PUT -> r.tally.updates++;
                case INSERT -> r.tally.inserts++;
                case DELETE -> r.tally.deletes++;
                case READ_MODIFY_WRITE -> r.tally.readModifyWrites++;
            }
            Outcome o = results.outcome(i);
            r.outcomes[o.ordinal()]++;
            r.digest = (r.digest ^ o.ordinal()) * 0x100000001b3L;
            if (part.lengths() != ValueLengths.FIXED && (o == Outcome.FOUND || o == Outcome.REPLACED)) {
                r.digest = (r.digest ^ results.valueLength(i)) * 0x100000001b3L;   // values of any length: theirs too
            }
        }
    }

    /** A trace of values of any length is replayed as such (a format 3 pool; stores that take only the value size refuse it). */
    private static ValueLengths lengthsOf(TraceFormat.Header header) {
        return header.lengths() ? ValueLengths.MIXED : ValueLengths.FIXED;
    }
}
