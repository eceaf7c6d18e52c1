package org.gphash.cuda.routing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Proxy;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.Outcome;
import org.gphash.PoolFullException;
import org.gphash.spi.Engine;
import org.junit.jupiter.api.Test;

/** Part of a batch run as a batch of its own: its results land in the whole batch's places, also when the pool fills part way. */
class BatchRangesTest {

    private static final int VS = 16;

    /** An engine whose batches insert their first {@code ran} operations and then find the pool full. */
    private static Engine fillsAfter(int ran) {
        return (Engine) Proxy.newProxyInstance(Engine.class.getClassLoader(), new Class<?>[] {Engine.class}, (p, m, args) -> {
            if (!m.getName().equals("execute")) {
                throw new UnsupportedOperationException(m.getName());
            }
            Batch b = (Batch) args[0];
            BatchResult r = (BatchResult) args[1];
            r.reset(b.size());
            for (int i = 0; i < Math.min(ran, b.size()); i++) {
                r.setOutcome(i, Outcome.INSERTED);
            }
            if (ran < b.size()) {
                throw new PoolFullException("pool full", r, null);
            }
            return null;
        });
    }

    private static Batch puts(int n) {
        Batch b = Batch.create(8, VS, n);
        for (int i = 0; i < n; i++) {
            b.put(i, new byte[VS]);
        }
        return b;
    }

    @Test
    void aPartRunsIntoItsPlacesInTheWholeResult() {
        Batch batch = puts(10);
        BatchResult result = new BatchResult(VS, 10);
        result.reset(10);
        BatchRanges.run(fillsAfter(10), batch, 3, 7, result);
        for (int i = 0; i < 10; i++) {
            assertEquals(i >= 3 && i < 7 ? Outcome.INSERTED : Outcome.NOT_APPLIED, result.outcome(i), "operation " + i);
        }
    }

    /**
     * A part that fills the pool: the exception carries the whole batch's result (its contract), the
     * part's outcomes in place and NOT_APPLIED from where it stopped; it carried the part's own result,
     * whose positions its caller could not map, and the whole result kept none of the part's outcomes.
     */
    @Test
    void aPartThatFillsThePoolLeavesItsOutcomesInTheWholeResult() {
        Batch batch = puts(10);
        BatchResult result = new BatchResult(VS, 10);
        result.reset(10);
        for (int i = 0; i < 3; i++) {
            result.setOutcome(i, Outcome.INSERTED);  // ran before the part, as the host route's operations do
        }
        PoolFullException e = assertThrows(PoolFullException.class, () -> BatchRanges.run(fillsAfter(2), batch, 3, 10, result));
        assertSame(result, e.batchResult());
        assertTrue(e.getMessage().contains("operations 3 to 9 of a batch of 10"), e.getMessage());
        for (int i = 0; i < 10; i++) {
            assertEquals(i < 5 ? Outcome.INSERTED : Outcome.NOT_APPLIED, result.outcome(i), "operation " + i);
        }
    }
}
