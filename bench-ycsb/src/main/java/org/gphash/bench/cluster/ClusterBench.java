package org.gphash.bench.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.function.Supplier;
import java.util.stream.Stream;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.GPHashIndex;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.cli.Cli;
import org.gphash.cluster.ClusterManifest;
import org.gphash.cluster.GPHashCluster;
import org.gphash.cluster.NodeProcess;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code gphash bench cluster}: the cluster index against the sharded index in one process, with
 * the same shards, the same keys and the same batches, in one run. Starts the nodes as child JVMs
 * on this host (loopback), loads both, then times batches of gets and of updates at each batch
 * size, and says where the cluster's time per batch goes: the split, the wait for the nodes (and of
 * it, the busiest node's time in its index, and what the same messages cost the transport alone:
 * serialization, copies, the network stack, with nothing run), the merge.
 */
public final class ClusterBench {

    @Command(name = "gphash bench cluster", description = "The cluster index (nodes as child JVMs on this host) against "
            + "the sharded index in one process, same shards, same run.")
    static final class Line {
        @Mixin
        Cli.Help help;
        @Option(names = "--nodes", description = "nodes, one shard each (default ${DEFAULT-VALUE})")
        int nodes = 2;
        @Option(names = "--keys", description = "keys loaded (default ${DEFAULT-VALUE})")
        long keys = 1L << 21;
        @Option(names = "--value-size", description = "bytes per value (default ${DEFAULT-VALUE})")
        int valueSize = 128;
        @Option(names = "--batches", split = ",", description = "batch sizes (default 65536,1048576)")
        int[] batches = {1 << 16, 1 << 20};
        @Option(names = "--seconds", description = "seconds per measurement (default ${DEFAULT-VALUE})")
        double seconds = 4;
        @Option(names = "--node-heap", description = "each node JVM's heap (default ${DEFAULT-VALUE})")
        String nodeHeap = "3g";
        @Option(names = "--dir", description = "where pools go (default /dev/shm, else the temp directory)")
        Path dir;
    }

    private ClusterBench() {
    }

    /**
     * Runs the benchmark.
     *
     * @param args the options (--help)
     */
    public static void main(String[] args) throws Exception {
        Line l;
        try {
            l = Cli.parse(new Line(), args);
            Cli.range("--nodes", l.nodes, 1, ClusterManifest.MAX_NODES);
            for (int b : l.batches) {
                Cli.range("--batches", b, 1, Cli.MAX_BATCH);
            }
        } catch (Cli.UsageException e) {
            System.err.println("gphash bench cluster: " + e.getMessage());
            System.exit(2);
            return;
        }
        if (l.help.requested()) {
            System.out.print(Cli.usage(l));
            return;
        }
        Path base = l.dir != null ? l.dir : Files.isWritable(Path.of("/dev/shm")) ? Path.of("/dev/shm")
                : Path.of(System.getProperty("java.io.tmpdir"));
        Path work = Files.createTempDirectory(base, "gphash-cluster-bench-");
        try {
            run(l, work);
        } finally {
            delete(work);
        }
    }

    /** One measurement: operations per second, and the cluster's stage times per batch (ms), or null in process. */
    private record Figure(double opsPerSecond, double[] stagesMs) {
    }

    private static void run(Line l, Path work) throws Exception {
        System.out.printf(Locale.ROOT, "gphash bench cluster: %d nodes (one CPU shard each) on this host over loopback, "
                + "against a sharded index of %d shards in this process; %,d keys, %d-byte values, %d cores%n",
                l.nodes, l.nodes, l.keys, l.valueSize, Runtime.getRuntime().availableProcessors());
        List<String[]> rows = new ArrayList<>();
        List<Figure[]> inProcess = new ArrayList<>();
        try (GPHashIndex local = GPHashIndex.builder(work.resolve("in-process")).keySize(8).valueSize(l.valueSize)
                .shards(l.nodes).initialCapacity(l.keys).create()) {
            load(local, l);
            for (int b : l.batches) {
                inProcess.add(new Figure[] {measure(local, l, b, OpKind.GET, () -> null), measure(local, l, b, OpKind.UPDATE,
                        () -> null)});
            }
        }
        Path manifestFile = work.resolve("cluster.manifest");
        List<ClusterManifest.Node> nodes = new ArrayList<>();
        for (int i = 0; i < l.nodes; i++) {
            nodes.add(new ClusterManifest.Node("n" + i, "127.0.0.1", freePort()));
        }
        ClusterManifest.create("bench", 8, l.valueSize, nodes).writeNew(manifestFile);
        List<NodeProcess> procs = new ArrayList<>();
        try {
            for (int i = 0; i < l.nodes; i++) {
                procs.add(NodeProcess.start(manifestFile, "n" + i, work.resolve("n" + i), true, l.nodeHeap, "--capacity",
                        Long.toString(l.keys / l.nodes + 1)));
            }
            for (NodeProcess p : procs) {
                p.awaitServing(180);
            }
            try (GPHashIndex cluster = GPHashCluster.client(manifestFile).connect()) {
                load(cluster, l);
                for (int i = 0; i < l.batches.length; i++) {
                    int b = l.batches[i];
                    Supplier<double[]> stages = () -> stagesPerBatch(GPHashCluster.batchStages(cluster, true));
                    Figure get = measure(cluster, l, b, OpKind.GET, stages);
                    Figure update = measure(cluster, l, b, OpKind.UPDATE, stages);
                    // The transport alone for the same bytes: kind and key out, outcome back, and a value
                    // back for a get, out for an update.
                    double echoGet = echoMs(cluster, b, 1 + 8, 1 + l.valueSize);
                    double echoUpdate = echoMs(cluster, b, 1 + 8 + l.valueSize, 1);
                    rows.add(row(b, "get", inProcess.get(i)[0], get, echoGet));
                    rows.add(row(b, "update", inProcess.get(i)[1], update, echoUpdate));
                }
            }
        } finally {
            for (NodeProcess p : procs) {
                p.close();
            }
        }
        System.out.println();
        System.out.println("| batch | operation | in one process (Mops/s) | cluster (Mops/s) | cluster / one process | per batch "
                + "(ms): split | wait for the nodes | busiest node's index time | transport alone | merge |");
        System.out.println("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
        rows.forEach(r -> System.out.println("| " + String.join(" | ", r) + " |"));
    }

    private static String[] row(int batch, String op, Figure local, Figure cluster, double echoMs) {
        double[] s = cluster.stagesMs();
        return new String[] {Integer.toString(batch), op, fmt(local.opsPerSecond() / 1e6), fmt(cluster.opsPerSecond() / 1e6),
                String.format(Locale.ROOT, "%.2fx", cluster.opsPerSecond() / local.opsPerSecond()), fmt(s[0]), fmt(s[1]),
                fmt(s[2]), fmt(echoMs), fmt(s[3])};
    }

    /** The median of five echoes of a batch's messages (after one to warm up), in ms. */
    private static double echoMs(GPHashIndex cluster, int batch, int bytesOut, int bytesBack) {
        GPHashCluster.echo(cluster, batch, bytesOut, bytesBack);
        long[] t = new long[5];
        for (int i = 0; i < t.length; i++) {
            t[i] = GPHashCluster.echo(cluster, batch, bytesOut, bytesBack);
        }
        Arrays.sort(t);
        return t[2] / 1e6;
    }

    private static String fmt(double v) {
        return String.format(Locale.ROOT, v >= 100 ? "%.0f" : v >= 10 ? "%.1f" : "%.2f", v);
    }

    /** Milliseconds per batch of split, wait, the busiest node's index time, merge. */
    private static double[] stagesPerBatch(long[] s) {
        double batches = Math.max(1, s[4]);
        return new double[] {s[0] / batches / 1e6, s[1] / batches / 1e6, s[2] / batches / 1e6, s[3] / batches / 1e6};
    }

    /** Puts keys 0 .. keys-1 in batches of 2^16. */
    private static void load(GPHashIndex index, Line l) {
        byte[] value = new byte[l.valueSize];
        int chunk = 1 << 16;
        Batch b = index.newBatch(chunk);
        BatchResult r = new BatchResult(l.valueSize, chunk);
        for (long k = 0; k < l.keys; k += chunk) {
            b.clear();
            for (long i = k; i < Math.min(l.keys, k + chunk); i++) {
                value[0] = (byte) i;
                b.put(i, value);
            }
            index.execute(b, r);
        }
    }

    /**
     * Batches of {@code kind} on uniform random loaded keys for the time set: a warm-up of a quarter
     * of it first; every outcome checked.
     */
    private static Figure measure(GPHashIndex index, Line l, int size, OpKind kind, Supplier<double[]> stages) {
        SplittableRandom random = new SplittableRandom(size * 31L + kind.ordinal());
        Batch b = index.newBatch(size);
        BatchResult r = new BatchResult(l.valueSize, size);
        byte[] value = new byte[l.valueSize];
        Outcome expected = kind == OpKind.GET ? Outcome.FOUND : Outcome.UPDATED;
        long warmEnd = System.nanoTime() + (long) (l.seconds * 0.25e9);
        while (System.nanoTime() < warmEnd) {
            runOne(index, b, r, random, l, kind, value, expected, size);
        }
        stages.get();
        long ops = 0;
        long t0 = System.nanoTime();
        long end = t0 + (long) (l.seconds * 1e9);
        do {
            ops += runOne(index, b, r, random, l, kind, value, expected, size);
        } while (System.nanoTime() < end);
        double secs = (System.nanoTime() - t0) / 1e9;
        double[] s = stages.get();
        return new Figure(ops / secs, s == null ? new double[4] : s);
    }

    private static int runOne(GPHashIndex index, Batch b, BatchResult r, SplittableRandom random, Line l, OpKind kind,
                              byte[] value, Outcome expected, int n) {
        b.clear();
        for (int i = 0; i < n; i++) {
            long key = random.nextLong(l.keys);
            if (kind == OpKind.GET) {
                b.get(key);
            } else {
                b.update(key, value);
            }
        }
        index.execute(b, r);
        if (r.count(expected) != n) {
            throw new IllegalStateException(kind + ": " + r.count(expected) + " of " + n + " operations were " + expected);
        }
        return n;
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    private static void delete(Path dir) {
        try (Stream<Path> all = Files.walk(dir)) {
            all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
