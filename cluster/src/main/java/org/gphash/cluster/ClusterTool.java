package org.gphash.cluster;

import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;

import org.gphash.Backend;
import org.gphash.GPHashIndex;
import org.gphash.IndexStats;
import org.gphash.cli.Cli;
import org.gphash.cli.ToolVersion;
import org.gphash.error.GPHashException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code gphash cluster init|status} and {@code gphash node}: write a cluster's manifest, show which
 * shards are served, run a node. Exit codes: 0 done, 1 refused or failed (the reason on stderr), 2 a
 * command line that cannot be run.
 */
public final class ClusterTool {

    private ClusterTool() {
    }

    @Command(versionProvider = ToolVersion.class, name = "gphash cluster init", description = "Write the manifest of a new cluster: node i serves shard i.")
    static final class Init {
        @Mixin
        Cli.Help help;
        @Parameters(index = "0", paramLabel = "MANIFEST", description = "the file to write (refused if it exists)")
        Path file;
        @Option(names = "--name", required = true, description = "the cluster's name")
        String name;
        @Option(names = "--node", required = true, paramLabel = "NAME=HOST:PORT",
                description = "a node and the address its member listens on; once per node, in shard order")
        List<String> nodes = new ArrayList<>();
        @Option(names = "--key-size", description = "bytes per key (default ${DEFAULT-VALUE})")
        int keySize = 8;
        @Option(names = "--value-size", description = "bytes per value (default ${DEFAULT-VALUE})")
        int valueSize = 128;
    }

    @Command(versionProvider = ToolVersion.class, name = "gphash cluster status", description = "Connect as a client and show each shard's node and figures; "
            + "exit 1 when a shard is unavailable.")
    static final class Status {
        @Mixin
        Cli.Help help;
        @Parameters(index = "0", paramLabel = "MANIFEST", description = "the cluster's manifest")
        Path file;
    }

    @Command(versionProvider = ToolVersion.class, name = "gphash node", description = "Run a node of a cluster: open (or --create) its index in DIR and serve "
            + "its shard until stopped (SIGTERM or Ctrl-C close it cleanly).")
    static final class Node {
        @Mixin
        Cli.Help help;
        @Option(names = "--cluster", required = true, paramLabel = "MANIFEST", description = "the cluster's manifest")
        Path manifest;
        @Option(names = "--name", required = true, description = "this node's name in the manifest")
        String name;
        @Option(names = "--dir", required = true, description = "the node's directory (its sharded index)")
        Path dir;
        @Option(names = "--create", description = "create the directory's index when there is none")
        boolean create;
        @Option(names = "--backend", description = "cpu or gpu (default ${DEFAULT-VALUE})")
        Backend backend = Backend.CPU;
        @Option(names = "--local-shards", description = "shard pools of the node's own index when created (default "
                + "${DEFAULT-VALUE}; with --devices, one per device)")
        int localShards = 1;
        @Option(names = "--devices", split = ",", description = "GPU ordinals for the node's shard pools (GPU backend)")
        int[] devices;
        @Option(names = "--capacity", description = "items the node's index is sized for when created (default: the "
                + "builder's)")
        long capacity;
    }

    /**
     * Runs {@code gphash cluster SUBCOMMAND ...} or {@code gphash node ...}.
     *
     * @param args {@code init ...}, {@code status ...} or {@code node ...}
     */
    public static void main(String[] args) {
        System.exit(run(args));
    }

    static int run(String[] args) {
        if (args.length == 0) {
            System.err.println("usage: gphash cluster init|status ... or gphash node ... (--help for each)");
            return 2;
        }
        String[] rest = Arrays.copyOfRange(args, 1, args.length);
        try {
            switch (args[0]) {
                case "init" -> {
                    return init(Cli.parse(new Init(), rest));
                }
                case "status" -> {
                    return status(Cli.parse(new Status(), rest));
                }
                case "node" -> {
                    return node(Cli.parse(new Node(), rest));
                }
                default -> {
                    System.err.println("gphash cluster: unknown command '" + args[0] + "' (init, status; or gphash node)");
                    return 2;
                }
            }
        } catch (Cli.UsageException e) {
            System.err.println(command(args[0]) + ": " + e.getMessage());
            return 2;
        } catch (ClusterRefusedException | ShardsUnavailableException | IllegalArgumentException | UncheckedIOException e) {
            System.err.println(command(args[0]) + ": " + e.getMessage());
            return 1;
        } catch (GPHashException e) {
            // The node's index refused to open (a damaged or foreign pool): its message names the file.
            System.err.println(command(args[0]) + ": " + e.getMessage());
            return 1;
        }
    }

    /** {@return the command's name as the user typed it} */
    private static String command(String first) {
        return first.equals("node") ? "gphash node" : "gphash cluster " + first;
    }

    private static int init(Init o) {
        if (o.help.requested()) {
            System.out.print(Cli.usage(o));
            return 0;
        }
        List<ClusterManifest.Node> nodes = new ArrayList<>();
        o.nodes.forEach(spec -> nodes.add(ClusterManifest.Node.parse(spec)));
        ClusterManifest m = ClusterManifest.create(o.name, o.keySize, o.valueSize, nodes);
        m.writeNew(o.file);
        System.out.println("cluster " + m.name() + ": " + m.shards() + " shards, manifest " + o.file + " (give it to every node "
                + "and client)");
        for (int s = 0; s < m.shards(); s++) {
            System.out.println("  shard " + s + ": node " + m.nodes().get(s).name() + " at " + m.nodes().get(s).address());
        }
        return 0;
    }

    private static int status(Status o) {
        if (o.help.requested()) {
            System.out.print(Cli.usage(o));
            return 0;
        }
        ClusterManifest m = ClusterManifest.read(o.file);
        try (GPHashIndex index = GPHashCluster.client(o.file).connect()) {
            List<Object> all = GPHashCluster.shardStatus(index);
            long items = 0;
            int up = 0;
            for (int s = 0; s < m.shards(); s++) {
                if (all.get(s) instanceof IndexStats st) {
                    up++;
                    items += st.size();
                    System.out.printf("shard %d: node %s at %s, %,d items, %s backend, load factor %.2f%n", s,
                            m.nodes().get(s).name(), m.nodes().get(s).address(), st.size(), st.backend(), st.loadFactor());
                } else {
                    System.out.printf("shard %d: UNAVAILABLE: %s%n", s, all.get(s));
                }
            }
            System.out.printf("cluster %s: %d of %d shards served, %,d items in them%n", m.name(), up, m.shards(), items);
            return up == m.shards() ? 0 : 1;
        }
    }

    private static int node(Node o) {
        if (o.help.requested()) {
            System.out.print(Cli.usage(o));
            return 0;
        }
        ClusterManifest m = ClusterManifest.read(o.manifest);
        ClusterNode.Builder b = ClusterNode.builder(m, o.name, o.dir).create(o.create)
                .localShards(o.devices != null ? o.devices.length : o.localShards)
                .index(i -> {
                    GPHashIndex.Builder x = i.backend(o.backend);
                    if (o.devices != null) {
                        x = x.devices(o.devices);
                    }
                    return o.capacity > 0 ? x.initialCapacity(o.capacity) : x;
                });
        ClusterNode node = b.start();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            node.close();
            stopped.countDown();
        }, "gphash-node-stop"));
        System.out.println("gphash node: serving " + node);
        System.out.flush();
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return 0;
    }
}
