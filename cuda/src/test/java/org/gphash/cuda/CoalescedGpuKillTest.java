package org.gphash.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/**
 * Issue 15's kill during coalesced traffic, on the GPU engine: the index module's
 * {@code CoalescedKillTest} (8 callers through the coalescer, sync, async and batch calls, SIGKILLed
 * three times mid-stream, every acknowledged operation checked) run with the GPU backend, in a
 * process of its own. Its classes come with the GPU machine's bundle
 * ({@code cuda/make-device-bundle.sh} packs the frontend module's test classes); a Maven run of this
 * module does not have them and skips, as it skips without a GPU.
 */
class CoalescedGpuKillTest {

    private static final String KILL_TEST = "org.gphash.CoalescedKillTest";

    @Test
    void aKillDuringCoalescedGpuTrafficLosesNoAcknowledgedOperation() throws Exception {
        GpuTestSupport.assumeGpu();
        boolean present;
        try {
            Class.forName(KILL_TEST);
            present = true;
        } catch (ClassNotFoundException e) {
            present = false;
        }
        assumeTrue(present, KILL_TEST + " is not on the class path (only the device bundle carries it)");
        try (GpuTestSupport t = GpuTestSupport.create()) {
            Path pool = t.pool("coalesced-kill");
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            Process p = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-cp",
                    System.getProperty("java.class.path"), KILL_TEST, pool.toString(), "gpu").redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            p.waitFor(300, TimeUnit.SECONDS);
            System.out.print(out);
            assertEquals(0, p.exitValue(), out);
        }
    }
}
