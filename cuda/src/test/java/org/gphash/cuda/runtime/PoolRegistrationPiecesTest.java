package org.gphash.cuda.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * A copy of a pool range goes in one piece per registration it touches ({@link
 * PoolRegistration#pieceEnd}): a pool grown in place is registered as several adjacent ranges, and
 * CUDA refuses a copy spanning two (an index mirror level loaded after a resize did, on the H200).
 */
class PoolRegistrationPiecesTest {

    /** The pool as first registered (0 to 4096) and two growths in place after it. */
    private static final List<long[]> RANGES = List.of(new long[] {0, 4096}, new long[] {4096, 12288},
            new long[] {12288, 16384});

    @Test
    void aCopyWithinOneRegistrationIsOnePiece() {
        assertEquals(3000, PoolRegistration.pieceEnd(RANGES, 100, 3000));
        assertEquals(12288, PoolRegistration.pieceEnd(RANGES, 4096, 12288));
    }

    @Test
    void aCopyAcrossRegistrationsEndsItsPiecesAtEachBoundary() {
        long end = 14000;
        long from = 1000;
        StringBuilder pieces = new StringBuilder();
        while (from < end) {
            long to = PoolRegistration.pieceEnd(RANGES, from, end);
            pieces.append(from).append('-').append(to).append(' ');
            from = to;
        }
        assertEquals("1000-4096 4096-12288 12288-14000 ", pieces.toString());
    }

    @Test
    void anAddressNoRegistrationHoldsIsRefused() {
        assertThrows(IllegalStateException.class, () -> PoolRegistration.pieceEnd(RANGES, 16384, 17000));
    }
}
