package org.gphash.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

import org.gphash.table.KeyHasher;
import org.gphash.table.TableLayout;
import org.junit.jupiter.api.Test;

/**
 * The kernels' key hash, fingerprint and candidate order (core/key_hash.cuh, probe/candidate_order.cuh) against
 * the Java side's ({@link KeyHasher}, {@link TableLayout#candidateBuckets}), without a GPU: the CUDA
 * headers are {@code __host__ __device__} where they do not read the pool, and nvcc builds a host
 * program from them (cuda/src/test/cuda/key_hash_check.cu). Both sides must reproduce a committed
 * file of known answers, and agree on random inputs; a renumbered constant, a changed seed mix or a
 * swapped candidate in either language fails here. The Java half runs everywhere; the CUDA half
 * needs nvcc (on every build machine with the CUDA toolkit) and skips, saying so, without it.
 */
class CudaAlgorithmAgreementTest {

    private static final String VECTORS = "/key-hash-vectors.txt";
    private static final HostCheckProgram CHECKER = new HostCheckProgram("key_hash_check");

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
        List<String> out = CHECKER.run(inputs);
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
        List<String> out = CHECKER.run(inputs);
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
        return HostCheckProgram.knownAnswers(VECTORS);
    }
}
