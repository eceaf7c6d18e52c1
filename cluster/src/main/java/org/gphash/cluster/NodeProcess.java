package org.gphash.cluster;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.lang.module.ModuleFinder;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A node as a child JVM on this host ({@code gphash node}: the tool's main class on this JVM's class
 * path), for tests, benchmarks and demos that run a whole cluster on one machine: started, awaited
 * until it serves, killed with SIGKILL or stopped with SIGTERM (a clean close).
 */
public final class NodeProcess implements AutoCloseable {

    /**
     * Hazelcast's access to JDK internals (its startup warns without them; it runs either way), each
     * where this runtime has the module it names (a runtime made by jlink may not).
     */
    static final List<String> HAZELCAST_OPENS = hazelcastOpens();

    private static List<String> hazelcastOpens() {
        ModuleFinder system = ModuleFinder.ofSystem();
        List<String> opts = new ArrayList<>();
        if (system.find("java.se").isPresent()) {
            opts.addAll(List.of("--add-modules", "java.se"));
        }
        String[][] wanted = {{"--add-exports", "java.base/jdk.internal.ref"}, {"--add-opens", "java.base/java.lang"},
            {"--add-opens", "java.base/sun.nio.ch"}, {"--add-opens", "java.management/sun.management"},
            {"--add-opens", "jdk.management/com.sun.management.internal"}};
        for (String[] w : wanted) {
            if (system.find(w[1].substring(0, w[1].indexOf('/'))).isPresent()) {
                opts.addAll(List.of(w[0], w[1] + "=ALL-UNNAMED"));
            }
        }
        return List.copyOf(opts);
    }

    private final String name;
    private final Process process;
    private final StringBuffer output = new StringBuffer();
    private final CompletableFuture<Void> serving = new CompletableFuture<>();

    private NodeProcess(String name, Process process) {
        this.name = name;
        this.process = process;
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    output.append(line).append('\n');
                    if (line.startsWith("gphash node: serving")) {
                        serving.complete(null);
                    }
                }
            } catch (IOException e) {
                // the process went away
            }
            serving.completeExceptionally(new IllegalStateException("node " + name + " exited before it served:\n" + output));
        }, "node-output-" + name);
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * Nodes for a cluster on this host: {@code n0}, {@code n1} ... on 127.0.0.1, each at a port free
     * now (for tests and benchmarks that write a manifest and start the nodes themselves).
     *
     * @param n how many
     * @return the nodes, in shard order
     */
    public static List<ClusterManifest.Node> onThisHost(int n) {
        // Every socket stays open until all ports are taken: a port closed at once may be handed out
        // again to the next one, and two nodes would then share it (ClusterNodeTest saw it).
        List<ClusterManifest.Node> nodes = new ArrayList<>();
        List<ServerSocket> held = new ArrayList<>();
        try {
            for (int i = 0; i < n; i++) {
                ServerSocket s = new ServerSocket(0);
                held.add(s);
                nodes.add(new ClusterManifest.Node("n" + i, "127.0.0.1", s.getLocalPort()));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("no free port on this host: " + e.getMessage(), e);
        } finally {
            for (ServerSocket s : held) {
                try {
                    s.close();
                } catch (IOException ignored) {
                    // the port was only reserved for the count; closing it cannot lose anything
                }
            }
        }
        return nodes;
    }

    /**
     * Starts node {@code name} of the manifest's cluster in {@code dir}; does not wait.
     *
     * @param manifest the cluster's manifest file
     * @param name     the node's name
     * @param dir      its directory
     * @param create   whether to pass --create
     * @param heap     the node JVM's heap (-Xmx), such as "512m"
     * @param more     further options of {@code gphash node}
     * @return the process
     * @throws IOException when it cannot be started
     */
    public static NodeProcess start(Path manifest, String name, Path dir, boolean create, String heap, String... more)
            throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xmx" + heap);
        cmd.add("-XX:+UseSerialGC");
        cmd.add("--enable-native-access=ALL-UNNAMED");
        if (Runtime.version().feature() >= 24) {
            cmd.add("--sun-misc-unsafe-memory-access=allow");  // Hazelcast's buffers; JDK 24 on warns otherwise
        }
        cmd.addAll(HAZELCAST_OPENS);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(ClusterTool.class.getName());
        cmd.add("node");
        cmd.addAll(List.of("--cluster", manifest.toString(), "--name", name, "--dir", dir.toString()));
        if (create) {
            cmd.add("--create");
        }
        cmd.addAll(List.of(more));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        return new NodeProcess(name, p);
    }

    /**
     * Waits until the node serves.
     *
     * @param seconds how long at most
     * @return this process
     * @throws Exception when it exited first (with what it printed) or did not serve in time
     */
    public NodeProcess awaitServing(long seconds) throws Exception {
        try {
            serving.get(seconds, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            throw new IllegalStateException("node " + name + " did not serve within " + seconds + " s:\n" + output);
        }
        return this;
    }

    /**
     * SIGKILL: no close, no clean leave.
     *
     * @throws InterruptedException when interrupted while waiting for it to exit
     */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    /** {@return what it printed} */
    public String output() {
        return output.toString();
    }

    /** Stops the node with SIGTERM (it closes its index cleanly), SIGKILL after 30 s. */
    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            process.destroy();
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        }
    }
}
