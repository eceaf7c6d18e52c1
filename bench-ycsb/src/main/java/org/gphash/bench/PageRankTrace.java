package org.gphash.bench;

import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;

import org.gphash.Backend;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.cli.Cli;
import org.gphash.cli.PoolDirectory;
import org.gphash.cli.Report;
import org.gphash.cli.ToolVersion;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code ./gphash trace pagerank}: runs PageRank with every vertex's rank stored in the GPHash
 * engine (CPU backend, a temporary pool) and records every batch it sends as a trace.
 *
 * <p>Key: the vertex number (8 bytes). Value (16 bytes): the rank (float64) and the out-degree
 * (int64). The load inserts every vertex with rank 1/N. Each iteration walks the vertices in
 * blocks: one GET batch of the ranks of all in-neighbours of the block, then one
 * READ_MODIFY_WRITE batch storing the block's new ranks, {@code (1-d)/N + d * sum(rank(u) / outdeg(u))},
 * and returning the old ones (for the convergence figure). Ranks are updated in
 * place, so a block already sees this iteration's ranks of earlier blocks (Gauss-Seidel
 * PageRank, which converges to the same ranks as the synchronous form; mass of vertices without
 * out-edges is not redistributed).
 */
public final class PageRankTrace {

    static final int VALUE_SIZE = 16;
    /** The largest GET batch; a block whose in-edges are more is split. */
    static final int MAX_GETS = 1 << 16;

    record Options(int scale, int edgeFactor, int iterations, double damping, int block, long seed, Path edges,
                   Path out) {
    }

    private PageRankTrace() {
    }

    /** The command line ({@link Cli}: picocli). */
    @Command(versionProvider = ToolVersion.class, name = "./gphash trace pagerank", sortOptions = false, usageHelpAutoWidth = false,
            description = {"Runs PageRank over a power-law graph with the ranks stored in the GPHash engine (CPU) and "
                    + "records every batch as a trace. Keys: vertex ids (8 bytes); values: rank and out-degree (16 bytes)."})
    static final class Line {
        @Option(names = "--scale", paramLabel = "S", description = "R-MAT graph of 2^S vertices (Graph500 parameters); default 16")
        int scale = 16;
        @Option(names = "--edge-factor", paramLabel = "E", description = "edges per vertex; default 16")
        int edgeFactor = 16;
        @Option(names = "--edges", paramLabel = "FILE", description = "use an edge list (\"src dst\" per line, # comments) instead")
        Path edges;
        @Option(names = "--iterations", paramLabel = "N", description = "PageRank iterations; default 10")
        int iterations = 10;
        @Option(names = "--damping", paramLabel = "D", description = "damping factor; default 0.85")
        double damping = 0.85;
        @Option(names = "--block", paramLabel = "B", description = "vertices per block (a GET and an RMW batch); default 4096")
        int block = 4096;
        @Option(names = "--seed", paramLabel = "S", description = "default 42")
        long seed = 42;
        @Option(names = "--out", paramLabel = "FILE", description = "default pagerank.trace")
        Path out = Path.of("pagerank.trace");
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
        Cli.range("--scale", l.scale, 1, 30);
        Cli.range("--edge-factor", l.edgeFactor, 1, 1024);
        Cli.range("--iterations", l.iterations, 1, 10_000);
        Cli.range("--block", l.block, 1, TraceFormat.MAX_BATCH);
        if (!(l.damping > 0 && l.damping < 1)) {
            throw new Cli.UsageException("--damping must be between 0 and 1, got " + l.damping);
        }
        return new Options(l.scale, l.edgeFactor, l.iterations, l.damping, l.block, l.seed, l.edges, l.out);
    }

    static void main(String[] args, PrintStream out) throws Exception {
        Options o = parse(args);
        if (o == null) {
            out.print(usage(args));
            return;
        }
        long start = System.nanoTime();
        Graph g = o.edges() == null ? Graph.rmat(o.scale(), o.edgeFactor(), o.seed()) : Graph.edgeList(o.edges());
        out.printf(Locale.ROOT, "gphash trace pagerank: %s vertices, %s edges (%s)%n", Report.count(g.vertices),
                Report.count(g.edges()), o.edges() == null ? "R-MAT scale " + o.scale() + ", edge factor "
                        + o.edgeFactor() : o.edges().toString());
        String description = String.format(Locale.ROOT, "pagerank over %s: %d vertices, %d edges, %d iterations, "
                        + "damping %s, blocks of %d vertices", o.edges() == null ? "R-MAT scale " + o.scale()
                        + " edge factor " + o.edgeFactor() + " seed " + o.seed() : o.edges().getFileName().toString(),
                g.vertices, g.edges(), o.iterations(), o.damping(), o.block());
        double[] ranks;
        long ops;
        try (PoolDirectory dir = PoolDirectory.create(null, PoolDirectory.estimatePoolBytes(g.vertices, 8, VALUE_SIZE), false);
             TraceWriter writer = new TraceWriter(o.out(), new TraceFormat.Header(8, VALUE_SIZE, description));
             StoreUnderTest store = new RecordingStore(new GPHashStore(new StoreConfig(dir.path(), 8, VALUE_SIZE,
                     g.vertices, o.seed()), Backend.CPU), writer)) {
            ranks = run(g, store, o.iterations(), o.damping(), o.block(), out);
            ops = writer.operations();
        }
        int top = 0;
        for (int v = 1; v < ranks.length; v++) {
            top = ranks[v] > ranks[top] ? v : top;
        }
        out.printf(Locale.ROOT, "  top vertex %d, rank %.6g; trace %s: %s operations, %.1f s%n", top, ranks[top],
                o.out(), Report.count(ops), (System.nanoTime() - start) / 1e9);
    }

    /** Runs PageRank on {@code store}; returns the final ranks (read back from the store). */
    static double[] run(Graph g, StoreUnderTest store, int iterations, double damping, int block, PrintStream log) {
        int n = g.vertices;
        OpBatch batch = new OpBatch(8, VALUE_SIZE, Math.min(block, MAX_GETS));
        OpResults results = new OpResults(VALUE_SIZE, Math.min(block, MAX_GETS));
        byte[] value = new byte[VALUE_SIZE];
        ByteBuffer vb = ByteBuffer.wrap(value).order(ByteOrder.LITTLE_ENDIAN);
        for (int v0 = 0; v0 < n; v0 += block) {
            batch.clear();
            for (int v = v0; v < Math.min(n, v0 + block); v++) {
                vb.putDouble(0, 1.0 / n).putLong(8, g.outDegree[v]);
                batch.add(OpKind.INSERT, v, value);
            }
            execute(store, batch, results);
        }
        double[] sums = new double[block];
        for (int it = 0; it < iterations; it++) {
            double delta = 0;
            for (int v0 = 0; v0 < n; v0 += block) {
                int v1 = Math.min(n, v0 + block);
                Arrays.fill(sums, 0);
                // GET the in-neighbours' ranks, in batches of at most MAX_GETS.
                batch.clear();
                int[] owner = new int[MAX_GETS];
                for (int v = v0; v < v1; v++) {
                    for (int e = g.inOffsets[v]; e < g.inOffsets[v + 1]; e++) {
                        if (batch.size() == MAX_GETS) {
                            accumulate(store, batch, results, owner, sums);
                            batch.clear();
                        }
                        owner[batch.size()] = v - v0;
                        batch.add(OpKind.GET, g.inSources[e], value);
                    }
                }
                if (batch.size() > 0) {
                    accumulate(store, batch, results, owner, sums);
                }
                // Read the block's old ranks only to report convergence: the update does not need them.
                batch.clear();
                for (int v = v0; v < v1; v++) {
                    double rank = (1 - damping) / n + damping * sums[v - v0];
                    vb.putDouble(0, rank).putLong(8, g.outDegree[v]);
                    batch.add(OpKind.READ_MODIFY_WRITE, v, value);
                }
                execute(store, batch, results);
                for (int i = 0; i < batch.size(); i++) {
                    double old = results.values().asSlice((long) i * VALUE_SIZE, VALUE_SIZE).asByteBuffer()
                            .order(ByteOrder.LITTLE_ENDIAN).getDouble();
                    double now = batch.values().asSlice((long) i * VALUE_SIZE, VALUE_SIZE).asByteBuffer()
                            .order(ByteOrder.LITTLE_ENDIAN).getDouble();
                    delta += Math.abs(now - old);
                }
            }
            if (log != null) {
                log.printf(Locale.ROOT, "  iteration %d: L1 change %.3g%n", it + 1, delta);
            }
        }
        double[] ranks = new double[n];
        for (int v0 = 0; v0 < n; v0 += block) {
            batch.clear();
            for (int v = v0; v < Math.min(n, v0 + block); v++) {
                batch.add(OpKind.GET, v, value);
            }
            execute(store, batch, results);
            for (int i = 0; i < batch.size(); i++) {
                ranks[v0 + i] = results.values().asSlice((long) i * VALUE_SIZE, VALUE_SIZE).asByteBuffer()
                        .order(ByteOrder.LITTLE_ENDIAN).getDouble();
            }
        }
        return ranks;
    }

    private static void accumulate(StoreUnderTest store, OpBatch batch, OpResults results, int[] owner, double[] sums) {
        execute(store, batch, results);
        ByteBuffer b = results.values().asByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < batch.size(); i++) {
            double rank = b.getDouble(i * VALUE_SIZE);
            long degree = b.getLong(i * VALUE_SIZE + 8);
            sums[owner[i]] += rank / degree;
        }
    }

    private static void execute(StoreUnderTest store, OpBatch batch, OpResults results) {
        results.ensureCapacity(batch.size());
        store.execute(batch, results);
        for (int i = 0; i < batch.size(); i++) {
            Outcome o = results.outcome(i);
            if (o == Outcome.NOT_FOUND || o == Outcome.EXISTS) {
                throw new IllegalStateException("vertex rank store answered " + o + " for a " + batch.kind(i));
            }
        }
    }

    /** The same computation on a plain array, in the same order: the ranks the trace run must reproduce. */
    static double[] reference(Graph g, int iterations, double damping, int block) {
        int n = g.vertices;
        double[] rank = new double[n];
        Arrays.fill(rank, 1.0 / n);
        for (int it = 0; it < iterations; it++) {
            for (int v0 = 0; v0 < n; v0 += block) {
                int v1 = Math.min(n, v0 + block);
                double[] sums = new double[v1 - v0];
                for (int v = v0; v < v1; v++) {
                    for (int e = g.inOffsets[v]; e < g.inOffsets[v + 1]; e++) {
                        int u = g.inSources[e];
                        sums[v - v0] += rank[u] / g.outDegree[u];
                    }
                }
                for (int v = v0; v < v1; v++) {
                    rank[v] = (1 - damping) / n + damping * sums[v - v0];
                }
            }
        }
        return rank;
    }
}
