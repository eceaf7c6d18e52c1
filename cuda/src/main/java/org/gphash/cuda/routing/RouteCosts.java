package org.gphash.cuda.routing;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * What a batch costs on each side, as measured on this machine while the engine runs: the host's time
 * per operation (for batches of gets, and for batches that write), and the GPU's time per batch by
 * size class (powers of two), each a moving average of what callers saw, queueing included. The
 * {@link Router} runs a batch on the host when its estimate there is no more than on the GPU.
 *
 * <p>Until a side has been measured: a batch runs on the host when the host has no figure yet and
 * it holds at most {@link #FIRST_HOST_OPS} operations (which gives the host one); when its size
 * class has no GPU figure, the nearest smaller class measured is a lower bound (a larger batch costs
 * the GPU no less), {@link #GPU_FLOOR_GUESS_NANOS} where none is: the batch runs on the host when
 * that bound is no less than the host's estimate, else on the GPU, which then measures the class.
 *
 * <p>Updated by every thread without a lock: a lost update only slows an average's convergence.
 */
public final class RouteCosts {

    /** Batches up to this size run on the host before the host has a figure, to get one. */
    static final int FIRST_HOST_OPS = 64;
    /** The fastest GPU batch, before one is measured: about one launch and a copy each way. */
    static final double GPU_FLOOR_GUESS_NANOS = 20_000;
    /** Weight of a new figure in an average. */
    private static final double WEIGHT = 1.0 / 16;
    private static final int CLASSES = 32;
    private static final long NONE = Double.doubleToRawLongBits(Double.NaN);

    /** Host nanoseconds per operation: [0] batches of gets, [1] batches that write. */
    private final AtomicLongArray hostPerOp = filled(2);
    /** GPU nanoseconds per batch, by size class (ceil(log2 n)). */
    private final AtomicLongArray gpuPerBatch = filled(CLASSES);

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

    private static void average(AtomicLongArray a, int i, double x) {
        double old = Double.longBitsToDouble(a.get(i));
        a.set(i, Double.doubleToRawLongBits(Double.isNaN(old) ? x : old + (x - old) * WEIGHT));
    }

    private static double at(AtomicLongArray a, int i) {
        return Double.longBitsToDouble(a.get(i));
    }

    /** A batch of {@code n} operations ran on the host in {@code nanos}. */
    public void hostRan(int n, boolean writes, long nanos) {
        if (n > 0) {
            average(hostPerOp, writes ? 1 : 0, (double) nanos / n);
        }
    }

    /** A batch of {@code n} operations ran on the GPU in {@code nanos}, as its caller saw it. */
    public void gpuRan(int n, long nanos) {
        if (n > 0) {
            average(gpuPerBatch, sizeClass(n), nanos);
        }
    }

    /** {@return the host's estimate for a batch of {@code n} operations, NaN before it has a figure} */
    public double hostEstimate(int n, boolean writes) {
        return at(hostPerOp, writes ? 1 : 0) * n;
    }

    /** {@return the GPU's figure for batches of {@code n}'s size class, NaN before it has one} */
    public double gpuEstimate(int n) {
        return at(gpuPerBatch, sizeClass(n));
    }

    /** Whether a batch of {@code n} operations ({@code writes}: some of them write) is cheaper on the host. */
    public boolean onHost(int n, boolean writes) {
        double host = hostEstimate(n, writes);
        if (Double.isNaN(host)) {
            return n <= FIRST_HOST_OPS;
        }
        int c = sizeClass(n);
        double gpu = at(gpuPerBatch, c);
        if (!Double.isNaN(gpu)) {
            return host <= gpu;
        }
        double below = GPU_FLOOR_GUESS_NANOS;
        for (int k = c - 1; k >= 0; k--) {
            double g = at(gpuPerBatch, k);
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
        for (int c = 0; c < CLASSES; c++) {
            double g = at(gpuPerBatch, c);
            if (!Double.isNaN(g)) {
                s.append(" <=").append(1L << c).append(':').append(Math.round(g));
            }
        }
        return s.toString();
    }
}
