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

import org.gphash.shard.ShardFunction;
import org.junit.jupiter.api.Test;

/**
 * The CUDA side's shard function (core/shard_hash.cuh, for splitting a batch by shard on the GPU) against
 * the Java side's ({@link ShardFunction}), without a GPU, as {@link CudaAlgorithmAgreementTest} does
 * for the key hash: both reproduce a committed file of known answers and agree on random keys, seeds
 * and shard counts. The CUDA half needs nvcc and skips, saying so, without it.
 */
class ShardHashAgreementTest {

    private static final String VECTORS = "/shard-hash-vectors.txt";
    private static final HostCheckProgram CHECKER = new HostCheckProgram("shard_hash_check");

    @Test
    void theJavaSideGivesTheKnownAnswers() throws IOException {
        List<String[]> vectors = vectors();
        assertTrue(vectors.size() >= 40, "the known-answer file has its vectors");
        for (String[] v : vectors) {
            assertEquals(v[1], javaLine(v[0]), "Java, input " + v[0]);
        }
    }

    @Test
    void theCudaSideGivesTheKnownAnswers() throws Exception {
        List<String[]> vectors = vectors();
        List<String> out = CHECKER.run(vectors.stream().map(v -> v[0]).toList());
        for (int i = 0; i < vectors.size(); i++) {
            assertEquals(vectors.get(i)[1], out.get(i), "CUDA (built for the host), input " + vectors.get(i)[0]);
        }
    }

    @Test
    void theCudaSideAgreesWithJavaOnRandomInputs() throws Exception {
        SplittableRandom random = new SplittableRandom(20261127L);
        List<String> inputs = new ArrayList<>();
        for (int i = 0; i < 3000; i++) {
            byte[] key = new byte[1 + random.nextInt(64)];
            random.nextBytes(key);
            inputs.add(String.format(Locale.ROOT, "%s %016x %d", HexFormat.of().formatHex(key), random.nextLong(),
                    1 + random.nextInt(256)));
        }
        List<String> out = CHECKER.run(inputs);
        for (int i = 0; i < inputs.size(); i++) {
            assertEquals(javaLine(inputs.get(i)), out.get(i), "input " + inputs.get(i));
        }
    }

    /** What the Java side computes for one input line, in the checker's format: "HASH SHARD". */
    private static String javaLine(String input) {
        String[] f = input.split(" ");
        MemorySegment key = MemorySegment.ofArray(HexFormat.of().parseHex(f[0]));
        int size = (int) key.byteSize();
        long seed = Long.parseUnsignedLong(f[1], 16);
        int shards = Integer.parseInt(f[2]);
        return String.format(Locale.ROOT, "%016x %d", ShardFunction.hash(key, 0, size, seed),
                new ShardFunction(seed, shards).shardOf(key, 0, size));
    }

    /** The known answers: {input, expected output} per line of the committed file. */
    private static List<String[]> vectors() throws IOException {
        return HostCheckProgram.knownAnswers(VECTORS);
    }
}
