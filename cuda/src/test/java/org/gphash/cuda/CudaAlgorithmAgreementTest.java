package org.gphash.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.gphash.index.KeyHasher;
import org.gphash.index.TableLayout;
import org.junit.jupiter.api.Test;

/**
 * The kernels' key hash, fingerprint and candidate order (key_hash.cuh, candidate_order.cuh) against
 * the Java side's ({@link KeyHasher}, {@link TableLayout#candidateBuckets}), without a GPU: the CUDA
 * headers are {@code __host__ __device__} where they do not read the pool, and nvcc builds a host
 * program from them (cuda/src/test/cuda/key_hash_check.cu). Both sides must reproduce a committed
 * file of known answers, and agree on random inputs; a renumbered constant, a changed seed mix or a
 * swapped candidate in either language fails here. The Java half runs everywhere; the CUDA half
 * needs nvcc (on every build machine with the CUDA toolkit) and skips, saying so, without it.
 */
class CudaAlgorithmAgreementTest {

    private static final String VECTORS = "/key-hash-vectors.txt";
    /** The cuda module's folder: the working directory under Maven, {@code cuda/} from the repository's root (the GPU machine's runs). */
    private static final Path MODULE = Files.exists(Path.of("src/test/cuda/key_hash_check.cu")) ? Path.of("") : Path.of("cuda");
    private static final Path SOURCES = MODULE.resolve("src/main/cuda");
    private static final Path CHECKER_SOURCE = MODULE.resolve("src/test/cuda/key_hash_check.cu");
    private static final Path CHECKER = MODULE.resolve("target/test-native/key_hash_check");

    @Test
    void theJavaSideGivesTheKnownAnswers() throws IOException {
        List<String[]> vectors = vectors();
        assertTrue(vectors.size() >= 40, "the known-answer file has its vectors");
        for (String[] v : vectors) {
            assertEquals(v[1], javaLine(v[0]), "Java, input " + v[0]);
        }
    }

    @Test
    void theKernelsCodeGivesTheKnownAnswers() throws Exception {
        List<String[]> vectors = vectors();
        List<String> inputs = vectors.stream().map(v -> v[0]).toList();
        List<String> out = runChecker(inputs);
        for (int i = 0; i < vectors.size(); i++) {
            assertEquals(vectors.get(i)[1], out.get(i), "CUDA (built for the host), input " + inputs.get(i));
        }
    }

    @Test
    void theKernelsCodeAgreesWithJavaOnRandomInputs() throws Exception {
        SplittableRandom random = new SplittableRandom(20261126L);
        List<String> inputs = new ArrayList<>();
        for (int i = 0; i < 3000; i++) {
            byte[] key = new byte[1 + random.nextInt(64)];
            random.nextBytes(key);
            int hashes = 1 + random.nextInt(4);
            int topLog2 = 1 + random.nextInt(40);
            int levels = 1 + random.nextInt(Math.min(6, topLog2 + 1));
            StringBuilder line = new StringBuilder(HexFormat.of().formatHex(key)).append(' ').append(hashes).append(' ')
                    .append(topLog2).append(' ').append(levels);
            for (int j = 0; j < hashes; j++) {
                line.append(' ').append(String.format(Locale.ROOT, "%016x", random.nextLong()));
            }
            inputs.add(line.toString());
        }
        List<String> out = runChecker(inputs);
        for (int i = 0; i < inputs.size(); i++) {
            assertEquals(javaLine(inputs.get(i)), out.get(i), "input " + inputs.get(i));
        }
    }

    /**
     * What the Java side computes for one input line, in the checker's format: the hashes, the
     * fingerprint, then the candidate buckets level by level, numbered across levels (the levels
     * above first: the numbering BktCache and the sub-group probe use).
     */
    private static String javaLine(String input) {
        String[] f = input.split(" ");
        byte[] key = HexFormat.of().parseHex(f[0]);
        int hashes = Integer.parseInt(f[1]);
        int topLog2 = Integer.parseInt(f[2]);
        int levels = Integer.parseInt(f[3]);
        long[] h = new long[hashes];
        StringBuilder out = new StringBuilder();
        for (int j = 0; j < hashes; j++) {
            long seed = Long.parseUnsignedLong(f[4 + j], 16);
            h[j] = KeyHasher.hash(MemorySegment.ofArray(key), 0, key.length, seed);
            out.append(String.format(Locale.ROOT, "%016x ", h[j]));
        }
        out.append(Integer.toHexString(KeyHasher.fingerprint(h[0]))).append(" |");
        TableLayout layout = new TableLayout(topLog2, new long[levels], 0);
        long[] buckets = new long[hashes];
        long above = 0;
        for (int d = 0; d < levels; d++) {
            int n = layout.candidateBuckets(h, hashes, d, buckets);
            for (int i = 0; i < n; i++) {
                out.append(' ').append(Long.toHexString(above + buckets[i]));
            }
            above += layout.bucketsAtDepth(d);
        }
        return out.toString();
    }

    /** The known answers: {input, expected output} per line of the committed file. */
    private static List<String[]> vectors() throws IOException {
        try (InputStream in = CudaAlgorithmAgreementTest.class.getResourceAsStream(VECTORS)) {
            assertTrue(in != null, VECTORS + " is on the test class path");
            List<String[]> out = new ArrayList<>();
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

    /** Builds the host checker with nvcc when its sources are newer (skips the test without nvcc), runs it on the inputs. */
    private static List<String> runChecker(List<String> inputs) throws Exception {
        String nvcc = nvcc();
        assumeTrue(nvcc != null, "no nvcc here (NVCC or PATH): the CUDA half of the algorithm check is skipped");
        if (stale()) {
            Files.createDirectories(CHECKER.getParent());
            Process p = new ProcessBuilder(nvcc, "-std=c++17", "-O2", "-I", SOURCES.toString(), "-o", CHECKER.toString(),
                    CHECKER_SOURCE.toString()).redirectErrorStream(true).start();
            String log = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(300, TimeUnit.SECONDS), "nvcc finished");
            assertEquals(0, p.exitValue(), "nvcc built " + CHECKER_SOURCE + ":\n" + log);
        }
        Process p = new ProcessBuilder(CHECKER.toAbsolutePath().toString()).redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        Thread feed = Thread.ofPlatform().start(() -> {
            try (var w = p.outputWriter(StandardCharsets.US_ASCII)) {
                for (String line : inputs) {
                    w.write(line);
                    w.write('\n');
                }
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        List<String> out = p.inputReader(StandardCharsets.US_ASCII).lines().toList();
        feed.join();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the checker finished");
        assertEquals(0, p.exitValue(), "the checker's exit status");
        assertEquals(inputs.size(), out.size(), "one output line per input");
        return out;
    }

    private static boolean stale() throws IOException {
        if (!Files.exists(CHECKER)) {
            return true;
        }
        long built = Files.getLastModifiedTime(CHECKER).toMillis();
        try (Stream<Path> sources = Stream.concat(Files.walk(SOURCES), Stream.of(CHECKER_SOURCE))) {
            return sources.filter(Files::isRegularFile).anyMatch(s -> {
                try {
                    return Files.getLastModifiedTime(s).toMillis() > built;
                } catch (IOException e) {
                    return true;
                }
            });
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
