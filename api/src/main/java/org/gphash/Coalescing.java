package org.gphash;

import java.time.Duration;
import java.util.Objects;

/**
 * Whether single-key calls (and their asynchronous forms) are merged into batches before they reach
 * the engine, chosen with {@link GPHashIndex.Builder#coalescing}. Merged calls share one batch
 * (issue 15, after Mega-KV and KVCG): one persist of a pool on a disk for many writes (group commit,
 * the CPU engine's default where each batch's persist is a flush to the medium), one GPU launch for
 * many gets where the GPU runs them. For the GPU engine the coalescer merges callers' batches bound
 * for the GPU (their writes share the dispatcher's batch, which ran the DLRM replay faster:
 * docs/PERFORMANCE.md) and passes single calls, and batches the engine would run on the host, straight
 * through, since the engine runs them on the host, on the mapped pool, between its batches (a write in
 * microseconds against a GPU round trip of tens), which beat merging them under YCSB's client and bench
 * ycsb (issue 57: docs/PERFORMANCE.md).
 *
 * <p>A batch is launched as soon as the engine is free and something is waiting (so under light
 * load a call waits for nothing but the batch in flight), after {@code linger} if that is set, or
 * after the adaptive wait below; at most {@code maxBatch} operations go in one batch. A caller's operations keep
 * their order: a caller's put, then its get, sees the put (one dispatcher, batches run in order and
 * a batch runs its operations in order).
 *
 * <p>{@code hostCacheBytes} above zero puts a cache of hot keys' values on the host in front of the
 * coalescer (KVCG): a get that hits returns at once, without a GPU batch. Every write through the
 * index keeps it exact; writes that bypass the index (the GPU engine's device-resident batches,
 * reached through {@link GPHashIndex#engine()}) would not, so asking for the engine turns it off. A
 * pool whose values have any length ({@link GPHashIndex#valueLengths()}) is coalesced without it: its
 * entries have the value size.
 *
 * <p>A synchronous get that misses that cache is not queued either when the engine can run it at
 * once ({@link org.gphash.spi.Engine#getAlongside}): the GPU engine then reads the mapped pool on the
 * calling thread between its batches (microseconds, against tens for a GPU round trip: USAGE.md,
 * "The GPU engine"), and queues it only while a batch runs or while the caller's own asynchronous operations
 * are still queued. While no write came through the coalescer lately (10 ms), a synchronous get asks
 * the engine first and leaves the cache alone: no batch holds the pool then, and the pool's read
 * costs no more than the cache's lookup (docs/PERFORMANCE.md, "YCSB's own client").
 *
 * <p>{@code adaptive} (with no fixed linger) waits, after the first request, for as many as the
 * previous batch held, at most a quarter of that batch's run time (and 200 us): synchronous callers
 * woken by one batch are back a few microseconds later, and without the wait the next batch would
 * leave with the first of them only (after DIDO, which adapts batching to measured arrivals and
 * kernel time). Off by default: under YCSB's client it made batches larger but throughput moved both
 * ways, a larger GPU batch costing more (docs/lab/2026-11-23-issue-15-coalescing-and-small-batches.md).
 *
 * <p>{@code spin}: how long a caller waiting for its batch, and the dispatcher waiting for work,
 * spin before they park. Waking a parked thread takes the waker and the woken thread microseconds
 * each way, which on a GPU batch of a few gets (tens of microseconds) is a large share; spinning
 * trades a core for it. Callers spin only while fewer than half the machine's cores already do, so
 * thousands of waiting callers park as before.
 *
 * <p>{@code batchesInFlight}: 1 (the default) gathers, runs and completes one batch at a time; 2
 * gathers and submits the next batch while the engine still runs the last ({@code Engine.submit}:
 * the GPU engine then has two small batches of gets on the GPU at once, on streams of their own).
 * Under YCSB's client two in flight made batches smaller and gained nothing
 * (docs/lab/2026-11-23-issue-15-coalescing-and-small-batches.md), so one is the default.
 *
 * @param mode            AUTO (on for the GPU backend and for group commit), ON or OFF
 * @param linger          how long the first waiting call may wait for others (zero: not at all)
 * @param maxBatch        most operations merged into one batch (a caller's batch of more than half of it,
 *                        or of more than 2048 operations, runs directly: it would share its engine batch
 *                        with little, and merged it waits for the others')
 * @param hostCacheBytes  bytes of the host read cache (0: none; {@link #AUTO_HOST_CACHE}: an eighth of the
 *                        JVM's maximum heap, at most 256 MiB)
 * @param adaptive        with a zero linger, wait briefly for the previous batch's callers to return
 * @param spin            how long waiting threads spin before parking (zero: park at once)
 * @param batchesInFlight batches the coalescer keeps in flight: 1 or 2
 */
public record Coalescing(Mode mode, Duration linger, int maxBatch, long hostCacheBytes, boolean adaptive, Duration spin,
                         int batchesInFlight) {

    /** Whether to coalesce. */
    public enum Mode {
        /** For the GPU backend, and where merged calls share a flush to the medium (the CPU engine's group commit). */
        AUTO,
        /** Whatever the backend. */
        ON,
        /** Never: every call goes straight to the engine. */
        OFF
    }

    /** Host read cache size chosen from the heap: an eighth of the maximum heap, at most 256 MiB. */
    public static final long AUTO_HOST_CACHE = -1;

    /**
     * On for the GPU backend and where merged calls share a flush (group commit), else off; no linger; up to 65,536 operations a batch;
     * a host read cache of {@link #AUTO_HOST_CACHE}. The cache is on by default because it was
     * measured to help every YCSB workload under YCSB's own client
     * (docs/lab/2026-11-23-issue-15-coalescing-and-small-batches.md), and sized from the heap so that
     * a small heap is not filled by it.
     */
    public static final Coalescing AUTO = new Coalescing(Mode.AUTO, Duration.ZERO, 1 << 16, AUTO_HOST_CACHE,
            false, Duration.ofNanos(50_000), 1);
    /** Off: every call goes straight to the engine. */
    public static final Coalescing OFF = new Coalescing(Mode.OFF, Duration.ZERO, 1 << 16, 0, false, Duration.ZERO, 1);

    /** Checks the settings: each names what is wrong in its exception. */
    public Coalescing {
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(linger, "linger");
        Objects.requireNonNull(spin, "spin");
        if (spin.isNegative()) {
            throw new IllegalArgumentException("spin must not be negative, got " + spin);
        }
        if (linger.isNegative()) {
            throw new IllegalArgumentException("linger must not be negative, got " + linger);
        }
        if (maxBatch < 1) {
            throw new IllegalArgumentException("maxBatch must be at least 1, got " + maxBatch);
        }
        if (batchesInFlight < 1 || batchesInFlight > 2) {
            throw new IllegalArgumentException("batchesInFlight must be 1 or 2, got " + batchesInFlight);
        }
        if (hostCacheBytes < 0 && hostCacheBytes != AUTO_HOST_CACHE) {
            throw new IllegalArgumentException("hostCacheBytes must not be negative, got " + hostCacheBytes);
        }
    }

    /** {@return the host read cache's size in bytes for this JVM (0: none)} */
    public long effectiveHostCacheBytes() {
        return hostCacheBytes == AUTO_HOST_CACHE ? Math.min(256L << 20, Runtime.getRuntime().maxMemory() / 8)
                : hostCacheBytes;
    }

    /**
     * These settings with a host read cache of {@code bytes} (0: none).
     *
     * @param bytes the cache's size
     * @return a copy with it
     */
    public Coalescing withHostCache(long bytes) {
        return new Coalescing(mode, linger, maxBatch, bytes, adaptive, spin, batchesInFlight);
    }

    /**
     * These settings, adapting the wait to the previous batch (see above) or not.
     *
     * @param adapt whether to adapt
     * @return a copy with it
     */
    public Coalescing withAdaptive(boolean adapt) {
        return new Coalescing(mode, linger, maxBatch, hostCacheBytes, adapt, spin, batchesInFlight);
    }

    /**
     * These settings, with waiting threads spinning this long before they park (zero: not at all).
     *
     * @param d how long to spin
     * @return a copy with it
     */
    public Coalescing withSpin(Duration d) {
        return new Coalescing(mode, linger, maxBatch, hostCacheBytes, adaptive, d, batchesInFlight);
    }

    /**
     * These settings, keeping {@code n} batches in flight (1 or 2, see above).
     *
     * @param n batches in flight
     * @return a copy with it
     */
    public Coalescing withBatchesInFlight(int n) {
        return new Coalescing(mode, linger, maxBatch, hostCacheBytes, adaptive, spin, n);
    }


    /**
     * On, whatever the backend, with this linger and batch limit (no host cache, no spinning).
     *
     * @param linger   how long the first waiting call may wait for others
     * @param maxBatch most operations in one batch
     * @return the settings
     */
    public static Coalescing on(Duration linger, int maxBatch) {
        return new Coalescing(Mode.ON, linger, maxBatch, 0, false, Duration.ZERO, 1);
    }

    /**
     * Whether calls are merged for {@code backend}.
     *
     * @param backend the index's backend
     * @return true if single calls are merged for it
     */
    public boolean appliesTo(Backend backend) {
        return appliesTo(backend, false);
    }

    /**
     * Whether calls are merged for {@code backend}, where {@code groupCommit} says that each batch's
     * persist is a flush to the medium (a disk, or msync of a file that is not persistent memory,
     * with PER_BATCH durability, the CPU engine): {@link Mode#AUTO} merges the CPU engine's calls only
     * then, so that concurrent single writes share their flushes (issue 28: each single put on ext4 was
     * its own msync, about 245 a second) and each is still durable when it returns; and always the GPU
     * engine's, where the coalescer merges callers' batches bound for the GPU and passes single calls
     * and host-bound batches straight through ({@code Engine.runsSingleCallsInPlace},
     * {@code Engine.runsBatchInPlace}).
     *
     * @param backend     the index's backend
     * @param groupCommit whether merged calls would share a flush
     * @return true if a coalescer stands in front of the engine
     */
    public boolean appliesTo(Backend backend, boolean groupCommit) {
        return mode == Mode.ON || mode == Mode.AUTO && (backend == Backend.GPU || groupCommit);
    }

    /**
     * These settings for group commit on the CPU engine: no host read cache and no spinning (the
     * engine's reads are as fast as the cache's, and run at once beside the queue).
     *
     * @return the settings, adjusted
     */
    public Coalescing forGroupCommit() {
        return new Coalescing(mode, linger, maxBatch, 0, adaptive, Duration.ZERO, batchesInFlight);
    }
}
