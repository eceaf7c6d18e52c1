package org.gphash.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A host program of the tests built by nvcc from the kernels' {@code __host__ __device__} headers
 * (cuda/src/test/cuda/NAME.cu): the way CI checks the CUDA side of an algorithm against the Java
 * side without a GPU. The program reads one input per line and prints one line per input. Built
 * again when any header or its source is newer than the binary; a test using it skips, saying so,
 * where there is no nvcc (NVCC or PATH).
 */
final class HostCheckProgram {

    /** The cuda module's folder: the working directory under Maven, {@code cuda/} from the repository's root (the GPU machine's runs). */
    private static final Path MODULE = Files.isDirectory(Path.of("src/test/cuda")) ? Path.of("") : Path.of("cuda");
    private static final Path HEADERS = MODULE.resolve("src/main/cuda");

    private final Path source;
    private final Path binary;

    HostCheckProgram(String name) {
        this.source = MODULE.resolve("src/test/cuda/" + name + ".cu");
        this.binary = MODULE.resolve("target/test-native/" + name);
    }

    /** Runs the program on the inputs (built first where stale); one output line per input. */
    List<String> run(List<String> inputs) throws Exception {
        String nvcc = nvcc();
        assumeTrue(nvcc != null, "no nvcc here (NVCC or PATH): the CUDA half of " + source.getFileName() + " is skipped");
        if (stale()) {
            Files.createDirectories(binary.getParent());
            Process p = new ProcessBuilder(nvcc, "-std=c++17", "-O2", "-I", HEADERS.toString(), "-o", binary.toString(),
                    source.toString()).redirectErrorStream(true).start();
            String log = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(300, TimeUnit.SECONDS), "nvcc finished");
            assertEquals(0, p.exitValue(), "nvcc built " + source + ":\n" + log);
        }
        Process p = new ProcessBuilder(binary.toAbsolutePath().toString()).redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        Thread feed = Thread.ofPlatform().start(() -> {
            try (var w = p.outputWriter(StandardCharsets.US_ASCII)) {
                for (String line : inputs) {
                    w.write(line);
                    w.write('\n');
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        List<String> out = p.inputReader(StandardCharsets.US_ASCII).lines().toList();
        feed.join();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), source.getFileName() + " finished");
        assertEquals(0, p.exitValue(), source.getFileName() + "'s exit status");
        assertEquals(inputs.size(), out.size(), "one output line per input");
        return out;
    }

    private boolean stale() throws IOException {
        if (!Files.exists(binary)) {
            return true;
        }
        long built = Files.getLastModifiedTime(binary).toMillis();
        try (Stream<Path> sources = Stream.concat(Files.walk(HEADERS), Files.walk(source.getParent()))) {
            return sources.filter(Files::isRegularFile).anyMatch(s -> {
                try {
                    return Files.getLastModifiedTime(s).toMillis() > built;
                } catch (IOException e) {
                    return true;
                }
            });
        }
    }

    /**
     * A committed file of known answers on the test class path: {input, expected output} per line
     * {@code INPUT => OUTPUT}, blank lines and {@code #} comments skipped.
     */
    static List<String[]> knownAnswers(String resource) throws IOException {
        try (java.io.InputStream in = HostCheckProgram.class.getResourceAsStream(resource)) {
            assertTrue(in != null, resource + " is on the test class path");
            List<String[]> out = new java.util.ArrayList<>();
            for (String line : new String(in.readAllBytes(), StandardCharsets.US_ASCII).split("\n")) {
                if (line.isBlank() || line.startsWith("#")) {
                    continue;
                }
                String[] parts = line.split(" => ");
                assertEquals(2, parts.length, "a vector line: " + line);
                out.add(parts);
            }
            return out;
        }
    }

    private static String nvcc() {
        String env = System.getenv("NVCC");
        if (env != null && Files.isExecutable(Path.of(env))) {
            return env;
        }
        for (String dir : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
            Path p = Path.of(dir, "nvcc");
            if (Files.isExecutable(p)) {
                return p.toString();
            }
        }
        return null;
    }
}
