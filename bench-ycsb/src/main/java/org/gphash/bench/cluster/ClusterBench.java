package org.gphash.bench.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.function.Supplier;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.GPHashIndex;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.cli.Cli;
import org.gphash.cli.ToolVersion;
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
 * size (batches made before the clock starts, so that execute is what is timed), and says where the
 * cluster's time per batch goes: the split; from sending the messages to the last reply merged (and
 * of it, the busiest node's time in its index, and what the same messages cost the transport alone:
 * serialization, copies, the network stack, with nothing run); the merges (on the common pool as
 * replies arrive, summed).
 */
public final class ClusterBench {

    @Command(versionProvider = ToolVersion.class, name = "gphash bench cluster", description = "The cluster index (nodes as child JVMs on this host) against "
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
        @Option(names = "--backend", description = "the nodes' and the in-process index's backend: cpu, or gpu (node i on "
                + "GPU i; default ${DEFAULT-VALUE})")
        Backend backend = Backend.CPU;
        @Option(names = "--message-ops", description = "most operations per message (default 65536)")
        int messageOps = 1 << 16;
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
        System.out.printf(Locale.ROOT, "gphash bench cluster: %d nodes (one %s shard each) on this host over loopback, "
                + "against a sharded index of %d shards in this process; %,d keys, %d-byte values, messages of up to %,d "
                + "operations, %d cores%n", l.nodes, l.backend, l.nodes, l.keys, l.valueSize, l.messageOps,
                Runtime.getRuntime().availableProcessors());
        List<String[]> rows = new ArrayList<>();
        List<Figure[]> inProcess = new ArrayList<>();
        GPHashIndex.Builder inProcessBuilder = GPHashIndex.builder(work.resolve("in-process")).keySize(8).valueSize(l.valueSize)
                .shards(l.nodes).initialCapacity(l.keys).backend(l.backend);
        if (l.backend == Backend.GPU) {
            inProcessBuilder.devices(IntStream.range(0, l.nodes).toArray());
        }
        try (GPHashIndex local = inProcessBuilder.create()) {
            load(local, l);
            for (int b : l.batches) {
                inProcess.add(new Figure[] {measure(local, l, b, OpKind.GET, () -> null), measure(local, l, b, OpKind.UPDATE,
                        () -> null)});
            }
        }
        Path manifestFile = work.resolve("cluster.manifest");
        ClusterManifest.create("bench", 8, l.valueSize, NodeProcess.onThisHost(l.nodes)).writeNew(manifestFile);
        List<NodeProcess> procs = new ArrayList<>();
        try {
            for (int i = 0; i < l.nodes; i++) {
                List<String> more = new ArrayList<>(List.of("--capacity", Long.toString(l.keys / l.nodes + 1)));
                if (l.backend == Backend.GPU) {
                    more.addAll(List.of("--backend", "gpu", "--devices", Integer.toString(i)));
                }
                procs.add(NodeProcess.start(manifestFile, "n" + i, work.resolve("n" + i), true, l.nodeHeap,
                        more.toArray(String[]::new)));
            }
            for (NodeProcess p : procs) {
                p.awaitServing(180);
            }
            try (GPHashIndex cluster = GPHashCluster.client(manifestFile).messageOps(l.messageOps).connect()) {
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
                + "(ms): split | send to last merged | busiest node's index time | transport alone | merges (summed) |");
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

    /** Batches made before the clock starts, used in turn: the benchmark times execute, not its own generator. */
    private static final int PREBUILT = 4;

    /**
     * Batches of {@code kind} on uniform random loaded keys for the time set: a warm-up of a quarter
     * of it first; every outcome checked.
     */
    private static Figure measure(GPHashIndex index, Line l, int size, OpKind kind, Supplier<double[]> stages) {
        SplittableRandom random = new SplittableRandom(size * 31L + kind.ordinal());
        byte[] value = new byte[l.valueSize];
        Batch[] batches = new Batch[PREBUILT];
        for (int j = 0; j < PREBUILT; j++) {
            batches[j] = index.newBatch(size);
            for (int i = 0; i < size; i++) {
                long key = random.nextLong(l.keys);
                if (kind == OpKind.GET) {
                    batches[j].get(key);
                } else {
                    batches[j].update(key, value);
                }
            }
        }
        BatchResult r = new BatchResult(l.valueSize, size);
        Outcome expected = kind == OpKind.GET ? Outcome.FOUND : Outcome.UPDATED;
        long warmEnd = System.nanoTime() + (long) (l.seconds * 0.25e9);
        int next = 0;
        while (System.nanoTime() < warmEnd) {
            runOne(index, batches[next++ % PREBUILT], r, expected);
        }
        stages.get();
        long ops = 0;
        long t0 = System.nanoTime();
        long end = t0 + (long) (l.seconds * 1e9);
        do {
            ops += runOne(index, batches[next++ % PREBUILT], r, expected);
        } while (System.nanoTime() < end);
        double secs = (System.nanoTime() - t0) / 1e9;
        double[] s = stages.get();
        return new Figure(ops / secs, s == null ? new double[4] : s);
    }

    private static int runOne(GPHashIndex index, Batch b, BatchResult r, Outcome expected) {
        index.execute(b, r);
        int n = b.size();
        if (r.count(expected) != n) {
            throw new IllegalStateException(r.count(expected) + " of " + n + " operations were " + expected);
        }
        return n;
    }

    private static void delete(Path dir) {
        try (Stream<Path> all = Files.walk(dir)) {
            all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
