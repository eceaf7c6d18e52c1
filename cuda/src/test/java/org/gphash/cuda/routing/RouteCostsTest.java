package org.gphash.cuda.routing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;

/**
 * The host-or-GPU choice by measured costs, as properties over fake figures: the host is chosen
 * exactly when its estimate is no more than the GPU's figure for the batch's size class; a dearer host
 * or a cheaper GPU never moves a batch to the host; an unmeasured class is bounded by the nearest
 * smaller one measured.
 */
class RouteCostsTest {

    private static RouteCosts measured(long hostNanosPerOp, int gpuBatch, long gpuNanos) {
        RouteCosts c = new RouteCosts(() -> 0);
        c.hostRan(1000, true, 1000 * hostNanosPerOp);
        c.gpuRan(gpuBatch, true, gpuNanos);
        return c;
    }

    @Property(tries = 500)
    void theHostIsChosenExactlyWhenItsEstimateIsNoMoreThanTheGpusFigure(@ForAll @IntRange(min = 1, max = 1 << 18) int n,
                                                                          @ForAll @LongRange(min = 1, max = 20_000) long hostPerOp,
                                                                          @ForAll @LongRange(min = 1_000, max = 50_000_000) long gpu) {
        RouteCosts c = measured(hostPerOp, n, gpu);
        assertEquals((double) hostPerOp * n <= gpu, c.onHost(n, true), "n " + n + ", host " + hostPerOp + " ns/op, GPU " + gpu);
    }

    @Property(tries = 500)
    void aDearerHostOrACheaperGpuNeverMovesABatchToTheHost(@ForAll @IntRange(min = 1, max = 1 << 18) int n,
                                                          @ForAll @LongRange(min = 1, max = 20_000) long hostPerOp,
                                                          @ForAll @LongRange(min = 1_000, max = 50_000_000) long gpu,
                                                          @ForAll @IntRange(min = 2, max = 10) int factor) {
        boolean before = measured(hostPerOp, n, gpu).onHost(n, true);
        if (!before) {
            assertFalse(measured(hostPerOp * factor, n, gpu).onHost(n, true), "a dearer host");
            assertFalse(measured(hostPerOp, n, gpu / factor).onHost(n, true), "a cheaper GPU");
        }
    }

    /** One figure, however far off (a stalled thread), moves an average by at most 3/16 of it; a lasting change is followed. */
    @Property(tries = 300)
    void oneOutlyingFigureMovesAnAverageLittleALastingChangeIsFollowed(@ForAll @LongRange(min = 100, max = 100_000) long perOp,
                                                                    @ForAll @LongRange(min = 1, max = 1_000_000) long factor,
                                                                    @ForAll boolean up) {
        RouteCosts c = new RouteCosts(() -> 0);
        c.gpuRan(64, true, 1_000_000_000_000L);  // a GPU so dear that the host stays the side chosen: its figures averaged
        c.hostRan(64, true, 64 * perOp);
        long outlier = up ? perOp * factor : Math.max(1, perOp / factor);
        c.hostRan(64, true, 64 * outlier);
        double ratio = c.hostEstimate(64, true) / (64.0 * perOp);
        assertTrue(ratio <= 1 + 3.0 / 16 + 1e-9 && ratio >= 1 - 3.0 / 64 - 1e-9, "moved by " + ratio);
        long[] now = {0};
        RouteCosts t = new RouteCosts(() -> now[0]);
        t.gpuRan(64, true, 1_000_000_000_000L);
        t.hostRan(64, true, 64 * perOp);
        for (int i = 0; i < 1000; i++) {  // a figure every 10 ms for 10 s
            now[0] += 10_000_000L;
            t.hostRan(64, true, 64 * outlier);
        }
        assertEquals(64.0 * outlier, t.hostEstimate(64, true), 64.0 * outlier * 0.01, "a lasting change, followed");
    }

    /**
     * Figures weigh the time between them: a burst of many figures (many threads' batches at once, a
     * stretch of cold code) moves an average about as much as the time it lasted would, however many
     * figures it holds (a change that lasts is followed: the property above).
     */
    @Property(tries = 300)
    void aBurstOfFiguresMovesAnAverageByItsTimeNotItsCount(@ForAll @LongRange(min = 100, max = 100_000) long perOp,
                                                         @ForAll @IntRange(min = 10, max = 2_000) int figures,
                                                         @ForAll @IntRange(min = 2, max = 1000) int factor) {
        long[] now = {0};
        RouteCosts c = new RouteCosts(() -> now[0]);
        c.gpuRan(64, true, 1_000_000_000_000L);  // the host stays the side chosen: its figures averaged
        c.hostRan(64, true, 64 * perOp);
        long burst = 20_000_000L;  // 20 ms, a fifth of RouteCosts.AVERAGE_NANOS
        for (int i = 0; i < figures; i++) {
            now[0] += burst / figures;
            c.hostRan(64, true, 64 * perOp * factor);
        }
        // Each figure counts as at most four times the average and weighs at least a 1024th, or its share of 100 ms:
        // the average grows by at most (1 + 3w) a figure, and the weights sum to at most 0.2 + figures / 1024.
        double bound = Math.exp(3 * (0.2 + figures / 1024.0));
        double ratio = c.hostEstimate(64, true) / (64.0 * perOp);
        assertTrue(ratio >= 1 && ratio <= bound * (1 + 1e-9), "moved by " + ratio + " (at most " + bound + ")");
        if (figures <= 200) {
            assertTrue(ratio < 2.5, "a burst of " + figures + " figures in 20 ms moved the average " + ratio + " times");
        }
    }

    /**
     * A batch on the side not chosen replaces that side's figure, however far off the average was: a
     * host figure raised by a slow while comes back with the first re-measure, and a GPU figure too; the
     * side chosen keeps averaging.
     */
    @Property(tries = 300)
    void aFigureOfTheSideNotChosenReplacesItsAverage(@ForAll @LongRange(min = 100, max = 10_000) long hostPerOp,
                                                    @ForAll @IntRange(min = 2, max = 1000) int slowFactor,
                                                    @ForAll @LongRange(min = 50_000, max = 5_000_000) long gpu) {
        int n = 64;
        RouteCosts c = new RouteCosts(() -> 0);
        c.gpuRan(n, true, gpu);
        c.hostRan(n, true, n * hostPerOp * slowFactor);
        for (int i = 0; i < 200; i++) {
            c.hostRan(n, true, n * hostPerOp * slowFactor);
        }
        boolean hostChosen = c.onHost(n, true);
        c.hostRan(n, true, n * hostPerOp);
        if (!hostChosen) {
            assertEquals((double) n * hostPerOp, c.hostEstimate(n, true), 1e-6, "the re-measure's figure, not an average");
        } else {
            assertTrue(c.hostEstimate(n, true) > n * hostPerOp, "the side chosen averages");
        }
        // The same for the GPU: a dear figure averaged while the GPU was chosen, replaced once the host is.
        RouteCosts g = new RouteCosts(() -> 0);
        g.hostRan(n, true, n * hostPerOp);
        g.gpuRan(n, true, 2L * n * hostPerOp);
        assertTrue(g.onHost(n, true));
        g.gpuRan(n, true, 1);
        assertEquals(1.0, g.gpuEstimate(n, true), 1e-9, "replaced: the host was the side chosen");
        assertFalse(g.onHost(n, true));
        g.gpuRan(n, true, 1_000_000_000L);
        assertTrue(g.gpuEstimate(n, true) <= 4.0, "averaged, clamped: the GPU is the side chosen now");
    }

    @Property(tries = 300)
    void anUnmeasuredSizeIsBoundedByTheNearestSmallerOneMeasured(@ForAll @IntRange(min = 2, max = 12) int smallLog2,
                                                                 @ForAll @IntRange(min = 1, max = 6) int gap,
                                                                 @ForAll @LongRange(min = 10_000, max = 1_000_000) long smallNanos) {
        RouteCosts c = new RouteCosts(() -> 0);
        int small = 1 << smallLog2;
        int large = small << gap;
        c.gpuRan(small, true, smallNanos);
        // A host that takes exactly the small batches' GPU time for the large batch: bounded by them, it runs on the host.
        c.hostRan(large, true, smallNanos);
        assertTrue(c.onHost(large, true));
        // A host twice as dear: above the bound, and the class has no figure: the GPU measures it.
        RouteCosts dear = new RouteCosts(() -> 0);
        dear.gpuRan(small, true, smallNanos);
        dear.hostRan(large, true, 2 * smallNanos + large);
        assertFalse(dear.onHost(large, true));
        // A larger class measured does not bound a smaller one.
        RouteCosts above = new RouteCosts(() -> 0);
        above.gpuRan(large, true, 1_000_000_000L);
        above.hostRan(small, true, 2L * (long) RouteCosts.GPU_FLOOR_GUESS_NANOS);
        assertFalse(above.onHost(small, true));
    }

    /**
     * A re-measure runs the next {@link RouteCosts#REMEASURE_BATCHES} batches on the side not chosen,
     * and the last one's figure is the side's: the first, which woke an idle GPU, is not what decides.
     * Batches too large to try on the host stay on the GPU meanwhile; a re-measure whose batches stop
     * coming ends by time.
     */
    @Property(tries = 300)
    void aReMeasureRunsSeveralBatchesAndKeepsTheLastFigure(@ForAll @LongRange(min = 100, max = 2_000) long hostPerOp,
                                                          @ForAll @IntRange(min = 2, max = 20) int coldFactor,
                                                          @ForAll @IntRange(min = 1, max = 4096) int n) {
        long[] now = {0};
        RouteCosts c = new RouteCosts(() -> now[0]);
        long host = n * hostPerOp;
        c.hostRan(n, false, host);
        long warm = host / 2;  // awake, the GPU is the cheaper side
        c.gpuRan(n, false, warm * 100);  // a first figure far off
        assertTrue(c.onHost(n, false));
        now[0] = RouteCosts.remeasureInterval(c.gpuEstimate(n, false));
        for (int i = 0; i < RouteCosts.REMEASURE_BATCHES; i++) {
            assertFalse(c.choose(n, false), "batch " + i + " of the re-measure runs on the GPU");
            // the first batch after a while pays for waking the GPU, the rest do not
            c.gpuRan(n, false, i == 0 ? Math.max(host + 1, warm * coldFactor) : warm);
        }
        assertEquals((double) warm, c.gpuEstimate(n, false), warm / 4.0, "the figure of the GPU awake");
        assertFalse(c.onHost(n, false), "which is cheaper than the host");
        // The other way: a host re-measure whose batches never finish ends by time; large batches never go there.
        RouteCosts d = new RouteCosts(() -> now[0]);
        d.hostRan(64, true, 64 * hostPerOp);
        d.gpuRan(64, true, 1);
        assertFalse(d.onHost(64, true));
        now[0] += RouteCosts.REMEASURE_NANOS;
        assertTrue(d.choose(64, true), "the host measured again");
        assertFalse(d.choose(RouteCosts.REMEASURE_HOST_OPS + 1, true), "never a large batch");
        assertTrue(d.choose(64, true), "still measuring");
        now[0] += RouteCosts.remeasureSpan(d.hostEstimate(64, true));
        assertFalse(d.choose(64, true), "ended by time");
    }
}
