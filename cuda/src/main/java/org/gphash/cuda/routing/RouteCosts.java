package org.gphash.cuda.routing;

import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.LongSupplier;

import org.gphash.OpKind;

/**
 * What a batch costs on each side, as measured on this machine while the engine runs, for batches of
 * gets and for batches that write apart: the host's time per operation (only while it runs the batch:
 * host threads run side by side), and the GPU's time per batch by size class (powers of two), as
 * callers saw it, queueing behind other threads' batches and taking the pool back from the host
 * included; each a moving average. The {@link Router} runs a batch on the host when its estimate there
 * is no more than on the GPU ({@link #choose}).
 *
 * <p>Why gets and writes apart on the GPU too: small batches of gets run side by side without the
 * engine's lock, small writing batches one at a time under it; one figure for both, set by a workload's
 * gets, sent its writing batches of 64 to the GPU at a twentieth of the cost they then had there (bench
 * ycsb, workload A after C from 16 threads: docs/PERFORMANCE.md).
 *
 * <p>Until a side has been measured: a batch runs on the host when the host has no figure yet and
 * it holds at most {@link #FIRST_HOST_OPS} operations (which gives the host one, once it has run
 * warm batches: {@link #HOST_WARMUP_OPS} operations of each set of kinds a batch holds, over
 * {@link #HOST_WARMUP_NANOS}, are not timed); when its size
 * class has no GPU figure, the nearest smaller class measured is a lower bound (a larger batch costs
 * the GPU no less), {@link #GPU_FLOOR_GUESS_NANOS} where none is: the batch runs on the host when
 * that bound is no less than the host's estimate, else on the GPU, which then measures the class.
 * A figure of the side not chosen would never change again: every {@link #REMEASURE_NANOS} (longer
 * where that side is dear: {@link #remeasureInterval}) {@link #REMEASURE_BATCHES} batches run on that
 * side, to measure it afresh awake (on the host only where it has a figure to refresh, and only
 * batches of at most {@link #REMEASURE_HOST_OPS}), and each one's time replaces the side's figure:
 * the figures of the side chosen are averaged, one outlier clamped ({@link #average}), those of the side not chosen are
 * rare and each is newer than the average it replaces. Either way a wrong figure is put right: a low
 * one brings batches to its side, whose figures then follow the truth batch by batch; a high one lasts
 * until the next re-measure.
 *
 * <p>Updated by every thread without a lock: a lost update only slows an average's convergence.
 */
public final class RouteCosts {

    /** Batches up to this size run on the host before the host has a figure, to get one. */
    static final int FIRST_HOST_OPS = 4096;
    /**
     * Operations of a set of kinds the host runs before its times for batches of that set count: the
     * first batches of 16 threads, loading and compiling the host's code at once, took 800 µs an
     * operation where warm ones take 1-2 (bench ycsb, issue 57); kept, that first figure sent every
     * later batch to the GPU, and one batch in a while to measure the host again moved the average by a
     * sixteenth. With {@link #HOST_WARMUP_NANOS}: 16 threads' batches of 1024 ran the first 16384
     * operations at once, and the next ones, still cold, set the figure at 15.5 µs a write.
     *
     * <p>Why per set of kinds ({@link #kindsOf}) and not per gets and writes: code the JIT compiled for
     * the batches of one workload is thrown away at the first batch that holds a kind they did not
     * (the load's inserts, then YCSB's A: a get inside a writing batch, "unstable_if"), and runs
     * interpreted until it is compiled again; timed meanwhile, A's first batches raised the host's
     * figure for writing batches from 1.2 to 14.8 µs an operation and sent the rest of the workload to
     * the GPU at a quarter of the CPU backend's rate (a flight recording:
     * docs/lab/2026-12-02-route-costs-and-the-jit.md).
     */
    static final long HOST_WARMUP_OPS = 1 << 14;
    /**
     * How long after its first batch of a set of kinds the host's times for that set start to count, at
     * the least ({@link #HOST_WARMUP_OPS}): the recompilation after such a deoptimization ended 360 ms
     * after it in that recording (16 threads, the compiler's queue shared with their other code).
     */
    static final long HOST_WARMUP_NANOS = 500_000_000L;
    /** Sets of operation kinds a batch can hold: a bit per {@link OpKind}. */
    private static final int KIND_SETS = 1 << OpKind.values().length;
    /** {@link #hostWarmup}'s mark for a set of kinds whose host times count. */
    private static final long WARM = Long.MAX_VALUE / 2;
    private static final long UNSET = Long.MIN_VALUE;
    /** The set of kinds of a batch of gets alone. */
    public static final int GETS = 1 << OpKind.GET.ordinal();
    /** The largest batch run on the host to measure it again (a few milliseconds at most). */
    static final int REMEASURE_HOST_OPS = 4096;
    /** How often the side not chosen runs batches, to measure it again (per kind: gets, writes). */
    static final long REMEASURE_NANOS = 100_000_000L;
    /** Batches of a re-measure: the first wakes the side up, the last one's figure is kept ({@link #choose}). */
    static final int REMEASURE_BATCHES = 3;
    /** At most this share's inverse of the time goes to batches run on the side not chosen ({@link #remeasureInterval}). */
    static final int REMEASURE_COST_RATIO = 100;
    /** The fastest GPU batch, before one is measured: about one launch and a copy each way. */
    static final double GPU_FLOOR_GUESS_NANOS = 20_000;
    /** A new figure counts as at most this many times the average, or as little as its inverse ({@link #average}). */
    static final double OUTLIER_FACTOR = 4;
    /** Weight of a new figure in an average, at the most ({@link #average}). */
    private static final double WEIGHT = 1.0 / 16;
    /**
     * Weight of a new figure in an average, at the least: that of figures that come at once (many
     * threads', or a frozen clock's) ({@link #average}).
     */
    private static final double MIN_WEIGHT = 1.0 / 1024;
    /**
     * The time over which an average follows a lasting change ({@link #average}): a figure weighs the
     * time since the one before it, over this, within [{@link #MIN_WEIGHT}, {@link #WEIGHT}].
     */
    static final long AVERAGE_NANOS = 100_000_000L;
    private static final int CLASSES = 32;
    private static final long NONE = Double.doubleToRawLongBits(Double.NaN);

    /** Host nanoseconds per operation: [0] batches of gets, [1] batches that write. */
    private final AtomicLongArray hostPerOp = filled(2);
    /** GPU nanoseconds per batch, by size class (ceil(log2 n)): [0, CLASSES) batches of gets, then batches that write. */
    private final AtomicLongArray gpuPerBatch = filled(2 * CLASSES);
    /** When each figure of {@link #hostPerOp} and of {@link #gpuPerBatch} was last averaged ({@link #average}). */
    private final AtomicLongArray hostAveraged = new AtomicLongArray(2);
    private final AtomicLongArray gpuAveraged = new AtomicLongArray(2 * CLASSES);
    /** When each kind (gets, writes) last ran a batch on the side not chosen, to measure it again. */
    private final AtomicLongArray remeasured = new AtomicLongArray(2);
    /** A re-measure in progress, per kind: batches still to send, on which side (1: the host), until when at the latest. */
    private final AtomicIntegerArray remeasureLeft = new AtomicIntegerArray(2);
    private final AtomicIntegerArray remeasureOnHost = new AtomicIntegerArray(2);
    private final AtomicLongArray remeasureEnds = new AtomicLongArray(2);
    /** Re-measures begun on the side not chosen: [0, 1] on the GPU (gets, writes), [2, 3] on the host. */
    private final AtomicLongArray remeasures = new AtomicLongArray(4);
    /**
     * Operations of each set of kinds ({@link #kindsOf}) the host ran whose times were not kept,
     * {@link #WARM} once they count.
     */
    private final AtomicLongArray hostWarmup = new AtomicLongArray(KIND_SETS);
    /** When the host ran its first batch of each set of kinds ({@link #UNSET} before). */
    private final AtomicLongArray hostWarmupFrom = new AtomicLongArray(KIND_SETS);
    private final long hostWarmupOps;
    private final long hostWarmupNanos;
    private final LongSupplier clock;

    /** Costs timed by {@link System#nanoTime}, the host's warm-up ({@link #HOST_WARMUP_OPS}, {@link #HOST_WARMUP_NANOS}) not counted. */
    public RouteCosts() {
        this(System::nanoTime, HOST_WARMUP_OPS, HOST_WARMUP_NANOS);
    }

    /** Costs timed by {@code clock}, every host time counted (tests). */
    RouteCosts(LongSupplier clock) {
        this(clock, 0, 0);
    }

    /**
     * Costs timed by {@code clock}; the host's times of a kind count once it has run
     * {@code hostWarmupOps} operations of it and {@code hostWarmupNanos} have passed since the first.
     */
    RouteCosts(LongSupplier clock, long hostWarmupOps, long hostWarmupNanos) {
        this.clock = clock;
        this.hostWarmupOps = hostWarmupOps;
        this.hostWarmupNanos = hostWarmupNanos;
        for (int i = 0; i < KIND_SETS; i++) {
            hostWarmupFrom.set(i, UNSET);
        }
        long now = clock.getAsLong();
        remeasured.set(0, now);
        remeasured.set(1, now);
    }

    private static AtomicLongArray filled(int n) {
        AtomicLongArray a = new AtomicLongArray(n);
        for (int i = 0; i < n; i++) {
            a.set(i, NONE);
        }
        return a;
    }

    static int sizeClass(int n) {
        return n <= 1 ? 0 : 32 - Integer.numberOfLeadingZeros(n - 1);
    }

    /**
     * Moves an average towards {@code x}, a figure first clamped to within {@link #OUTLIER_FACTOR} of
     * the average: one host batch of 64 writes that stalled for over 100 ms in the gate (its thread
     * paused or descheduled) moved the host's figure from 1.9 to 135 µs an operation, and every later
     * batch of the run went to the GPU at half the host's rate (bench ycsb A, issue 57).
     *
     * <p>A figure weighs the time since the figure before it ({@code averaged}), over
     * {@link #AVERAGE_NANOS}, between {@link #MIN_WEIGHT} and {@link #WEIGHT}: the average follows a
     * change that lasts, not a burst of figures. Weighed by figure (a sixteenth each), 16 threads' batches
     * moved it sixteen times as fast as one thread's, and the first 30 of bench ycsb's A after the load
     * (its gets and updates new code to the JIT, about 13 ms a batch of 64 for some 25 ms) raised the
     * host's figure from 1.6 to 198 µs an operation: the writes went to merged GPU batches, each taking
     * the pool back from the host, at a ninth of the CPU backend's rate
     * (docs/lab/2026-11-30-stalls-and-region-checks.md).
     */
    private void average(AtomicLongArray a, AtomicLongArray averaged, int i, double x) {
        long now = clock.getAsLong();
        long then = averaged.getAndSet(i, now);
        double old = Double.longBitsToDouble(a.get(i));
        if (Double.isNaN(old)) {
            a.set(i, Double.doubleToRawLongBits(x));
            return;
        }
        double w = Math.max(MIN_WEIGHT, Math.min(WEIGHT, (double) (now - then) / AVERAGE_NANOS));
        double y = Math.min(Math.max(x, old / OUTLIER_FACTOR), old * OUTLIER_FACTOR);
        a.set(i, Double.doubleToRawLongBits(old + (y - old) * w));
    }

    private static double at(AtomicLongArray a, int i) {
        return Double.longBitsToDouble(a.get(i));
    }

    /**
     * A batch of {@code n} operations of the kinds in {@code kinds} ({@link #kindsOf}) ran on the host
     * in {@code nanos}: a figure for batches of gets ({@link #GETS}) or for writing batches (any other
     * set), once the host has warmed up on that set of kinds.
     */
    public void hostRan(int n, int kinds, long nanos) {
        if (n <= 0 || kinds <= 0 || kinds >= KIND_SETS) {
            return;
        }
        if (hostWarmup.get(kinds) < WARM && !warmedUp(kinds, n)) {
            return;
        }
        boolean writes = kinds != GETS;
        record(hostPerOp, hostAveraged, writes ? 1 : 0, (double) nanos / n, onHost(n, writes));
    }

    /** {@link #hostRan} for a batch of gets alone or of puts alone ({@code writes}): tests' figures. */
    void hostRan(int n, boolean writes, long nanos) {
        hostRan(n, writes ? kindsOf(OpKind.PUT) : GETS, nanos);
    }

    /** {@return the set of kinds {@link #hostRan} takes for a batch holding {@code kinds}: a bit per kind's ordinal} */
    public static int kindsOf(OpKind... kinds) {
        int set = 0;
        for (OpKind k : kinds) {
            set |= 1 << k.ordinal();
        }
        return set;
    }

    /**
     * A new figure for entry {@code i} of {@code a}: averaged in where its side is the one chosen now
     * ({@link #average}), else it replaces the average. A batch on the side not chosen (a re-measure, or
     * one chosen before the choice turned) is the freshest figure that side has: averaged in, one
     * re-measure a second moved a figure by a sixteenth at most, and a host figure raised for a while by
     * slow batches kept bench ycsb's A on the GPU at a third of the host's rate long after they ended
     * (issue 57).
     */
    private void record(AtomicLongArray a, AtomicLongArray averaged, int i, double x, boolean sideChosen) {
        if (sideChosen) {
            average(a, averaged, i, x);
        } else {
            a.set(i, Double.doubleToRawLongBits(x));
        }
    }

    /**
     * Whether the host's batch of {@code n} operations of the set of kinds {@code k} ends its warm-up (a
     * batch begun before its end is not timed).
     */
    private boolean warmedUp(int k, int n) {
        long now = clock.getAsLong();
        hostWarmupFrom.compareAndSet(k, UNSET, now);
        long before = hostWarmup.getAndAdd(k, n);
        if (before >= hostWarmupOps && now - hostWarmupFrom.get(k) >= hostWarmupNanos) {
            hostWarmup.set(k, WARM);
            return true;
        }
        return false;
    }

    /** A batch of {@code n} operations ({@code writes}: some of them write) ran on the GPU in {@code nanos}, as its caller saw it. */
    public void gpuRan(int n, boolean writes, long nanos) {
        if (n <= 0) {
            return;
        }
        int i = gpuIndex(sizeClass(n), writes);
        record(gpuPerBatch, gpuAveraged, i, nanos, !onHost(n, writes));
    }

    private static int gpuIndex(int sizeClass, boolean writes) {
        return (writes ? CLASSES : 0) + sizeClass;
    }

    /** {@return the host's estimate for a batch of {@code n} operations, NaN before it has a figure} */
    public double hostEstimate(int n, boolean writes) {
        return at(hostPerOp, writes ? 1 : 0) * n;
    }

    /** {@return the GPU's figure for batches of {@code n}'s size class and kind, NaN before it has one} */
    public double gpuEstimate(int n, boolean writes) {
        return at(gpuPerBatch, gpuIndex(sizeClass(n), writes));
    }

    /**
     * The router's choice for a batch of {@code n} operations ({@code writes}: some of them write):
     * {@link #onHost}, except that once every {@link #remeasureInterval} per kind the other side runs
     * the next {@link #REMEASURE_BATCHES} batches of that kind, to measure that side again (the host
     * only where it has a figure and for a batch of at most {@link #REMEASURE_HOST_OPS}).
     *
     * <p>Why several and not one: a batch on a side that was idle pays for waking it, and the last
     * figure, which replaces the average ({@link #record}), is of a side already awake. One GPU batch
     * after 10 ms or more of host work cost five to seven times the same batch among GPU batches (512
     * gets: 209-259 µs against 37; IdleGapsBench, issue 57): measured alone, every
     * re-measure found the GPU dear, and batches of 512 gets stayed on the host at 300 µs each.
     */
    public boolean choose(int n, boolean writes) {
        boolean host = onHost(n, writes);
        boolean hostMayRemeasure = n <= REMEASURE_HOST_OPS && !Double.isNaN(hostEstimate(n, writes));
        int k = writes ? 1 : 0;
        long now = clock.getAsLong();
        if (remeasureLeft.get(k) > 0 && now < remeasureEnds.get(k)) {
            boolean side = remeasureOnHost.get(k) == 1;
            return side != host && (!side || hostMayRemeasure) && sendRemeasureBatch(k) ? side : host;
        }
        if (!host && !hostMayRemeasure) {
            return false;
        }
        long last = remeasured.get(k);
        double other = host ? gpuEstimate(n, writes) : hostEstimate(n, writes);
        if (now - last >= remeasureInterval(other) && remeasured.compareAndSet(k, last, now)) {
            remeasureOnHost.set(k, host ? 0 : 1);
            remeasureEnds.set(k, now + remeasureSpan(other));
            remeasureLeft.set(k, REMEASURE_BATCHES - 1);  // this batch is the first
            remeasures.incrementAndGet((host ? 0 : 2) + k);
            return !host;
        }
        return host;
    }

    /**
     * How long a re-measure may last whose side's figure is {@code otherNanos} a batch: long enough for
     * {@link #REMEASURE_BATCHES} of them one after another, at most half of {@link #REMEASURE_NANOS}
     * (where that side's batches stop coming, or finish on the side chosen, the re-measure ends by time).
     */
    static long remeasureSpan(double otherNanos) {
        long most = REMEASURE_NANOS / 2;
        return Double.isNaN(otherNanos) ? most : Math.min(most, Math.max(1_000_000L, (long) (otherNanos * 2 * REMEASURE_BATCHES)));
    }

    /**
     * One more batch of kind {@code k}'s re-measure, if one is left to send. Counted as they are sent,
     * not as they finish: 16 threads' batches that came while the first three ran went to the side
     * measured too, 17 GPU batches of 64 instead of 3, each taking the pool back from the host (bench
     * ycsb's A at batches of 64, issue 57).
     */
    private boolean sendRemeasureBatch(int k) {
        return remeasureLeft.getAndUpdate(k, v -> v > 0 ? v - 1 : 0) > 0;
    }

    /**
     * How long between two batches run on the side not chosen, whose figure for the batch is
     * {@code otherNanos}: {@link #REMEASURE_NANOS}, or {@link #REMEASURE_COST_RATIO} times that figure
     * if longer. A GPU batch among host writes takes the pool back from every host thread, and they
     * wait about as long as it takes (the take-back's refresh included): at 6-7 ms a batch of 64 every
     * 100 ms, the re-measuring stopped 16 threads for a tenth of bench ycsb's A at batches of 64 (issue
     * 57), where this bounds it to about 1%.
     */
    static long remeasureInterval(double otherNanos) {
        return Double.isNaN(otherNanos) ? REMEASURE_NANOS : Math.max(REMEASURE_NANOS, (long) (otherNanos * REMEASURE_COST_RATIO));
    }

    /** Whether a batch of {@code n} operations ({@code writes}: some of them write) is cheaper on the host. */
    public boolean onHost(int n, boolean writes) {
        double host = hostEstimate(n, writes);
        if (Double.isNaN(host)) {
            return n <= FIRST_HOST_OPS;
        }
        int c = sizeClass(n);
        double gpu = at(gpuPerBatch, gpuIndex(c, writes));
        if (!Double.isNaN(gpu)) {
            return host <= gpu;
        }
        double below = GPU_FLOOR_GUESS_NANOS;
        for (int k = c - 1; k >= 0; k--) {
            double g = at(gpuPerBatch, gpuIndex(k, writes));
            if (!Double.isNaN(g)) {
                below = g;
                break;
            }
        }
        return host <= below;
    }

    @Override
    public String toString() {
        StringBuilder s = new StringBuilder("host ns/op: gets ").append(Math.round(at(hostPerOp, 0))).append(", writing ")
                .append(Math.round(at(hostPerOp, 1))).append("; GPU ns/batch by size:");
        for (int w = 0; w < 2; w++) {
            s.append(w == 0 ? " gets" : "; writing");
            for (int c = 0; c < CLASSES; c++) {
                double g = at(gpuPerBatch, gpuIndex(c, w == 1));
                if (!Double.isNaN(g)) {
                    s.append(" <=").append(1L << c).append(':').append(Math.round(g));
                }
            }
        }
        s.append("; re-measured on the GPU: gets ").append(remeasures.get(0)).append(", writing ").append(remeasures.get(1))
                .append(", on the host: gets ").append(remeasures.get(2)).append(", writing ").append(remeasures.get(3));
        return s.toString();
    }
}
