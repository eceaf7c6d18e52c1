package org.gphash.spi;

import org.gphash.OperationStats;

/**
 * Records one kind of call's latencies for {@link org.gphash.GPHashIndex.Builder#recordStats()}.
 * The index module records counts itself; latency percentiles come from a provider found through
 * {@link java.util.ServiceLoader}: gphash-stats (HdrHistogram). The provider lives in a module of its
 * own because HdrHistogram's jar names no module, so the index (a named module) cannot require it.
 */
public interface LatencyRecorder {

    /**
     * Records one latency; called on the hot path from any thread, so wait-free and without allocating.
     *
     * @param nanos the latency in nanoseconds (negative ones count as 0)
     */
    void record(long nanos);

    /**
     * Everything recorded since the recorder was made.
     *
     * @return the count, mean and percentiles, or {@link OperationStats.Latency#NONE} before the first
     */
    OperationStats.Latency latency();

    /** Makes recorders; a {@link java.util.ServiceLoader} provider. */
    interface Factory {

        /**
         * A new, empty recorder.
         *
         * @return the recorder
         */
        LatencyRecorder create();
    }
}
