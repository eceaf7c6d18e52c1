package org.gphash;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

/**
 * {@link Batch#onlyGets}: one kind that is not a get anywhere, in a batch filled by add or in place,
 * across the pieces it compares (2^16 kinds each) and their last bytes, makes it false; gets only,
 * or nothing, true.
 */
class BatchOnlyGetsTest {

    @Test
    void anyOtherKindAnywhereMakesItFalse() {
        for (int n = 0; n <= 40; n++) {
            for (int other = 0; other < n; other++) {
                Batch b = gets(n);
                assertTrue(b.onlyGets(), "n=" + n);
                b.kinds().set(ValueLayout.JAVA_BYTE, other, (byte) OpKind.DELETE.ordinal());
                assertFalse(b.onlyGets(), "n=" + n + ", a delete at " + other);
            }
        }
        assertTrue(Batch.create(8, 16, 1).onlyGets(), "an empty batch");
    }

    @Test
    void largeBatchesAcrossThePiecesCompared() {
        SplittableRandom random = new SplittableRandom(47);
        int[] sizes = {(1 << 16) - 1, 1 << 16, (1 << 16) + 1, (1 << 17) + 5, 200_000};
        OpKind[] others = {OpKind.PUT, OpKind.INSERT, OpKind.UPDATE, OpKind.DELETE, OpKind.COMPARE_AND_SET};
        for (int n : sizes) {
            Batch b = gets(n);
            assertTrue(b.onlyGets(), "n=" + n);
            int[] at = {0, n - 1, Math.min(n - 1, (1 << 16) - 1), Math.min(n - 1, 1 << 16), random.nextInt(n)};
            for (int p : at) {
                b.kinds().set(ValueLayout.JAVA_BYTE, p, (byte) others[random.nextInt(others.length)].ordinal());
                assertFalse(b.onlyGets(), "n=" + n + ", another kind at " + p);
                b.kinds().set(ValueLayout.JAVA_BYTE, p, (byte) OpKind.GET.ordinal());
                assertTrue(b.onlyGets(), "n=" + n + ", gets again");
            }
        }
    }

    @Test
    void kindsPastTheSizeDoNotCount() {
        Batch b = gets(100);
        b.kinds().set(ValueLayout.JAVA_BYTE, 99, (byte) OpKind.PUT.ordinal());
        b.setSize(99);
        assertTrue(b.onlyGets(), "the put is past the batch's size");
        assertFalse(Batch.create(8, 16, 4).get(1L).put(2L, new byte[16]).onlyGets(), "filled by add");
    }

    /** A batch of {@code n} gets, filled in place. */
    private static Batch gets(int n) {
        Batch b = Batch.create(8, 16, Math.max(1, n));
        b.setSize(n);
        for (int i = 0; i < n; i++) {
            b.kinds().set(ValueLayout.JAVA_BYTE, i, (byte) OpKind.GET.ordinal());
        }
        return b;
    }
}
