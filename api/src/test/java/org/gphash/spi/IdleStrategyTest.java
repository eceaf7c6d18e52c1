package org.gphash.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.gphash.spi.IdleStrategy.Phase;
import org.junit.jupiter.api.Test;

class IdleStrategyTest {

    @Test
    void spinsThenYieldsThenParks() {
        IdleStrategy s = new IdleStrategy(2, 3, 1_000);
        assertEquals(Phase.SPIN, s.phase(0));
        assertEquals(Phase.SPIN, s.phase(1));
        assertEquals(Phase.YIELD, s.phase(2));
        assertEquals(Phase.YIELD, s.phase(4));
        assertEquals(Phase.PARK, s.phase(5));
        assertEquals(Phase.PARK, s.phase(Integer.MAX_VALUE));
    }

    @Test
    void theEnginesStrategiesWaitAsTheirCallersNeed() {
        assertEquals(Phase.SPIN, IdleStrategy.BUSY_SPIN.phase(Integer.MAX_VALUE - 1), "the GPU's waits never leave the core");
        assertEquals(Phase.SPIN, IdleStrategy.SPIN_THEN_YIELD.phase((1 << 12) - 1));
        assertEquals(Phase.YIELD, IdleStrategy.SPIN_THEN_YIELD.phase(Integer.MAX_VALUE), "never parks: the wait is short");
        assertEquals(Phase.SPIN, IdleStrategy.SPIN_THEN_PARK.phase(99));
        assertEquals(Phase.PARK, IdleStrategy.SPIN_THEN_PARK.phase(100), "no yields between the spins and the parks");
    }

    @Test
    void negativeSettingsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> new IdleStrategy(-1, 0, 0));
        assertThrows(IllegalArgumentException.class, () -> new IdleStrategy(0, -1, 0));
        assertThrows(IllegalArgumentException.class, () -> new IdleStrategy(0, 0, -1));
    }
}
