package org.gphash.cuda.routing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.lang.foreign.MemorySegment;
import java.util.Random;

import org.gphash.OpKind;
import org.junit.jupiter.api.Test;

/** The eight-at-a-time kind count against a byte-at-a-time one, on random runs and offsets (no GPU needed). */
class KindCountsTest {

    @Test
    void countsEveryKindAsAByteAtATimeCountDoes() {
        Random r = new Random(25);
        int kinds = OpKind.values().length;
        for (int round = 0; round < 500; round++) {
            int size = 1 + r.nextInt(300);
            byte[] b = new byte[size];
            for (int i = 0; i < size; i++) {
                b[i] = (byte) r.nextInt(kinds);
            }
            int first = r.nextInt(size);
            int m = r.nextInt(size - first + 1);
            long[] expected = new long[3];
            for (int i = first; i < first + m; i++) {
                OpKind k = OpKind.values()[b[i]];
                expected[KindCounts.GETS] += k == OpKind.GET ? 1 : 0;
                expected[KindCounts.DELETES] += k == OpKind.DELETE ? 1 : 0;
                expected[KindCounts.RMWS] += k == OpKind.READ_MODIFY_WRITE ? 1 : 0;
            }
            long[] got = new long[3];
            KindCounts.count(MemorySegment.ofArray(b), first, m, got);
            assertArrayEquals(expected, got, "round " + round + ": " + first + "+" + m + " of " + size);
        }
    }
}
