package org.gphash.index;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.gphash.Outcome;
import org.gphash.table.OpStatus;
import org.junit.jupiter.api.Test;

/**
 * The API's outcome codes ({@link Outcome#code()}, written as numbers so that {@code org.gphash} does
 * not depend on this package) are the status bytes the CPU engine writes ({@link OpStatus}); the GPU
 * kernels' are checked against them by SharedConstantsTest.
 */
class OutcomeCodesTest {

    @Test
    void everyOutcomeHasTheCpuEnginesStatusByte() {
        assertEquals(OpStatus.NOT_APPLIED, Outcome.NOT_APPLIED.code());
        assertEquals(OpStatus.FOUND, Outcome.FOUND.code());
        assertEquals(OpStatus.NOT_FOUND, Outcome.NOT_FOUND.code());
        assertEquals(OpStatus.INSERTED, Outcome.INSERTED.code());
        assertEquals(OpStatus.UPDATED, Outcome.UPDATED.code());
        assertEquals(OpStatus.EXISTS, Outcome.EXISTS.code());
        assertEquals(OpStatus.DELETED, Outcome.DELETED.code());
        assertEquals(OpStatus.REPLACED, Outcome.REPLACED.code());
        assertEquals(8, Outcome.values().length, "an outcome added here needs its status byte in OpStatus");
    }

    @Test
    void everyCodeNamesItsOutcome() {
        for (Outcome o : Outcome.values()) {
            assertEquals(o, Outcome.ofCode(o.code()));
        }
    }
}
