package org.gphash.cuda.routing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.GpuTuning;
import org.gphash.OpKind;
import org.gphash.cuda.routing.Router.Call;
import org.gphash.cuda.routing.Router.Grouping;
import org.gphash.cuda.routing.Router.Route;
import org.gphash.spi.SubmittedBatch;
import org.junit.jupiter.api.Test;

/**
 * The GPU engine's routes, chosen without a GPU: which route each call gets for each batch, the order
 * routes are tried in and what a declining route leads to (with a fake engine behind
 * {@link Router.Routes}), and the pipeline's per-chunk choices.
 */
class RouterTest {

    private static final int VS = 16;
    /** The GPU's routes: these routers never run a batch on the host. */
    private static final GpuTuning GPU_ONLY = GpuTuning.DEFAULTS.with("hostBatchesMax=0");
    private static final Router MIRROR = new Router(GPU_ONLY, true);
    private static final Router POOL = new Router(GPU_ONLY, false);

    private static byte[] key(long k) {
        byte[] b = new byte[8];
        for (int i = 0; i < 8; i++) {
            b[i] = (byte) (k >>> (8 * i));
        }
        return b;
    }

    /** A batch of {@code n} operations of {@code kind} on keys 0..n-1. */
    private static Batch batch(OpKind kind, int n) {
        Batch b = Batch.create(8, VS, n);
        for (int i = 0; i < n; i++) {
            b.add(kind, key(i), kind.hasValue() ? new byte[VS] : null);
        }
        return b;
    }

    private static Route[] routes(Router r, Call call, Batch b) {
        return r.routes(call, b);
    }

    @Test
    void smallBatchesOfGetsRunOnASlotFirstThenUnderTheLock() {
        assertArrayEquals(new Route[] {Route.SMALL_READS, Route.SMALL_READS_LOCKED}, routes(MIRROR, Call.BATCH, batch(OpKind.GET, 1)));
        int max = GpuTuning.DEFAULTS.smallReadsMax();
        assertArrayEquals(new Route[] {Route.SMALL_READS, Route.SMALL_READS_LOCKED}, routes(MIRROR, Call.BATCH, batch(OpKind.GET, max)));
        assertArrayEquals(new Route[] {Route.PIPELINE}, routes(MIRROR, Call.BATCH, batch(OpKind.GET, max + 1)));
        // A segment of a conditional batch already holds the lock: no route outside it.
        assertArrayEquals(new Route[] {Route.SMALL_READS_LOCKED}, routes(MIRROR, Call.SEGMENT, batch(OpKind.GET, 7)));
    }

    @Test
    void aSingleWriteAmongGetsTakesTheBatchOffTheReadSlots() {
        int gets = GpuTuning.DEFAULTS.smallWritesMax();
        Batch b = batch(OpKind.GET, gets);
        b.add(OpKind.PUT, key(5000), new byte[VS]);
        assertArrayEquals(new Route[] {Route.PIPELINE}, routes(MIRROR, Call.BATCH, b), (gets + 1) + " operations, one a write");
        Batch small = batch(OpKind.GET, 9);
        small.add(OpKind.DELETE, key(5000), null);
        assertArrayEquals(new Route[] {Route.SMALL_WRITES}, routes(MIRROR, Call.BATCH, small), "10 distinct keys, one a delete");
    }

    @Test
    void smallWritingBatchesRunInOneLaunchWhetherKeysRepeatOrNot() {
        for (OpKind kind : new OpKind[] {OpKind.PUT, OpKind.INSERT, OpKind.UPDATE, OpKind.DELETE, OpKind.READ_MODIFY_WRITE}) {
            assertArrayEquals(new Route[] {Route.SMALL_WRITES}, routes(MIRROR, Call.BATCH, batch(kind, 1)), kind.name());
            int max = GpuTuning.DEFAULTS.smallWritesMax();
            assertArrayEquals(new Route[] {Route.SMALL_WRITES}, routes(MIRROR, Call.BATCH, batch(kind, max)), kind.name());
            assertArrayEquals(new Route[] {Route.PIPELINE}, routes(MIRROR, Call.BATCH, batch(kind, max + 1)), kind.name());
        }
        Batch repeated = batch(OpKind.PUT, 5);
        repeated.add(OpKind.DELETE, key(3), null);
        assertArrayEquals(new Route[] {Route.SMALL_WRITES}, routes(MIRROR, Call.BATCH, repeated), "a key repeats: grouped in the launch");
        assertArrayEquals(new Route[] {Route.SMALL_WRITES}, routes(MIRROR, Call.SEGMENT, batch(OpKind.UPDATE, 3)));
    }

    @Test
    void thePipelinesSmallWritingRunsTakeOneLaunchUpToTheSameLimit() {
        int max = GpuTuning.DEFAULTS.smallWritesMax();
        assertTrue(Router.writesInOneLaunch(1, true, max));
        assertTrue(Router.writesInOneLaunch(max, true, max));
        assertFalse(Router.writesInOneLaunch(max + 1, true, max), "larger runs are staged");
        assertFalse(Router.writesInOneLaunch(max, false, max), "reads are the small reads' or the staged pipeline's");
        assertFalse(Router.writesInOneLaunch(0, true, max));
        assertFalse(Router.writesInOneLaunch(1, true, 0), "0 turns it off");
    }

    @Test
    void conditionalBatchesRunInSegmentsWhoseBatchesRouteUnderTheLock() {
        Batch b = batch(OpKind.GET, 3);
        b.compareAndSet(key(1), new byte[VS], new byte[VS]);
        assertArrayEquals(new Route[] {Route.CONDITIONAL}, routes(MIRROR, Call.BATCH, b));
        assertArrayEquals(new Route[] {Route.CONDITIONAL}, routes(POOL, Call.BATCH, b));
        assertThrows(IllegalArgumentException.class, () -> MIRROR.routes(Call.SEGMENT, b));
    }

    /**
     * Values of any length (a format 3 pool's, packed batches): every plain batch, small or large, takes
     * the packed route (the others copy places of the value size), a conditional one compares on the
     * host and its segments take the packed route, no part runs in place, and single gets run on the
     * host (whose read gives the length) even where writes run on the GPU. A router off the mirror
     * never answers for values of any length.
     */
    @Test
    void batchesOfValuesOfAnyLengthTakeThePackedRoute() {
        Router lengths = new Router(GPU_ONLY, true, true);
        assertTrue(lengths.valueLengths());
        assertFalse(new Router(GPU_ONLY, false, true).valueLengths(), "the pool path runs values of the value size");
        for (int n : new int[] {1, 5, 300, 5000}) {
            for (OpKind kind : new OpKind[] {OpKind.GET, OpKind.PUT, OpKind.DELETE}) {
                Batch b = Batch.create(8, VS, n, true);
                for (int i = 0; i < n; i++) {
                    b.add(kind, key(i), kind.hasValue() ? new byte[i % (VS + 1)] : null);
                }
                assertArrayEquals(new Route[] {Route.PACKED}, routes(lengths, Call.BATCH, b), n + " " + kind);
                assertArrayEquals(new Route[] {Route.PACKED}, routes(lengths, Call.SEGMENT, b), n + " " + kind);
                assertFalse(lengths.runsInPlace(b, n), "a packed part is copied out");
            }
        }
        Batch conditional = Batch.create(8, VS, 2, true).put(key(1), new byte[3]);
        conditional.compareAndSet(key(1), new byte[3], new byte[5]);
        assertArrayEquals(new Route[] {Route.CONDITIONAL}, routes(lengths, Call.BATCH, conditional));
        assertTrue(lengths.singleGetsOnHost(), "hostBatchesMax=0 sends writes to the GPU; gets of any length stay on the host");
        assertFalse(MIRROR.singleGetsOnHost());
        assertArrayEquals(new Route[] {Route.HOST}, routes(lengths, Call.SINGLE_GET, batch(OpKind.GET, 1)));
        RouteCosts costs = new RouteCosts(() -> 0);
        costs.hostRan(100, true, 100 * 1_000L);  // 1 µs a write on the host
        costs.gpuRan(64, true, 80_000);  // 80 µs a writing batch on the GPU
        Router withHost = new Router(GpuTuning.DEFAULTS, true, true, costs);
        Batch small = Batch.create(8, VS, 4, true).put(key(1), new byte[2]);
        assertArrayEquals(new Route[] {Route.HOST, Route.PACKED}, routes(withHost, Call.BATCH, small),
                "cheaper on the host: there first, the packed route where the host declines");
    }

    @Test
    void aShardsPartRunsInPlaceOnlyOnTheMirrorForPlainOperationsAndPartsThePipelineWouldRun() {
        int small = Math.max(GpuTuning.DEFAULTS.smallReadsMax(), GpuTuning.DEFAULTS.smallWritesMax());
        Batch gets = batch(OpKind.GET, small + 100);
        assertTrue(MIRROR.runsInPlace(gets, small + 1));
        assertFalse(MIRROR.runsInPlace(gets, small), "a small part runs by the one-launch routes, copied out");
        assertFalse(POOL.runsInPlace(gets, small + 1), "the pool path runs no part in place");
        Batch conditional = batch(OpKind.PUT, small + 100);
        conditional.compareAndSet(key(1), new byte[VS], new byte[VS]);
        assertFalse(MIRROR.runsInPlace(conditional, small + 1), "conditional operations compare on the host");
    }

    @Test
    void deviceBatchesOfGetsUpToTheSmallReadsLimitRunInOneLaunchOnTheMirror() {
        int max = GpuTuning.DEFAULTS.smallReadsMax();
        assertTrue(MIRROR.runsDeviceGetsInOneLaunch(1, true));
        assertTrue(MIRROR.runsDeviceGetsInOneLaunch(max, true));
        assertFalse(MIRROR.runsDeviceGetsInOneLaunch(max + 1, true), "larger batches take the pipeline");
        assertFalse(MIRROR.runsDeviceGetsInOneLaunch(8, false), "a batch that is not all gets takes the pipeline");
        assertFalse(MIRROR.runsDeviceGetsInOneLaunch(0, true));
        assertFalse(POOL.runsDeviceGetsInOneLaunch(8, true), "the pool path has no one-launch route");
        Router none = new Router(GPU_ONLY.with("smallReadsMax=0"), true);
        assertFalse(none.runsDeviceGetsInOneLaunch(1, true), "smallReadsMax=0 turns the one-launch reads off");
    }

    @Test
    void withoutTheMirrorEveryBatchTakesThePoolPath() {
        for (Batch b : List.of(batch(OpKind.GET, 1), batch(OpKind.GET, 5000), batch(OpKind.PUT, 3), batch(OpKind.DELETE, 100))) {
            assertArrayEquals(new Route[] {Route.POOL_PATH}, routes(POOL, Call.BATCH, b));
            assertArrayEquals(new Route[] {Route.POOL_PATH}, routes(POOL, Call.SEGMENT, b));
        }
        assertFalse(POOL.mirror());
        assertTrue(MIRROR.mirror());
    }

    @Test
    void aSingleGetIsAHostReadFirst() {
        Batch one = batch(OpKind.GET, 1);
        assertArrayEquals(new Route[] {Route.HOST_READ, Route.SMALL_READS, Route.SMALL_READS_LOCKED},
                routes(MIRROR, Call.SINGLE_GET, one));
        assertArrayEquals(new Route[] {Route.HOST_READ, Route.POOL_PATH}, routes(POOL, Call.SINGLE_GET, one));
        assertArrayEquals(new Route[] {Route.HOST_READ}, routes(MIRROR, Call.GET_AT_ONCE, one));
        assertArrayEquals(new Route[] {Route.HOST_READ}, routes(POOL, Call.GET_AT_ONCE, one));
        Router noSlots = new Router(GPU_ONLY.with("smallReadsMax=0"), true);
        assertArrayEquals(new Route[] {Route.HOST_READ, Route.PIPELINE}, routes(noSlots, Call.SINGLE_GET, one));
    }

    @Test
    void theTuningTurnsShortcutsOff() {
        Router none = new Router(GPU_ONLY.with("smallReadsMax=0,smallWritesMax=0"), true);
        assertArrayEquals(new Route[] {Route.PIPELINE}, routes(none, Call.BATCH, batch(OpKind.GET, 4)));
        assertArrayEquals(new Route[] {Route.PIPELINE}, routes(none, Call.BATCH, batch(OpKind.PUT, 4)));
        Router narrow = new Router(GPU_ONLY.with("smallReadsMax=8,smallWritesMax=4"), true);
        assertEquals(Route.SMALL_READS, routes(narrow, Call.BATCH, batch(OpKind.GET, 8))[0]);
        assertEquals(Route.PIPELINE, routes(narrow, Call.BATCH, batch(OpKind.GET, 9))[0]);
        assertEquals(Route.SMALL_WRITES, routes(narrow, Call.BATCH, batch(OpKind.PUT, 4))[0]);
        assertEquals(Route.PIPELINE, routes(narrow, Call.BATCH, batch(OpKind.PUT, 5))[0]);
    }

    @Test
    void anEmptyBatchGoesUnderTheLockWhereTheEngineChecksItIsOpen() {
        assertArrayEquals(new Route[] {Route.PIPELINE}, routes(MIRROR, Call.BATCH, Batch.create(8, VS, 1)));
        assertArrayEquals(new Route[] {Route.POOL_PATH}, routes(POOL, Call.BATCH, Batch.create(8, VS, 1)));
    }

    /** Every route of every call: the shortcuts only ever get batches within their limits. */
    @Test
    void randomBatchesRouteWithinEachShortcutsLimits() {
        Random random = new Random(25);
        Set<Route> seen = EnumSet.noneOf(Route.class);
        for (int round = 0; round < 3000; round++) {
            GpuTuning tuning = new GpuTuning(random.nextInt(64), 1, random.nextInt(100), 32, 1024, true, false, 0);
            Router router = new Router(tuning, round % 5 != 0);
            int n = random.nextInt(80);
            int space = 1 + random.nextInt(round % 2 == 0 ? 10 : 10_000);
            Batch b = Batch.create(8, VS, Math.max(1, n));
            boolean allGets = true;
            double writeShare = random.nextInt(3) / 4.0;
            for (int i = 0; i < n; i++) {
                int k = random.nextInt(space);
                OpKind kind = random.nextDouble() < writeShare ? OpKind.PUT : OpKind.GET;
                b.add(kind, key(k), kind.hasValue() ? new byte[VS] : null);
                allGets &= kind == OpKind.GET;
            }
            Route[] rs = router.routes(Call.BATCH, b);
            seen.add(rs[0]);
            String what = "round " + round + ": n=" + n + " " + tuning + " mirror " + router.mirror();
            if (!router.mirror()) {
                assertArrayEquals(new Route[] {Route.POOL_PATH}, rs, what);
                continue;
            }
            boolean smallReads = n >= 1 && n <= tuning.smallReadsMax() && allGets;
            boolean smallWrites = !smallReads && n >= 1 && n <= tuning.smallWritesMax() && !allGets;
            Route expected = smallReads ? Route.SMALL_READS : smallWrites ? Route.SMALL_WRITES : Route.PIPELINE;
            assertEquals(expected, rs[0], what);
            assertTrue(rs[rs.length - 1].locked, what + ": the last route runs under the lock and so never declines");
        }
        assertEquals(EnumSet.of(Route.SMALL_READS, Route.SMALL_WRITES, Route.PIPELINE, Route.POOL_PATH), seen);
    }

    /** A fake engine: each route declines while its count of refusals lasts, and every call is recorded. */
    private static final class FakeEngine implements Router.Routes {
        final List<Route> ran = new ArrayList<>();
        final EnumSet<Route> declining = EnumSet.noneOf(Route.class);

        @Override
        public SubmittedBatch run(Route route, Batch batch, BatchResult result) {
            ran.add(route);
            return declining.contains(route) ? null : SubmittedBatch.DONE;
        }
    }

    @Test
    void runTriesRoutesInOrderUntilOneRuns() {
        Batch gets = batch(OpKind.GET, 10);
        BatchResult result = new BatchResult(VS, 10);
        FakeEngine engine = new FakeEngine();
        assertSame(SubmittedBatch.DONE, MIRROR.run(Call.BATCH, gets, result, engine));
        assertEquals(List.of(Route.SMALL_READS), engine.ran, "a free slot: nothing else runs");

        engine.ran.clear();
        engine.declining.add(Route.SMALL_READS);
        assertSame(SubmittedBatch.DONE, MIRROR.run(Call.BATCH, gets, result, engine));
        assertEquals(List.of(Route.SMALL_READS, Route.SMALL_READS_LOCKED), engine.ran, "every slot busy: under the lock");

        engine.ran.clear();
        engine.declining.add(Route.HOST_READ);
        Batch one = batch(OpKind.GET, 1);
        assertSame(SubmittedBatch.DONE, MIRROR.run(Call.SINGLE_GET, one, result, engine));
        assertEquals(List.of(Route.HOST_READ, Route.SMALL_READS, Route.SMALL_READS_LOCKED), engine.ran);

        engine.ran.clear();
        assertNull(MIRROR.run(Call.GET_AT_ONCE, one, result, engine), "a get at once that cannot run now is not run");
        assertEquals(List.of(Route.HOST_READ), engine.ran);
    }

    @Test
    void aRouteUnderTheLockThatDeclinesIsAnError() {
        FakeEngine engine = new FakeEngine();
        engine.declining.add(Route.PIPELINE);
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> MIRROR.run(Call.BATCH, batch(OpKind.PUT, 5000), new BatchResult(VS, 5000), engine));
        assertTrue(e.getMessage().contains("PIPELINE"), e.getMessage());
    }

    @Test
    void chunksOfWritesGroupByKeyUnlessDistinctAndReadsFollowTheLastSample() {
        assertEquals(Grouping.NONE, Router.grouping(true, true, true));
        assertEquals(Grouping.NONE, Router.grouping(true, true, false));
        assertEquals(Grouping.BY_KEY, Router.grouping(true, false, false));
        assertEquals(Grouping.BY_KEY, Router.grouping(true, false, true));
        assertEquals(Grouping.NONE, Router.grouping(false, false, false));
        assertEquals(Grouping.AS_SAMPLED, Router.grouping(false, false, true));
        assertTrue(MIRROR.checksDistinct(1));
        assertTrue(MIRROR.checksDistinct(32));
        assertFalse(MIRROR.checksDistinct(33));
        assertFalse(MIRROR.checksDistinct(0));
        assertFalse(new Router(GPU_ONLY.with("distinctWritesMax=0"), true).checksDistinct(1));
    }

    @Test
    void valuesGoStraightIntoAPinnedResultOnlyForUngroupedReads() {
        assertTrue(Router.valuesInPlace(true, true, false, false));
        assertFalse(Router.valuesInPlace(false, true, false, false), "an unpinned result");
        assertFalse(Router.valuesInPlace(true, false, false, false), "nothing read");
        assertFalse(Router.valuesInPlace(true, true, true, false), "the chunk writes");
        assertFalse(Router.valuesInPlace(true, true, false, true), "the last reads repeated their keys");
    }

    // ------------------------------------------------------------------ host or GPU, by measured cost (fake figures)

    /** A router over the defaults (the host allowed) whose costs are the figures given. */
    private static Router measured(RouteCosts costs, boolean mirror) {
        return new Router(GpuTuning.DEFAULTS, mirror, costs);
    }

    @Test
    void aBatchRunsOnTheHostWhereItsMeasuredCostThereIsNoHigherThanOnTheGpu() {
        long[] now = {0};
        RouteCosts costs = new RouteCosts(() -> now[0]);
        costs.hostRan(100, true, 100 * 1_000L);  // 1 µs a write on the host
        costs.hostRan(100, false, 100 * 200L);  // 200 ns a get
        costs.gpuRan(64, true, 80_000);  // 80 µs a writing batch of 33..64
        costs.gpuRan(1024, true, 300_000);  // 300 µs a batch of 513..1024, writing or not
        costs.gpuRan(1024, false, 300_000);
        costs.gpuRan(16384, false, 2_000_000);  // 2 ms a batch of 8193..16384 gets
        Router r = measured(costs, true);
        assertArrayEquals(new Route[] {Route.HOST, Route.SMALL_WRITES}, routes(r, Call.BATCH, batch(OpKind.PUT, 64)),
                "64 µs on the host against 80 on the GPU");
        assertArrayEquals(new Route[] {Route.SMALL_WRITES}, routes(r, Call.BATCH, batch(OpKind.PUT, 1024)),
                "1024 µs on the host against 300 on the GPU");
        assertTrue(r.prefersHost(batch(OpKind.PUT, 64)));
        assertFalse(r.prefersHost(batch(OpKind.PUT, 1024)));
        assertTrue(r.prefersHost(batch(OpKind.GET, 1024)));
        assertArrayEquals(new Route[] {Route.HOST, Route.SMALL_READS, Route.SMALL_READS_LOCKED},
                routes(r, Call.BATCH, batch(OpKind.GET, 1024)), "205 µs of gets on the host against 300");
        assertArrayEquals(new Route[] {Route.PIPELINE}, routes(r, Call.BATCH, batch(OpKind.GET, 16384)), "3.3 ms against 2");
        assertArrayEquals(new Route[] {Route.HOST, Route.POOL_PATH}, routes(measured(costs, false), Call.BATCH, batch(OpKind.PUT, 64)));
        // The GPU got slower (other threads' batches queue ahead): the same size moves to the host.
        for (int i = 0; i < 200; i++) {  // for two seconds
            now[0] += 10_000_000L;
            costs.gpuRan(1024, true, 3_000_000);
        }
        // (Two seconds on, the GPU is due to be measured again: the choice without that.)
        assertTrue(r.prefersHost(batch(OpKind.PUT, 1024)));
    }

    @Test
    void beforeAnyFigureSmallBatchesMeasureTheHostAndUnmeasuredSizesMeasureTheGpu() {
        RouteCosts costs = new RouteCosts(() -> 0);
        Router r = measured(costs, true);
        int first = RouteCosts.FIRST_HOST_OPS;
        assertEquals(Route.HOST, routes(r, Call.BATCH, batch(OpKind.PUT, first))[0]);
        assertNotEquals(Route.HOST, routes(r, Call.BATCH, batch(OpKind.PUT, first + 1))[0]);
        costs.hostRan(10, true, 10 * 500L);  // 500 ns a write
        // No GPU figure: below the guess at one launch (20 µs), 40 writes run on the host; 41 go to the GPU.
        assertEquals(Route.HOST, routes(r, Call.BATCH, batch(OpKind.PUT, 40))[0]);
        assertArrayEquals(new Route[] {Route.SMALL_WRITES}, routes(r, Call.BATCH, batch(OpKind.PUT, 41)));
        costs.gpuRan(2, true, 50_000);  // writing batches of 2: 50 µs
        assertEquals(Route.HOST, routes(r, Call.BATCH, batch(OpKind.PUT, 100))[0],
                "50 µs on the host, no more than the GPU's smaller batches take");
        assertArrayEquals(new Route[] {Route.SMALL_WRITES}, routes(r, Call.BATCH, batch(OpKind.PUT, 101)),
                "its size class has no GPU figure: the GPU measures it");
        costs.gpuRan(1 << 20, true, 5_000_000);  // a large batch measured does not bound the small ones
        assertArrayEquals(new Route[] {Route.SMALL_WRITES}, routes(r, Call.BATCH, batch(OpKind.PUT, 101)));
        assertTrue(costs.toString().contains("<=2:50000"), costs.toString());
    }

    /**
     * The host's first operations of a kind (its code loaded and compiled meanwhile) are not timed:
     * batches up to FIRST_HOST_OPS run on the host until it has a figure from warm operations.
     */
    @Test
    void theHostsFirstOperationsWarmItUpUntimed() {
        long[] now = {0};
        RouteCosts costs = new RouteCosts(() -> now[0], 1000, 50);
        costs.gpuRan(64, true, 100_000);  // 100 µs a writing batch of 64
        Router r = measured(costs, true);
        costs.hostRan(600, true, 600 * 800_000L);  // cold: 800 µs a write
        costs.hostRan(400, true, 400 * 800_000L);
        assertTrue(Double.isNaN(costs.hostEstimate(64, true)), "1000 operations warmed the host, untimed");
        assertEquals(Route.HOST, routes(r, Call.BATCH, batch(OpKind.PUT, 64))[0], "still no figure: the host runs it");
        now[0] = 49;
        costs.hostRan(64, true, 64 * 800_000L);
        assertTrue(Double.isNaN(costs.hostEstimate(64, true)), "and for 50 ns (here) since its first batch, untimed");
        now[0] = 50;
        costs.hostRan(64, true, 64 * 1_000L);  // warm: 1 µs a write
        assertEquals(1_000 * 64, costs.hostEstimate(64, true), 1e-9);
        assertEquals(Route.HOST, routes(r, Call.BATCH, batch(OpKind.PUT, 64))[0], "64 µs against 100");
        assertTrue(Double.isNaN(costs.hostEstimate(64, false)), "gets warm up on their own");
        costs.hostRan(2000, false, 2000 * 100L);
        assertTrue(Double.isNaN(costs.hostEstimate(64, false)), "a batch begun before the mark is not timed");
    }

    /**
     * A batch holding a kind the host's batches did not (YCSB A's gets and updates after a load of
     * inserts) runs code the JIT compiled without it, thrown away and compiled again: its set of kinds
     * warms up on its own, untimed, while the figure for writing batches stays what warm batches set.
     */
    @Test
    void aNewSetOfKindsWarmsUpOnItsOwn() {
        long[] now = {0};
        RouteCosts costs = new RouteCosts(() -> now[0], 1000, 50);
        int inserts = RouteCosts.kindsOf(OpKind.INSERT);
        int getsAndUpdates = RouteCosts.kindsOf(OpKind.GET, OpKind.UPDATE);
        costs.hostRan(1000, inserts, 1000 * 800_000L);  // cold
        now[0] = 50;
        costs.hostRan(64, inserts, 64 * 1_000L);  // warm: 1 µs a write
        assertEquals(64 * 1_000, costs.hostEstimate(64, true), 1e-9);
        now[0] = 60;
        costs.hostRan(1000, getsAndUpdates, 1000 * 50_000L);  // the new set's first batches: deoptimized code
        now[0] = 100;
        costs.hostRan(64, getsAndUpdates, 64 * 50_000L);
        assertEquals(64 * 1_000, costs.hostEstimate(64, true), 1e-9, "not timed until gets and updates warmed up");
        now[0] = 110;
        // 50 since its first batch: warm and timed (the host is not the side chosen, with no GPU figure
        // under the floor's guess, so the figure replaces the average)
        costs.hostRan(64, getsAndUpdates, 64 * 2_000L);
        assertEquals(64 * 2_000, costs.hostEstimate(64, true), 1e-9, "now timed: " + costs);
        costs.hostRan(64, RouteCosts.kindsOf(OpKind.UPDATE), 64 * 50_000L);
        assertEquals(64 * 2_000, costs.hostEstimate(64, true), 1e-9, "updates alone are a set of their own, not warm yet");
    }

    /**
     * The GPU's figures for batches of gets and for writing batches are apart: gets of 64 run side by
     * side without the lock in tens of microseconds, writing batches one at a time under it; a figure
     * set by gets sent writing batches to the GPU at many times their cost on the host (bench ycsb, A
     * after C).
     */
    @Test
    void theGpusFigureForGetsDoesNotDecideWritingBatches() {
        RouteCosts costs = new RouteCosts(() -> 0);
        costs.hostRan(64, true, 64 * 2_000L);  // 2 µs a write on the host
        costs.hostRan(64, false, 64 * 500L);  // 500 ns a get
        costs.gpuRan(64, false, 25_000);  // 25 µs a batch of 64 gets on the GPU
        costs.gpuRan(64, true, 1_500_000);  // 1.5 ms a writing batch of 64, queued behind other threads'
        Router r = measured(costs, true);
        assertEquals(Route.HOST, routes(r, Call.BATCH, mixed(64))[0], "128 µs on the host against 1.5 ms");
        assertNotEquals(Route.HOST, routes(r, Call.BATCH, batch(OpKind.GET, 64))[0], "32 µs of gets against 25");
        assertEquals(25_000, costs.gpuEstimate(64, false));
        assertEquals(1_500_000, costs.gpuEstimate(64, true));
    }

    /** Half gets, half puts. */
    private static Batch mixed(int n) {
        Batch b = Batch.create(8, VS, n);
        for (int i = 0; i < n; i++) {
            if (i % 2 == 0) {
                b.get(key(i));
            } else {
                b.put(key(i), new byte[VS]);
            }
        }
        return b;
    }

    /** A re-measure's batches finish on the GPU, each {@code nanos}. */
    private static void finishOnGpu(RouteCosts costs, int n, boolean writes, long nanos) {
        for (int i = 0; i < RouteCosts.REMEASURE_BATCHES; i++) {
            costs.gpuRan(n, writes, nanos);
        }
    }

    /** The rest of a re-measure begun by the batch before: its other batches go to the side measured. */
    private static void restOfRemeasure(RouteCosts costs, int n, boolean writes, boolean measuredOnHost) {
        for (int i = 1; i < RouteCosts.REMEASURE_BATCHES; i++) {
            assertEquals(measuredOnHost, costs.choose(n, writes), "batch " + i + " of the re-measure");
        }
    }

    /** The side not chosen runs a few batches every REMEASURE_NANOS per kind, to measure it again; never a large batch on the host. */
    @Test
    void theSideNotChosenIsMeasuredAgainOnceInAWhile() {
        long[] now = {0};
        RouteCosts costs = new RouteCosts(() -> now[0]);
        costs.hostRan(64, true, 64 * 100L);  // a cheap host
        costs.gpuRan(64, true, 1_000_000);
        assertTrue(costs.choose(64, true));
        now[0] = RouteCosts.REMEASURE_NANOS - 1;
        assertTrue(costs.choose(64, true), "not yet");
        now[0] = RouteCosts.REMEASURE_NANOS;
        assertFalse(costs.choose(64, true), "the GPU measured again");
        restOfRemeasure(costs, 64, true, false);
        assertTrue(costs.choose(64, true), "by its batches alone, though none has finished (16 threads' batches came meanwhile)");
        finishOnGpu(costs, 64, true, 1_000_000);
        assertTrue(costs.choose(64, true));
        now[0] = 3 * RouteCosts.REMEASURE_NANOS;
        Router r = measured(costs, true);
        assertTrue(r.prefersHost(batch(OpKind.PUT, 64)), "what a coalescer asks never re-measures");
        assertNotEquals(Route.HOST, routes(r, Call.BATCH, batch(OpKind.PUT, 64))[0], "so the router's next batch still does");
        restOfRemeasure(costs, 64, true, false);
        finishOnGpu(costs, 64, true, 1_000_000);
        assertEquals(Route.HOST, routes(r, Call.BATCH, batch(OpKind.PUT, 64))[0]);
        boolean getsOnHost = costs.onHost(64, false);
        assertNotEquals(getsOnHost, costs.choose(64, false), "gets keep a time of their own, due as well");
        restOfRemeasure(costs, 64, false, !getsOnHost);
        finishOnGpu(costs, 64, false, 1_000_000);
        assertEquals(getsOnHost, costs.choose(64, false));
        // A GPU batch that costs 6 ms is tried again after 600 ms, not 100: the host threads wait for it.
        RouteCosts slowGpu = new RouteCosts(() -> now[0]);
        slowGpu.hostRan(64, true, 64 * 1_000L);
        slowGpu.gpuRan(64, true, 6_000_000);
        now[0] += 5 * RouteCosts.REMEASURE_NANOS;
        assertTrue(slowGpu.choose(64, true), "500 ms: not yet");
        now[0] += RouteCosts.REMEASURE_NANOS;
        assertFalse(slowGpu.choose(64, true), "600 ms: the GPU measured again");
        // A dear host: the GPU's large batches are never tried on the host.
        RouteCosts dear = new RouteCosts(() -> now[0]);
        dear.hostRan(64, true, 64 * 1_000_000L);
        dear.gpuRan(1 << 16, true, 1_000_000);
        now[0] += 10 * RouteCosts.REMEASURE_NANOS;
        assertFalse(dear.choose(1 << 16, true));
        assertFalse(dear.choose(RouteCosts.REMEASURE_HOST_OPS, true), "4 s on the host: tried after 100 times that, not before");
        now[0] += 100 * RouteCosts.REMEASURE_HOST_OPS * 1_000_000L;
        assertTrue(dear.choose(RouteCosts.REMEASURE_HOST_OPS, true) != dear.onHost(RouteCosts.REMEASURE_HOST_OPS, true),
                "a batch the host may try");
        // A host never measured is not tried by re-measuring (its first figure comes from small batches).
        RouteCosts unmeasured = new RouteCosts(() -> now[0]);
        unmeasured.gpuRan(1024, true, 1_000);
        now[0] += 10 * RouteCosts.REMEASURE_NANOS;
        assertFalse(unmeasured.choose(1024, true));
    }

    @Test
    void conditionalBatchesMayRunOnTheHostAndOtherCallsKeepTheirRoutes() {
        RouteCosts costs = new RouteCosts(() -> 0);
        costs.hostRan(1, true, 1_000);
        Router r = measured(costs, true);
        Batch c = batch(OpKind.GET, 3);
        c.compareAndSet(key(9), new byte[VS], new byte[VS]);
        assertArrayEquals(new Route[] {Route.HOST, Route.CONDITIONAL}, routes(r, Call.BATCH, c));
        // A single get runs on the host, waiting for the GPU's work rather than taking the GPU from the
        // host's writes; a get at once still declines; a segment runs under the lock.
        assertArrayEquals(new Route[] {Route.HOST}, routes(r, Call.SINGLE_GET, batch(OpKind.GET, 1)));
        assertArrayEquals(new Route[] {Route.HOST_READ}, routes(r, Call.GET_AT_ONCE, batch(OpKind.GET, 1)));
        assertArrayEquals(new Route[] {Route.HOST_READ, Route.SMALL_READS, Route.SMALL_READS_LOCKED},
                routes(MIRROR, Call.SINGLE_GET, batch(OpKind.GET, 1)), "every write on the GPU: the routes of before");
        assertArrayEquals(new Route[] {Route.SMALL_WRITES}, routes(r, Call.SEGMENT, batch(OpKind.PUT, 3)));
        assertTrue(r.writesOnHost());
        assertTrue(r.singleGetsOnHost(), "SingleCalls runs them straight on the pool");
        assertFalse(MIRROR.singleGetsOnHost());
    }

    @Test
    void hostBatchesMaxBoundsWhatTheHostMayRunAndZeroKeepsEveryWriteOnTheGpu() {
        RouteCosts costs = new RouteCosts(() -> 0);
        costs.hostRan(1, true, 1);  // a host that costs nothing
        costs.hostRan(1, false, 1);
        Router bounded = new Router(GpuTuning.DEFAULTS.with("hostBatchesMax=100"), true, costs);
        assertEquals(Route.HOST, routes(bounded, Call.BATCH, batch(OpKind.PUT, 100))[0]);
        assertArrayEquals(new Route[] {Route.SMALL_WRITES}, routes(bounded, Call.BATCH, batch(OpKind.PUT, 101)));
        assertTrue(bounded.prefersHost(batch(OpKind.PUT, 100)));
        assertFalse(bounded.prefersHost(batch(OpKind.PUT, 101)), "beyond hostBatchesMax: a coalescer may merge it");
        Router none = new Router(GpuTuning.DEFAULTS.with("hostBatchesMax=0"), true, costs);
        assertArrayEquals(new Route[] {Route.SMALL_WRITES}, routes(none, Call.BATCH, batch(OpKind.PUT, 1)));
        assertFalse(none.writesOnHost());
    }

    @Test
    void aHostThatDeclinesHandsTheBatchToTheGpuRoute() {
        RouteCosts costs = new RouteCosts(() -> 0);
        costs.hostRan(1, true, 1_000);
        FakeEngine engine = new FakeEngine();
        engine.declining.add(Route.HOST);
        measured(costs, true).run(Call.BATCH, batch(OpKind.PUT, 8), new BatchResult(VS, 8), engine);
        assertEquals(List.of(Route.HOST, Route.SMALL_WRITES), engine.ran);
    }

    @Test
    void theRouterMeasuresWhatEachGpuRouteItRanCostAndLeavesTheHostToMeasureItself() {
        RouteCosts costs = new RouteCosts(() -> 0);
        Router r = measured(costs, true);
        FakeEngine engine = new FakeEngine();
        r.run(Call.BATCH, batch(OpKind.PUT, 8), new BatchResult(VS, 8), engine);  // no figure yet: the host
        assertEquals(List.of(Route.HOST), engine.ran);
        // The host records only its time inside the gate (HostOperations.run), never the router's
        // wall time, which holds the wait for the GPU to hand the pool over.
        assertTrue(Double.isNaN(costs.hostEstimate(8, true)), "the router recorded the host's time");
        r.run(Call.BATCH, batch(OpKind.PUT, 5000), new BatchResult(VS, 5000), engine);
        assertFalse(Double.isNaN(costs.gpuEstimate(5000, true)), "the GPU's time for its size class was recorded");
        // A batch of one (a single get) and a segment of a conditional batch are not measured.
        RouteCosts none = new RouteCosts(() -> 0);
        Router quiet = measured(none, true);
        quiet.run(Call.SINGLE_GET, batch(OpKind.GET, 1), new BatchResult(VS, 1), engine);
        quiet.run(Call.SEGMENT, batch(OpKind.PUT, 5000), new BatchResult(VS, 5000), engine);
        assertTrue(Double.isNaN(none.hostEstimate(1, false)) && Double.isNaN(none.gpuEstimate(5000, true)), none.toString());
    }
}
