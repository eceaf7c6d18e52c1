package org.gphash.cuda.routing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Random;
import java.util.Set;

import org.gphash.Batch;
import org.gphash.cuda.GpuTestSupport;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The host's check that lets a small batch that writes skip grouping: it must never call a run with
 * a repeated key distinct (that would break batch order within the key); it says distinct for runs
 * whose keys are. No GPU needed.
 */
class DistinctKeysTest {

    @ParameterizedTest(name = "keys of {0} bytes")
    @ValueSource(ints = {8, 13, 32})
    void aRepeatIsAlwaysSeenAndDistinctRunsPass(int keySize) {
        Random random = new Random(keySize);
        int distinctSeen = 0;
        for (int round = 0; round < 2000; round++) {
            int n = 1 + random.nextInt(round % 50 == 0 ? 2000 : 42);
            int space = 1 + random.nextInt(round % 2 == 0 ? 50_000 : 2 * n + 1);
            int first = random.nextInt(4);
            Batch b = Batch.create(keySize, 8, first + n);
            Set<Long> keys = new HashSet<>();
            boolean repeats = false;
            for (int i = 0; i < first + n; i++) {
                long k = random.nextInt(space);
                b.get(GpuTestSupport.key(k, keySize));
                if (i >= first) {
                    repeats |= !keys.add(k);
                }
            }
            boolean said = DistinctKeys.test(b, first, n);
            if (repeats) {
                assertFalse(said, "round " + round + ": n=" + n + " repeats=" + repeats);
            } else {
                assertTrue(said, "round " + round + ": " + n + " distinct keys");
                distinctSeen++;
            }
        }
        assertTrue(distinctSeen > 100, "runs of distinct keys were tried: " + distinctSeen);
    }

    @ParameterizedTest(name = "keys of {0} bytes")
    @ValueSource(ints = {8, 3, 17})
    void keysDifferingInOneByteHashApart(int keySize) {
        byte[] a = new byte[keySize];
        byte[] b = a.clone();
        b[keySize - 1] = 1;
        Batch batch = Batch.create(keySize, 8, 2).get(a).get(b);
        assertTrue(DistinctKeys.test(batch, 0, 2));
        assertEquals(false, DistinctKeys.test(Batch.create(keySize, 8, 2).get(a).get(a.clone()), 0, 2));
    }
}
