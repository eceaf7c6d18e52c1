package org.gphash.bench.ycsb;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * {@code ./gphash ycsb [load|run|both] [--keep] YCSB-ARGS...}: runs YCSB's own client
 * ({@code site.ycsb.Client}) with the GPHash binding, one forked JVM per phase: YCSB's client ends
 * with {@code System.exit}, and a fresh JVM per phase is also how YCSB is run everywhere else. The
 * load phase creates the pool, the run phase reopens it (so recovery runs in between).
 *
 * <p>Unless the arguments name a pool ({@code -p gphash.path=...}), {@code both} (the default)
 * uses a fresh /dev/shm/gphash-ycsb-PID.pool and deletes it at the end ({@code --keep} keeps it).
 */
public final class YcsbPhases {

    private YcsbPhases() {
    }

    public static void main(String[] args) throws Exception {
        List<String> rest = new ArrayList<>(Arrays.asList(args));
        if (rest.isEmpty() || rest.contains("-h") || rest.contains("--help")) {
            System.out.print("""
                    usage: ./gphash ycsb [load|run|both] [--keep] YCSB-ARGS...

                    Runs YCSB's client (site.ycsb.Client 0.17.0) on the GPHash engine, one JVM per phase.
                    YCSB-ARGS go to the client unchanged, e.g.
                      ./gphash ycsb -P bench-ycsb/workloads/workloada -threads 2 -p recordcount=100000
                    Binding properties (-p): gphash.path, gphash.keysize (8), gphash.valuesize (128),
                    gphash.backend (cpu|gpu), gphash.initialcapacity (default recordcount).
                    Without gphash.path, a fresh pool in /dev/shm is used and deleted afterwards.
                    -p gphash.cluster=MANIFEST runs against a running cluster instead (its nodes hold
                    the data; gphash.coalescing=on merges the client threads' calls into batches).
                    """);
            return;
        }
        String phase = "both";
        if (List.of("load", "run", "both").contains(rest.get(0))) {
            phase = rest.remove(0);
        }
        boolean keep = rest.remove("--keep");
        Path pool = null;
        boolean cluster = rest.stream().anyMatch(a -> a.startsWith(SharedIndex.CLUSTER + "="));
        if (!cluster && rest.stream().noneMatch(a -> a.startsWith(SharedIndex.PATH + "="))) {
            if (!phase.equals("both")) {
                System.err.println("gphash ycsb: a single phase needs -p " + SharedIndex.PATH + "=FILE (the pool to load or run on)");
                System.exit(2);
            }
            Path dir = Files.isWritable(Path.of("/dev/shm")) ? Path.of("/dev/shm") : Path.of(System.getProperty("java.io.tmpdir"));
            pool = dir.resolve("gphash-ycsb-" + ProcessHandle.current().pid() + ".pool");
            rest.add("-p");
            rest.add(SharedIndex.PATH + "=" + pool);
        }
        int status = 0;
        try {
            if (!phase.equals("run")) {
                status = fork("-load", rest);
            }
            if (status == 0 && !phase.equals("load")) {
                status = fork("-t", rest);
            }
        } finally {
            if (pool != null && !keep) {
                deleteQuietly(pool);
            } else if (pool != null) {
                System.err.println("gphash ycsb: kept " + pool);
            }
        }
        System.exit(status);
    }

    /** Runs one phase of YCSB's client in a new JVM with this JVM's options and class path. */
    static int fork(String phaseFlag, List<String> ycsbArgs) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments());
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add("site.ycsb.Client");
        cmd.add(phaseFlag);
        cmd.add("-db");
        cmd.add(GPHashDB.class.getName());
        cmd.addAll(ycsbArgs);
        System.err.println("gphash ycsb: " + (phaseFlag.equals("-load") ? "load" : "run") + " phase: java ... site.ycsb.Client "
                + String.join(" ", cmd.subList(cmd.indexOf("site.ycsb.Client") + 1, cmd.size())));
        Process p = new ProcessBuilder(cmd).inheritIO().start();
        return p.waitFor();
    }

    private static void deleteQuietly(Path p) {
        try {
            Files.deleteIfExists(p);
        } catch (IOException e) {
            System.err.println("gphash ycsb: could not delete " + p + ": " + e.getMessage());
        }
    }
}
