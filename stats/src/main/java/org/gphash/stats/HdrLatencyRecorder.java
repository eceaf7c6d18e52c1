package org.gphash.stats;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import org.gphash.OperationStats;
import org.gphash.spi.LatencyRecorder;

/**
 * Latencies in an HdrHistogram {@link Recorder}, which records wait-free and without allocating;
 * {@link #latency()} folds what it gathered since the last call into running totals (three
 * significant digits, up to an hour).
 */
public final class HdrLatencyRecorder implements LatencyRecorder {

    /** Latencies above an hour are recorded as an hour. */
    private static final long MAX_NANOS = 3_600_000_000_000L;

    private final Recorder recorder = new Recorder(3);
    private final Histogram total = new Histogram(3);
    private Histogram interval;

    /** Made by {@link Factory}, for the index. */
    HdrLatencyRecorder() {
    }

    @Override
    public void record(long nanos) {
        recorder.recordValue(Math.min(Math.max(nanos, 0), MAX_NANOS));
    }

    @Override
    public synchronized OperationStats.Latency latency() {
        interval = recorder.getIntervalHistogram(interval);
        total.add(interval);
        if (total.getTotalCount() == 0) {
            return OperationStats.Latency.NONE;
        }
        return new OperationStats.Latency(total.getTotalCount(), total.getMean(), total.getValueAtPercentile(50),
                total.getValueAtPercentile(99), total.getValueAtPercentile(99.9), total.getMaxValue());
    }

    /** The {@link java.util.ServiceLoader} provider. */
    public static final class Factory implements LatencyRecorder.Factory {

        /** Made by the service loader. */
        public Factory() {
        }

        @Override
        public LatencyRecorder create() {
            return new HdrLatencyRecorder();
        }
    }
}
