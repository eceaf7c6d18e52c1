package org.gphash.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 13: a machine without nvcc builds everything but the GPU kernels and says so in one line;
 * {@code -Dgphash.requireKernels=true} makes a missing nvcc an error. Runs {@code build-kernels.sh}
 * itself with nvcc hidden from PATH, so it holds on machines with and without the CUDA toolkit.
 */
class BuildKernelsScriptTest {

    record Run(int code, String out) {
    }

    private static Run script(Path out, String skip, String require) throws IOException, InterruptedException {
        Path script = Path.of(Files.isRegularFile(Path.of("build-kernels.sh")) ? "build-kernels.sh" : "cuda/build-kernels.sh");
        ProcessBuilder pb = new ProcessBuilder("bash", script.toAbsolutePath().toString(),
                script.toAbsolutePath().getParent().resolve("src/main/cuda").toString(), out.toString(), skip, require)
                .redirectErrorStream(true);
        pb.environment().put("PATH", "/usr/bin:/bin");  // no nvcc: the toolkit installs it elsewhere
        pb.environment().remove("NVCC");
        Process p = pb.start();
        String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        return new Run(p.exitValue(), text);
    }

    @Test
    void withoutNvccTheBuildGoesOnWithoutKernelsAndSaysSoInOneLine(@TempDir Path dir) throws Exception {
        org.junit.jupiter.api.Assumptions.assumeFalse(Files.isExecutable(Path.of("/usr/bin/nvcc")),
                "nvcc is in /usr/bin here: it cannot be hidden from PATH");
        Path out = dir.resolve("gphash.fatbin");
        Files.writeString(out, "stale");
        Run r = script(out, "false", "false");
        assertEquals(0, r.code(), r.out());
        List<String> lines = r.out().lines().toList();
        assertEquals(1, lines.size(), r.out());
        assertTrue(lines.get(0).contains("nvcc not found: building without GPU kernels"), r.out());
        assertFalse(Files.exists(out), "a stale fatbin would pretend the kernels match the sources");
    }

    @Test
    void requireKernelsMakesAMissingNvccAnError(@TempDir Path dir) throws Exception {
        org.junit.jupiter.api.Assumptions.assumeFalse(Files.isExecutable(Path.of("/usr/bin/nvcc")));
        Run r = script(dir.resolve("gphash.fatbin"), "false", "true");
        assertEquals(1, r.code(), r.out());
        assertTrue(r.out().contains("requireKernels"), r.out());
    }

    @Test
    void skipKernelsSaysSo(@TempDir Path dir) throws Exception {
        Run r = script(dir.resolve("gphash.fatbin"), "true", "false");
        assertEquals(0, r.code(), r.out());
        assertTrue(r.out().contains("building without GPU kernels"), r.out());
    }
}
