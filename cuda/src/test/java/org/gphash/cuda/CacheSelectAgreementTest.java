package org.gphash.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Collectors;

import org.gphash.bktcache.loading.TopBuckets;
import org.junit.jupiter.api.Test;

/**
 * BktCache's selection as the kernels compute it (cache/cache_select.cuh: the radix select's digit walk
 * and the admission rule), run on the CPU (cuda/src/test/cuda/cache_select_check.cu, built by nvcc),
 * against the Java reference {@link TopBuckets#select}, without a GPU: random scores of many shapes
 * (few distinct values and many ties, scores spread over all four digits, scores that share their
 * higher digits, caches larger than the accessed buckets, none accessed). A changed digit walk, an
 * off-by-one at the threshold or ties taken past their count, in the CUDA header, fails here in CI
 * (nvcc only; skipped without it). The scan guard's second search is the host's (BucketCache) and
 * is not part of this check.
 */
class CacheSelectAgreementTest {

    private static final HostCheckProgram CHECKER = new HostCheckProgram("cache_select_check");

    @Test
    void theKernelsChooseWhatTheReferenceChooses() throws Exception {
        SplittableRandom random = new SplittableRandom(20261126L);
        List<int[]> loads = new ArrayList<>();
        List<Long> capacities = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            int n = 1 + random.nextInt(300);
            int[] scores = new int[n];
            int shape = i % 5;
            for (int b = 0; b < n; b++) {
                scores[b] = switch (shape) {
                    case 0 -> random.nextInt(4);                                 // few values: ties at every threshold
                    case 1 -> random.nextInt();                                  // all 32 bits, unsigned above 2^31 too
                    case 2 -> 0x12345600 | random.nextInt(3);                    // the higher digits shared
                    case 3 -> random.nextInt(4) == 0 ? 0 : 1 << random.nextInt(32); // powers of two, many unaccessed
                    default -> random.nextInt(1000);
                };
            }
            loads.add(scores);
            capacities.add(i % 97 == 0 ? 0L : 1L + random.nextInt(n + 20));
        }
        loads.add(new int[] {0, 0, 0});
        capacities.add(2L);
        List<String> inputs = new ArrayList<>();
        for (int i = 0; i < loads.size(); i++) {
            inputs.add(capacities.get(i) + " " + Arrays.stream(loads.get(i)).mapToObj(Integer::toUnsignedString)
                    .collect(Collectors.joining(" ")));
        }
        List<String> out = CHECKER.run(inputs);
        for (int i = 0; i < loads.size(); i++) {
            long[] chosen = TopBuckets.select(loads.get(i), capacities.get(i), false, null, null);
            String expected = chosen.length == 0 ? "-"
                    : Arrays.stream(chosen).mapToObj(Long::toString).collect(Collectors.joining(" "));
            assertEquals(expected, out.get(i), "load " + inputs.get(i));
        }
    }
}
