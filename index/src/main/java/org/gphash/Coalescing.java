package org.gphash;

import java.time.Duration;
import java.util.Objects;

/**
 * Whether single-key calls (and their asynchronous forms) are merged into batches before they reach
 * the engine, chosen with {@link GPHashIndex.Builder#coalescing}. A GPU engine runs one kernel
 * pipeline per call, so thousands of threads each calling {@code get} would each pay a launch and a
 * synchronisation; merged, they share one batch (issue 15, after Mega-KV and KVCG). The CPU engine
 * runs a single operation in a couple of microseconds, less than a hand-off to another thread.
 *
 * <p>A batch is launched as soon as the engine is free and something is waiting (so under light
 * load a call waits for nothing but the batch in flight), or after {@code linger} if that is set,
 * to gather more; at most {@code maxBatch} operations go in one batch. A caller's operations keep
 * their order: a caller's put, then its get, sees the put (one dispatcher, batches run in order and
 * a batch runs its operations in order).
 *
 * @param mode     AUTO (on for the GPU backend, off for the CPU backend), ON or OFF
 * @param linger   how long the first waiting call may wait for others (zero: not at all)
 * @param maxBatch most operations merged into one batch
 */
public record Coalescing(Mode mode, Duration linger, int maxBatch) {

    public enum Mode { AUTO, ON, OFF }

    /** On for the GPU backend, off for the CPU backend; no linger; up to 65,536 operations a batch. */
    public static final Coalescing AUTO = new Coalescing(Mode.AUTO, Duration.ZERO, 1 << 16);
    public static final Coalescing OFF = new Coalescing(Mode.OFF, Duration.ZERO, 1 << 16);

    public Coalescing {
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(linger, "linger");
        if (linger.isNegative()) {
            throw new IllegalArgumentException("linger must not be negative, got " + linger);
        }
        if (maxBatch < 1) {
            throw new IllegalArgumentException("maxBatch must be at least 1, got " + maxBatch);
        }
    }

    /** On, whatever the backend, with this linger and batch limit. */
    public static Coalescing on(Duration linger, int maxBatch) {
        return new Coalescing(Mode.ON, linger, maxBatch);
    }

    /** Whether calls are merged for {@code backend}. */
    public boolean appliesTo(Backend backend) {
        return mode == Mode.ON || mode == Mode.AUTO && backend == Backend.GPU;
    }
}
