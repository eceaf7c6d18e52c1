package org.gphash.bench;

import java.util.Optional;

/**
 * One system a benchmark compares: the GPHash engine on either backend, the CPU engine as the
 * CPU-assisted path, {@link java.util.concurrent.ConcurrentHashMap}, LMDB. Every system receives
 * the same {@link OpBatch}es and writes the same {@link OpResults}, so a run compares like with like.
 *
 * <p>{@link #execute} may be called by several threads at once, each with its own batch and
 * results. Operations of one batch take effect as if one after another in some order, as
 * {@link org.gphash.Batch} defines it.
 */
public interface StoreUnderTest extends AutoCloseable {

    /** The name used on the command line and in tables, e.g. "gphash-cpu", "chm", "lmdb". */
    String name();

    /** One line for the report: what this system is and how it persists. */
    String description();

    void execute(OpBatch batch, OpResults results);

    /** Figures for the table after a workload; NaN where the system has no such figure. */
    default Figures figures() {
        return Figures.NONE;
    }

    /**
     * Where the application holds its batches in GPU memory: the steps a replay times apart. Empty
     * for a store that takes batches from the host.
     */
    default Optional<DeviceResident> deviceResident() {
        return Optional.empty();
    }

    /**
     * A store run as a GPU application runs it: {@link #stage} puts a batch in GPU memory (untimed,
     * where the application would already hold it), {@link #run} executes it there (timed), and
     * {@link #fetch} brings its results back for checking (untimed).
     */
    interface DeviceResident {
        void stage(OpBatch batch);

        void run();

        void fetch(OpBatch batch, OpResults results);
    }

    @Override
    void close() throws Exception;

    /**
     * @param loadFactor   items per slot (GPHash), NaN if the system does not say
     * @param cacheHitRate share of lookups served by a cache (BktCache on the GPU engine), NaN if none
     */
    record Figures(double loadFactor, double cacheHitRate) {
        public static final Figures NONE = new Figures(Double.NaN, Double.NaN);
    }
}
