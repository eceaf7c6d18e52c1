package org.gphash;

import java.util.Locale;

/**
 * What the index's callers did and how long it took, recorded when the index was built with
 * {@link GPHashIndex.Builder#recordStats()} (like Caffeine's {@code recordStats()}: off by default,
 * since timing every call costs two clock reads). Synchronous single-key calls and batches are
 * counted; asynchronous calls are counted only where they run at once (no coalescer), not when the
 * coalescer takes them. Latencies are wall time in the caller's thread, coalescing and GPU round
 * trips included.
 *
 * @param gets         single gets
 * @param getHits      of which found their key
 * @param writes       single puts, inserts, updates and deletes
 * @param batches      batches executed
 * @param batchOps     operations in those batches
 * @param getLatency   latency of single gets
 * @param writeLatency latency of single writes
 * @param batchLatency latency of whole batches
 */
public record OperationStats(long gets, long getHits, long writes, long batches, long batchOps, Latency getLatency,
                             Latency writeLatency, Latency batchLatency) {

    /** The figures of an index that does not record: all zero. */
    public static final OperationStats NONE = new OperationStats(0, 0, 0, 0, 0, Latency.NONE, Latency.NONE, Latency.NONE);

    /** {@return getHits / gets, or 0 before any get} */
    public double getHitRate() {
        return gets == 0 ? 0 : (double) getHits / gets;
    }

    /**
     * Latency percentiles of one kind of call, in nanoseconds (HdrHistogram, 3 significant digits).
     *
     * @param count     calls recorded
     * @param meanNanos the mean
     * @param p50Nanos  the median
     * @param p99Nanos  the 99th percentile
     * @param p999Nanos the 99.9th percentile
     * @param maxNanos  the largest
     */
    public record Latency(long count, double meanNanos, long p50Nanos, long p99Nanos, long p999Nanos, long maxNanos) {

        /** No calls recorded. */
        public static final Latency NONE = new Latency(0, 0, 0, 0, 0, 0);

        @Override
        public String toString() {
            return count == 0 ? "none" : String.format(Locale.ROOT, "%,d calls, mean %.1f us, p50 %.1f us, "
                    + "p99 %.1f us, p99.9 %.1f us, max %.1f us", count, meanNanos / 1e3, p50Nanos / 1e3, p99Nanos / 1e3,
                    p999Nanos / 1e3, maxNanos / 1e3);
        }
    }
}
