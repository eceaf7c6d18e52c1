package org.gphash.cuda;

import static org.gphash.cuda.GpuTestSupport.key;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.Outcome;
import org.gphash.RecoveryReport;
import org.gphash.cuda.routing.MirrorChoice;
import org.gphash.table.VerifyReport;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A worker process running GPU batches is killed with SIGKILL while kernels run; the pool is then
 * recovered by the GPU engine and checked: sound (verified by the CPU), and every key holds a whole
 * value at least as new as the last acknowledged round (or is absent only where that round or a
 * later unacknowledged one deleted it).
 */
class KillDuringGpuBatchTest {

    @BeforeEach
    void gpu() {
        GpuTestSupport.assumeGpu();
    }

    @Test
    void killedWorkerLosesNoAcknowledgedRound() throws Exception {
        int keys = 200_000;
        try (GpuTestSupport t = GpuTestSupport.create()) {
            for (int attempt = 0; attempt < 3; attempt++) {
                Path pool = t.pool("kill-" + attempt);
                Path ack = t.pool("ack-" + attempt);
                String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
                List<String> command = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED"));
                if (System.getProperty(MirrorChoice.PROPERTY) != null) {
                    // the suite's run with the mirror forced off kills a worker on the pool path too
                    command.add("-D" + MirrorChoice.PROPERTY + "=" + System.getProperty(MirrorChoice.PROPERTY));
                }
                command.add("-D" + GpuTestSupport.POOL_FORMAT_PROPERTY + "=" + GpuTestSupport.POOL_FORMAT);  // the suite's run in format 3 too
                command.add("-D" + GpuTestSupport.VALUE_SIZE_PROPERTY + "=" + GpuTestSupport.VALUE_SIZE);
                command.addAll(List.of("-cp", System.getProperty("java.class.path"), GpuBatchWorker.class.getName(),
                        pool.toString(), ack.toString(), Integer.toString(keys)));
                Process worker = new ProcessBuilder(command).redirectErrorStream(true).start();
                BufferedReader out = new BufferedReader(new InputStreamReader(worker.getInputStream(), StandardCharsets.UTF_8));
                String line = out.readLine();
                assertEquals("worker ready", line, "the worker started");
                // Let it run a few rounds (each resizes, reclaims, and runs kernels), then kill mid-batch.
                Thread.sleep(1500 + 700L * attempt);
                worker.destroyForcibly();  // SIGKILL
                assertTrue(worker.waitFor(30, TimeUnit.SECONDS));
                List<String> acked = Files.exists(ack) ? Files.readAllLines(ack) : new ArrayList<>();
                long lastAcked = acked.isEmpty() ? 0 : Long.parseLong(acked.getLast().trim());
                try (GpuEngine gpu = GpuEngines.open(GpuTestSupport.config(pool, Backend.GPU, 8, 2, 2, 8, 1024, 61))) {
                    RecoveryReport r = gpu.lastRecovery();
                    assertTrue(!r.previousShutdownClean(), r.toString());
                    VerifyReport v = gpu.diagnostics().verify();
                    assertTrue(v.sound(), "attempt " + attempt + ": " + v);
                    Batch b = Batch.create(8, GpuTestSupport.VALUE_SIZE, keys);
                    for (long k = 0; k < keys; k++) {
                        b.get(key(k, 8));
                    }
                    BatchResult res = new BatchResult(GpuTestSupport.VALUE_SIZE, keys);
                    gpu.execute(b, res);
                    for (int k = 0; k < keys; k++) {
                        if (res.outcome(k) == Outcome.NOT_FOUND) {
                            // Only a delete (every third round, every seventh key) or no round at all explains it.
                            boolean mayBeAbsent = lastAcked == 0
                                    || (k % 7 == 0 && (lastAcked % 3 == 0 || (lastAcked + 1) % 3 == 0));
                            assertTrue(mayBeAbsent, "attempt " + attempt + ": key " + k + " lost after round " + lastAcked);
                            continue;
                        }
                        byte[] v2 = res.value(k);
                        assertTrue(GpuTestSupport.whole(v2), "key " + k + " torn");
                        assertEquals(k, GpuTestSupport.keyOf(v2));
                        long version = GpuTestSupport.versionOf(v2);
                        assertTrue(version >= lastAcked && version <= lastAcked + 1,
                                "attempt " + attempt + ": key " + k + " has round " + version + ", acknowledged " + lastAcked);
                    }
                    System.out.printf("kill attempt %d: %d rounds acknowledged, recovery %s%n", attempt, lastAcked, r);
                }
            }
        }
    }
}
