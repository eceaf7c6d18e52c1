package org.gphash;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.gphash.index.api.TestPools;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 15: a kill during coalesced traffic from many threads loses nothing acknowledged. A child
 * JVM runs 8 callers through the coalescer (sync, async and batch calls); it is killed with SIGKILL
 * mid-stream; after reopening, every key holds what its thread's acknowledged operations left, or
 * what the one operation that thread had in flight left.
 */
class CoalescedKillTest {

    private static final int THREADS = 8;

    private final TestPools pools = TestPools.create();

    @AfterEach
    void cleanUp() {
        pools.close();
    }

    @Test
    void aKillLosesNoAcknowledgedOperation() throws Exception {
        killAndCheck(pools.pool("k.pool"), Backend.CPU);
    }

    /**
     * The same run for another backend, from a process that has it (the GPU machine's bundle: the
     * GPU test {@code CoalescedGpuKillTest} starts this): exit 0 when every round held.
     *
     * @param args the pool file (on tmpfs), and the backend (cpu or gpu)
     */
    public static void main(String[] args) throws Exception {
        try {
            killAndCheck(Path.of(args[0]), Backend.valueOf(args[1].toUpperCase(java.util.Locale.ROOT)));
            System.out.println("coalesced kill: every round held");
        } catch (Throwable e) {
            e.printStackTrace(System.out);
            System.exit(1);
        }
        System.exit(0);
    }

    /**
     * Three rounds: the child runs the callers on {@code backend}, is killed after more and more
     * acknowledged operations, and the pool (reopened by the CPU engine: pools are interchangeable)
     * must hold, for every key, what its thread's acknowledged operations or its one in-flight
     * operation left.
     */
    static void killAndCheck(Path pool, Backend backend) throws Exception {
        GPHashIndex.builder(pool).backend(backend).valueSize(CoalescedTrafficInChild.VALUE).initialCapacity(1024).create()
                .close();
        for (int round = 0; round < 3; round++) {
            int[] lastAck = runAndKill(pool, backend, 3_000 + 2_000 * round);
            try (GPHashIndex index = GPHashIndex.builder(pool).coalescing(Coalescing.OFF).open()) {
                for (int t = 0; t < THREADS; t++) {
                    List<CoalescedTrafficInChild.Op> ops = CoalescedTrafficInChild.ops(t, lastAck[t] + 2);
                    Map<Long, byte[]> acked = replay(ops, lastAck[t] + 1);
                    Map<Long, byte[]> withInFlight = replay(ops, lastAck[t] + 2);
                    for (int k = 0; k < CoalescedTrafficInChild.KEYS_PER_THREAD; k++) {
                        long key = t * 1000L + k;
                        byte[] v = index.get(key);
                        if (!Arrays.equals(v, acked.get(key)) && !Arrays.equals(v, withInFlight.get(key))) {
                            fail(backend + " round " + round + ", thread " + t + ", key " + key + ": holds a value that "
                                    + "neither its " + (lastAck[t] + 1) + " acknowledged operations nor the one in flight left");
                        }
                    }
                }
            }
        }
    }

    /** State of a thread's keys after its first {@code n} operations. */
    private static Map<Long, byte[]> replay(List<CoalescedTrafficInChild.Op> ops, int n) {
        Map<Long, byte[]> m = new HashMap<>();
        for (int i = 0; i < n; i++) {
            CoalescedTrafficInChild.Op op = ops.get(i);
            if (op.kind() == 3) {
                m.remove(op.key());
            } else {
                m.put(op.key(), CoalescedTrafficInChild.value(op.key(), i));
            }
        }
        return m;
    }

    /** Runs the child until it has acknowledged {@code acks} operations, kills it; the last ack per thread (-1: none). */
    private static int[] runAndKill(Path pool, Backend backend, int acks) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process child = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-Xmx256m", "-cp",
                System.getProperty("java.class.path"), CoalescedTrafficInChild.class.getName(), pool.toString(),
                Integer.toString(THREADS), backend.name()).redirectErrorStream(true).start();
        int[] last = new int[THREADS];
        Arrays.fill(last, -1);
        StringBuilder other = new StringBuilder();
        try (BufferedReader in = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
            int seen = 0;
            String line;
            while (seen < acks && (line = in.readLine()) != null) {
                if (line.startsWith("ACK ")) {
                    String[] f = line.split(" ");
                    last[Integer.parseInt(f[1])] = Integer.parseInt(f[2]);
                    seen++;
                } else {
                    other.append(line).append('\n');
                }
            }
            child.toHandle().destroyForcibly();  // SIGKILL (the handle leaves the pipes open for the rest)
            assertTrue(child.waitFor(30, TimeUnit.SECONDS));
            // Acks written before the kill and not yet read count too: an operation is acknowledged
            // once its line is out, whoever reads it.
            while ((line = in.readLine()) != null) {
                if (line.startsWith("ACK ")) {
                    String[] f = line.split(" ");
                    last[Integer.parseInt(f[1])] = Integer.parseInt(f[2]);
                }
            }
            assertTrue(seen >= acks, "the child stopped early:\n" + other);
        }
        return last;
    }
}
