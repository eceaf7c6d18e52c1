package org.gphash.cuda.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** The size classes a small writing batch is laid out for (no GPU needed). */
class SmallWritesLayoutTest {

    @Test
    void aBatchIsLaidOutForThePowerOfTwoFrom16ThatHoldsIt() {
        assertEquals(16, SmallWrites.layoutFor(1, 128));
        assertEquals(16, SmallWrites.layoutFor(16, 128));
        assertEquals(32, SmallWrites.layoutFor(17, 128));
        assertEquals(64, SmallWrites.layoutFor(64, 128));
        assertEquals(128, SmallWrites.layoutFor(65, 128));
        assertEquals(128, SmallWrites.layoutFor(128, 128));
    }

    @Test
    void noClassIsLargerThanTheMostTheTuningSends() {
        assertEquals(8, SmallWrites.layoutFor(5, 8));
        assertEquals(100, SmallWrites.layoutFor(100, 100));
        assertEquals(100, SmallWrites.layoutFor(65, 100));
    }
}
