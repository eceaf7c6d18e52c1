package org.gphash;

import java.lang.foreign.MemorySegment;

import org.gphash.bktcache.BktCacheConfig;
import org.gphash.bktcache.BktCacheStats;

/**
 * What only the GPU engine offers, reached through {@link GPHashIndex#gpu()} (empty for the CPU
 * engine), in the style of Caffeine's {@code Policy}: no cast, and no CUDA library type in any
 * signature. Device memory is named by its address ({@code long}, a CUDA device pointer's value) or
 * by a {@link MemorySegment} whose address is one (as a CUDA allocation reached through the FFM API
 * would be).
 *
 * <p>Asking for this view turns the coalescer's host read cache off, as {@link GPHashIndex#engine()}
 * does: device-resident batches write the pool without passing the cache.
 */
public interface GpuFeatures {

    /**
     * Runs a batch whose columns already live in GPU memory and whose results stay there (the DLRM
     * case: no host round trip for keys or values). Returns when done; the batch contract is
     * {@link Batch}'s (operations on one key take effect in batch order).
     *
     * @param n      operations
     * @param kinds  device address of n bytes of {@link OpKind} ordinals
     * @param keys   device address of n x keySize bytes
     * @param values device address of n x valueSize bytes, read for writes (0 for a batch of gets and
     *               deletes)
     * @param codes  device address of n bytes where the {@link Outcome} codes go
     * @param out    device address of n x valueSize bytes where gets and read-modify-writes put the
     *               values they read (0 for a batch without them)
     * @throws IllegalArgumentException if a column the batch needs is 0
     */
    void executeOnDevice(long n, long kinds, long keys, long values, long codes, long out);

    /**
     * As {@link #executeOnDevice(long, long, long, long, long, long)}, where each value has a length of
     * its own, up to the value size (a format 3 pool; issue 53): operation {@code i}'s value is the first
     * {@code lengths[i]} bytes of its place in {@code values}, and a value read goes to the start of its
     * place in {@code out}, its length to {@code outLengths[i]} (the bytes after it are left as they
     * were; without {@code outLengths}, zeros up to the value size follow a shorter value). An index
     * that runs values of the value size only refuses lengths; the GPU engine runs them on the pipeline
     * over its index mirror, BktCache on or off.
     *
     * @param n          operations
     * @param kinds      device address of n bytes of {@link OpKind} ordinals
     * @param keys       device address of n x keySize bytes
     * @param values     device address of n x valueSize bytes, read for writes (0 for a batch of gets and deletes)
     * @param lengths    device address of n 32-bit lengths, each at most the value size (0: every value has the value size)
     * @param codes      device address of n bytes where the {@link Outcome} codes go
     * @param out        device address of n x valueSize bytes where values read go (0 for a batch without reads)
     * @param outLengths device address of n 32-bit words where the lengths of values read go (0: not wanted)
     * @throws IllegalArgumentException if a column the batch needs is 0, or a value is longer than the value size
     * @throws IllegalStateException    where this index does not take values of many lengths on the GPU
     */
    default void executeOnDevice(long n, long kinds, long keys, long values, long lengths, long codes, long out,
                                 long outLengths) {
        if (lengths != 0 || outLengths != 0) {
            throw new IllegalStateException("this index's device batches take values of the value size only");
        }
        executeOnDevice(n, kinds, keys, values, codes, out);
    }

    /**
     * As {@link #executeOnDevice(long, long, long, long, long, long)}, with the columns as segments
     * over device memory (only their addresses are used).
     *
     * @param n      operations
     * @param kinds  n bytes of kinds
     * @param keys   the keys
     * @param values the values, or {@link MemorySegment#NULL}
     * @param codes  where the outcome codes go
     * @param out    where the values read go, or {@link MemorySegment#NULL}
     */
    default void executeOnDevice(long n, MemorySegment kinds, MemorySegment keys, MemorySegment values,
                                 MemorySegment codes, MemorySegment out) {
        executeOnDevice(n, kinds.address(), keys.address(), values.address(), codes.address(), out.address());
    }

    /** {@return the GPU's name, as the driver reports it} */
    String deviceName();

    /** {@return whether batches run on the pipeline over the index copy in GPU memory ({@link IndexStats#indexPlacement()} says why not)} */
    boolean usesIndexMirror();

    /** {@return GPU time of the last batch, first kernel to last, in nanoseconds (0 where not measured)} */
    long lastBatchGpuNanos();

    /** {@return BktCache's figures: hit rate since open, loads and their times} */
    BktCacheStats bucketCacheStats();

    /**
     * Loads BktCache now rather than at its next period.
     *
     * @param wait whether to return only when the load is done (false: later batches run meanwhile)
     * @return false when the cache is off
     */
    boolean reloadBucketCache(boolean wait);

    /**
     * Replaces BktCache with one of another configuration; the new one starts empty.
     *
     * @param config the cache's settings
     */
    void configureBucketCache(BktCacheConfig config);
}
