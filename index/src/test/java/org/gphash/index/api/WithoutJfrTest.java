package org.gphash.index.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.gphash.Batch;
import org.gphash.GPHashIndex;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A runtime without the jdk.jfr module (a jlinked image that left it out, like the GPU machine's)
 * creates, resizes, grows and reopens a pool: the engine's JFR events are optional. Runs a child JVM
 * with --limit-modules.
 */
class WithoutJfrTest {

    @TempDir
    Path dir;

    /** The child: a pool created, filled past a resize and a heap growth, reopened; exit 0 when all held. */
    public static void main(String[] args) {
        if (ModuleLayer.boot().findModule("jdk.jfr").isPresent()) {
            System.exit(3);  // the test would prove nothing
        }
        Path pool = Path.of(args[0]);
        try (GPHashIndex index = GPHashIndex.builder(pool).keySize(8).valueSize(64).initialCapacity(64)
                .create()) {
            Batch b = index.newBatch(20_000);
            for (long k = 0; k < 20_000; k++) {
                b.put(k, new byte[64]);
            }
            index.execute(b);
            if (index.stats().resizes() == 0 || index.stats().heapGrowths() == 0) {
                System.exit(4);
            }
        }
        try (GPHashIndex index = GPHashIndex.builder(pool).open()) {
            System.exit(index.size() == 20_000 ? 0 : 5);
        }
    }

    @Test
    void poolsWorkOnARuntimeWithoutJfr() throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process child = new ProcessBuilder(java, "--limit-modules", "java.base,java.logging,jdk.unsupported",
                "--enable-native-access=ALL-UNNAMED", "-Xmx256m", "-cp", System.getProperty("java.class.path"),
                WithoutJfrTest.class.getName(), dir.resolve("nojfr.pool").toString())
                .redirectErrorStream(true).start();
        String out = new String(child.getInputStream().readAllBytes());
        assertTrue(child.waitFor(60, TimeUnit.SECONDS), "the child finished");
        assertEquals(0, child.exitValue(), "child output:\n" + out);
    }
}
