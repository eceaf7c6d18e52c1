package org.gphash.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

import org.gphash.Backend;
import org.gphash.GPHashIndex;
import org.gphash.shard.ShardedEngine;
import org.gphash.spi.Engine;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A kill during host batches from several threads at once (issue 25): a child JVM's threads each
 * write their own keys in batches of 40,000 (the pipeline's route, run side by side), acknowledging
 * each batch once it returned, and are SIGKILLed mid-stream, twice. After each kill the pool opens
 * (recovery on the GPU engine) with every key of every thread holding a whole value whose version is
 * at least the thread's last acknowledged batch's (the next one may have been in flight at the kill),
 * and verify finds the table sound; the next child's threads go on from versions above those.
 */
class HostBatchesKillTest {

    private static final int THREADS = 4;
    private static final int KEYS = 40_000;

    /**
     * On one pool, and on a sharded index of two shards (issue 30: one per GPU where there are two),
     * whose batches split across the shards: nothing acknowledged is lost on any shard.
     */
    @ParameterizedTest(name = "shards {0}")
    @ValueSource(ints = {0, 2})
    void aKillDuringManyThreadsHostBatchesLosesNoAcknowledgedBatch(int shards) throws Exception {
        GpuTestSupport.assumeGpu();
        try (GpuTestSupport t = GpuTestSupport.create()) {
            Path pool = t.pool("host-batches-kill");
            GPHashIndex.Builder create = GPHashIndex.builder(pool).backend(Backend.GPU).valueSize(HostBatchesInChild.VALUE)
                    .initialCapacity(THREADS * (long) KEYS);
            if (shards > 0) {
                create.devices().shards(shards);
            }
            create.create().close();
            long[] floor = new long[THREADS];  // versions every key of a thread holds at least
            for (int round = 0; round < 2; round++) {
                long[] acked = runAndKill(pool, 6 + 4 * round, floor);
                for (int th = 0; th < THREADS; th++) {
                    floor[th] = Math.max(floor[th], acked[th]);
                }
                try (GPHashIndex index = GPHashIndex.builder(pool).backend(Backend.GPU).open()) {
                    byte[] key = new byte[8];
                    MemorySegment keySegment = MemorySegment.ofArray(key);
                    for (int th = 0; th < THREADS; th++) {
                        long first = HostBatchesInChild.firstKey(th, KEYS);
                        for (int i = 0; i < KEYS; i++) {
                            keySegment.set(ValueLayout.JAVA_LONG_UNALIGNED, 0, first + i);
                            byte[] v = index.get(key);
                            if (floor[th] == 0 && v == null) {
                                continue;  // nothing acknowledged yet for this thread, and its first batch did not land
                            }
                            assertTrue(v != null, "round " + round + ", thread " + th + ": key " + (first + i)
                                    + " lost (acked " + floor[th] + ")");
                            long version = HostBatchesInChild.versionOf(first + i, v);
                            assertTrue(version >= floor[th] && version >= 1,
                                    "round " + round + ", thread " + th + ": key " + (first + i) + " holds version " + version
                                            + " after batch " + floor[th] + " was acknowledged");
                        }
                    }
                    Engine engine = index.engine();
                    int n = engine instanceof ShardedEngine se ? se.shardCount() : 1;
                    assertEquals(Math.max(1, shards), n);
                    for (int s = 0; s < n; s++) {
                        GpuEngine gpu = GpuEngines.gpuEngine(engine instanceof ShardedEngine se ? se.shard(s) : engine);
                        assertTrue(gpu.diagnostics().verify().sound(), "round " + round + ", shard " + s + ": " + gpu.diagnostics().verify());
                    }
                }
            }
        }
    }

    /**
     * Runs the child, its threads starting after versions {@code after}, until {@code acks} batches
     * were acknowledged; kills it. Returns the last acknowledged batch per thread (0: none).
     */
    private static long[] runAndKill(Path pool, int acks, long[] after) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process child = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-Xmx2g", "-cp",
                System.getProperty("java.class.path"), HostBatchesInChild.class.getName(), pool.toString(),
                Integer.toString(THREADS), Integer.toString(KEYS),
                String.join(",", Arrays.stream(after).mapToObj(Long::toString).toList())).redirectErrorStream(true).start();
        long[] last = new long[THREADS];
        StringBuilder other = new StringBuilder();
        try (BufferedReader in = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
            int seen = 0;
            String line;
            while (seen < acks && (line = in.readLine()) != null) {
                if (line.startsWith("ACK ")) {
                    note(line, last);
                    seen++;
                } else {
                    other.append(line).append('\n');
                }
            }
            child.toHandle().destroyForcibly();  // SIGKILL
            assertTrue(child.waitFor(60, TimeUnit.SECONDS));
            // An ack printed before the kill counts, whoever reads it.
            while ((line = in.readLine()) != null) {
                if (line.startsWith("ACK ")) {
                    note(line, last);
                }
            }
            assertEquals(acks, Math.min(acks, seen), "the child stopped early:\n" + other);
        }
        assertTrue(Arrays.stream(last).sum() > 0, "something was acknowledged");
        return last;
    }

    private static void note(String line, long[] last) {
        String[] f = line.split(" ");
        int th = Integer.parseInt(f[1]);
        last[th] = Math.max(last[th], Long.parseLong(f[2]));
    }
}
