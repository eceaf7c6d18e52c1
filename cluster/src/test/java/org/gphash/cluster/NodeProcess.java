package org.gphash.cluster;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A node as its own JVM ({@code gphash node}, the tool's main class on this test's class path):
 * started, awaited until it serves, killed with SIGKILL or stopped with SIGTERM.
 */
final class NodeProcess implements AutoCloseable {

    /** Hazelcast's access to JDK internals (its startup warns without them; it runs either way). */
    static final List<String> HAZELCAST_OPENS = List.of("--add-modules", "java.se",
            "--add-exports", "java.base/jdk.internal.ref=ALL-UNNAMED",
            "--add-opens", "java.base/java.lang=ALL-UNNAMED",
            "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED",
            "--add-opens", "java.management/sun.management=ALL-UNNAMED",
            "--add-opens", "jdk.management/com.sun.management.internal=ALL-UNNAMED");

    final String name;
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

    /** Starts node {@code name} of the manifest's cluster in {@code dir}; does not wait. */
    static NodeProcess start(Path manifest, String name, Path dir, boolean create, String... more) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xmx512m");
        cmd.add("-XX:+UseSerialGC");
        cmd.add("--enable-native-access=ALL-UNNAMED");
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

    /** Waits until the node serves. */
    NodeProcess awaitServing(long seconds) throws Exception {
        try {
            serving.get(seconds, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            throw new IllegalStateException("node " + name + " did not serve within " + seconds + " s:\n" + output);
        }
        return this;
    }

    /** SIGKILL: no close, no clean leave. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    /** What it printed. */
    String output() {
        return output.toString();
    }

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
