package org.gphash.frontend;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import org.gphash.OperationStats;

/**
 * Latencies in an HdrHistogram {@link Recorder}, which records wait-free and without allocating;
 * {@link #latency()} folds what it gathered since the last call into running totals (three
 * significant digits, up to an hour).
 */
final class HdrLatencyRecorder {

    /** Latencies above an hour are recorded as an hour. */
    private static final long MAX_NANOS = 3_600_000_000_000L;

    private final Recorder recorder = new Recorder(3);
    private final Histogram total = new Histogram(3);
    private Histogram interval;

    /**
     * Records one latency; called on the hot path from any thread, so wait-free and without allocating.
     *
     * @param nanos the latency in nanoseconds (negative ones count as 0)
     */
    void record(long nanos) {
        recorder.recordValue(Math.min(Math.max(nanos, 0), MAX_NANOS));
    }

    /** {@return everything recorded since the recorder was made: count, mean and percentiles, or {@link OperationStats.Latency#NONE}} */
    synchronized OperationStats.Latency latency() {
        interval = recorder.getIntervalHistogram(interval);
        total.add(interval);
        if (total.getTotalCount() == 0) {
            return OperationStats.Latency.NONE;
        }
        return new OperationStats.Latency(total.getTotalCount(), total.getMean(), total.getValueAtPercentile(50),
                total.getValueAtPercentile(99), total.getValueAtPercentile(99.9), total.getMaxValue());
    }
}
