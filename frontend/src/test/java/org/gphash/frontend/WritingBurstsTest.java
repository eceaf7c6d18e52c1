package org.gphash.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

/** The spacing of arrivals that makes a burst of large writing batches. */
class WritingBurstsTest {

    private static final long W = WritingBursts.WINDOW_NANOS;

    @Test
    void partsStartedTogetherAreABurstOnceFourCameBefore() {
        WritingBursts bursts = new WritingBursts();
        long t = 1_000_000_000L;
        StringBuilder verdicts = new StringBuilder();
        for (int i = 0; i < 16; i++) {
            verdicts.append(bursts.arrived(t + i * 2_000L) ? 'T' : 'F');  // 16 parts 2 µs apart
        }
        assertEquals("FFFFTTTTTTTTTTTT", verdicts.toString());
    }

    @Test
    void aSteadyStreamIsNoBurst() {
        WritingBursts bursts = new WritingBursts();
        long t = 1_000_000_000L;
        for (int i = 0; i < 1000; i++) {
            // 16 threads' batches of 5 ms each: arrivals some 0.3 ms apart
            assertFalse(bursts.arrived(t + i * 300_000L), "arrival " + i);
        }
    }

    @Test
    void theWindowsEdge() {
        WritingBursts bursts = new WritingBursts();
        long t = 5_000_000_000L;
        for (int i = 0; i < 4; i++) {
            bursts.arrived(t + i);
        }
        assertTrue(bursts.arrived(t + W), "the fourth before came exactly a window earlier");
        assertFalse(bursts.arrived(t + 1 + W + 1), "the fourth before came just over a window earlier");
    }

    /**
     * Against a plain model: an arrival is in a burst exactly when at least {@code others} came before
     * it and the {@code others}th before it came no more than a window earlier.
     */
    @Property
    void agreesWithTheSortedArrivals(@ForAll @Size(max = 60) java.util.List<@LongRange(min = 0, max = 200_000) Long> gaps,
                                     @ForAll @IntRange(min = 1, max = 6) int others,
                                     @ForAll @LongRange(min = 0, max = 300_000) long window) {
        WritingBursts bursts = new WritingBursts(others, window);
        long[] times = new long[gaps.size()];
        long t = 7_000_000_000L;
        int expectedBursts = 0;
        for (int i = 0; i < times.length; i++) {
            t += gaps.get(i);
            times[i] = t;
            boolean expected = i >= others && t - times[i - others] <= window;
            expectedBursts += expected ? 1 : 0;
            assertEquals(expected, bursts.arrived(t), "arrival " + i + " of " + gaps);
        }
        assertEquals(times.length, bursts.arrivals());
        assertEquals(expectedBursts, bursts.inBursts());
    }

    @Test
    void aRuleOfOneBefore() {
        WritingBursts bursts = new WritingBursts(1, W);
        long t = 1_000_000_000L;
        assertFalse(bursts.arrived(t), "the first");
        assertTrue(bursts.arrived(t + W), "the second, a window after the first");
        assertFalse(bursts.arrived(t + 2 * W + 1), "the third, over a window after the second");
        assertEquals("1 within 50 us", bursts.toString());
    }
}
