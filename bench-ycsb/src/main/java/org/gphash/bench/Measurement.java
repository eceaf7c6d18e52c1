package org.gphash.bench;

/**
 * One system on one workload at one batch size: the row of a results table and of the JSON file.
 *
 * @param system         the system's name
 * @param workload       the workload's label
 * @param batchSize      operations per batch
 * @param threads        client threads
 * @param operations     operations executed
 * @param nanos          wall-clock time of the phase (all threads, batch filling included)
 * @param meanBatchNanos mean time of one store call on one batch
 * @param p99BatchNanos  99th percentile of it
 * @param loadFactor     the store's load factor after the workload, NaN if it has none
 * @param cacheHitRate   cache hit rate during the workload, NaN if it has no cache
 * @param unexpected     operations whose outcome differed from what the stream implies (a wrong
 *                       value, a key missing): must be 0
 */
public record Measurement(String system, String workload, int batchSize, int threads, long operations, long nanos,
                          double meanBatchNanos, long p99BatchNanos, double loadFactor, double cacheHitRate,
                          long unexpected) {

    /** Operations per second over the phase's wall-clock time. */
    public double opsPerSecond() {
        return nanos <= 0 ? 0 : operations * 1e9 / nanos;
    }
}
