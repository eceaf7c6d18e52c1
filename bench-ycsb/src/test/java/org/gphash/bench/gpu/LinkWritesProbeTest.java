package org.gphash.bench.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The link probe (src/main/cuda/link_writes.cu, docs/BENCHMARKS.md) is a standalone CUDA program that
 * no build step compiles: this keeps it compiling, with the flags the docs give, wherever nvcc is on
 * PATH (or in NVCC), as it is on every build machine. It runs only on the GPU machine.
 */
class LinkWritesProbeTest {

    private static Path nvcc() {
        String given = System.getenv("NVCC");
        if (given != null && !given.isBlank()) {
            return Path.of(given);
        }
        return Stream.of(System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator))
                .filter(d -> !d.isBlank())
                .map(d -> Path.of(d, "nvcc"))
                .filter(Files::isExecutable)
                .findFirst()
                .orElse(null);
    }

    @Test
    void theProbeCompiles(@TempDir Path dir) throws Exception {
        Path nvcc = nvcc();
        Assumptions.assumeTrue(nvcc != null, "no nvcc on PATH");
        Path source = Path.of(Files.isRegularFile(Path.of("src/main/cuda/link_writes.cu"))
                ? "src/main/cuda/link_writes.cu" : "bench-ycsb/src/main/cuda/link_writes.cu");
        Path out = dir.resolve("link_writes");
        Process p = new ProcessBuilder(nvcc.toString(), "-O3", "-gencode", "arch=compute_90,code=sm_90", "-o",
                out.toString(), source.toAbsolutePath().toString()).redirectErrorStream(true).start();
        String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "nvcc took over two minutes");
        assertEquals(0, p.exitValue(), text);
        assertTrue(Files.isExecutable(out), "nvcc made no program: " + text);
    }
}
