package org.gphash;

import java.io.Serializable;

import org.gphash.bktcache.BktCacheStats;

/**
 * A snapshot of an index's figures.
 *
 * @param size                items stored
 * @param capacity            slots in all levels
 * @param loadFactor          size / capacity
 * @param levels              levels in the table (more by one while a resize runs)
 * @param topLevelLog2        the top level has 2^topLevelLog2 buckets
 * @param resizes             resizes completed since the pool was created
 * @param heapGrowths         value heap growths since this open
 * @param valueBlocks         value blocks in the heap
 * @param valueBlocksFree     value blocks free
 * @param pendingReclamation  value blocks retired but not yet free (waiting for readers)
 * @param fileBytes           length of the pool file
 * @param persistenceMode     how writes are made durable
 * @param backend             which engine runs the operations
 * @param lastRecovery        what recovery did when the pool was opened
 * @param bucketCache         BktCache's figures (hit rate, loads); {@link BktCacheStats#disabled()} without one
 * @param indexPlacement      where the engine probes the index, and why: the GPU engine's HBM mirror or
 *                            the pool itself (with the reason the mirror is off); the CPU engine probes the pool
 */
public record IndexStats(long size, long capacity, double loadFactor, int levels, int topLevelLog2, long resizes,
                         long heapGrowths, long valueBlocks, long valueBlocksFree, long pendingReclamation,
                         long fileBytes, PersistenceMode persistenceMode, Backend backend, RecoveryReport lastRecovery,
                         BktCacheStats bucketCache, String indexPlacement) implements Serializable {

    /**
     * These figures with the engine's cache figures.
     *
     * @param cache the cache's figures
     * @return a copy with them
     */
    public IndexStats withBucketCache(BktCacheStats cache) {
        return new IndexStats(size, capacity, loadFactor, levels, topLevelLog2, resizes, heapGrowths, valueBlocks,
                valueBlocksFree, pendingReclamation, fileBytes, persistenceMode, backend, lastRecovery, cache,
                indexPlacement);
    }

    /**
     * These figures with the engine's value-heap figures and index placement (an engine that keeps the heap's bitmap itself).
     *
     * @param blocks     value blocks in the heap
     * @param blocksFree value blocks free
     * @param placement  where the engine probes the index, and why
     * @return a copy with them
     */
    public IndexStats withEngineState(long blocks, long blocksFree, String placement) {
        return new IndexStats(size, capacity, loadFactor, levels, topLevelLog2, resizes, heapGrowths, blocks, blocksFree,
                pendingReclamation, fileBytes, persistenceMode, backend, lastRecovery, bucketCache, placement);
    }

    /** {@return pool file bytes per item stored: the pool's footprint against what it holds (0 when empty)} */
    public double poolBytesPerItem() {
        return size == 0 ? 0 : (double) fileBytes / size;
    }

    @Override
    public String toString() {
        return String.format("size=%d capacity=%d loadFactor=%.3f levels=%d topLevel=2^%d resizes=%d heapGrowths=%d "
                        + "valueBlocks=%d (free %d, pending %d) fileBytes=%d (%.1f per item) persistence=%s backend=%s "
                        + "index=%s",
                size, capacity, loadFactor, levels, topLevelLog2, resizes, heapGrowths, valueBlocks, valueBlocksFree,
                pendingReclamation, fileBytes, poolBytesPerItem(), persistenceMode.description(), backend,
                indexPlacement)
                + (bucketCache.capacityBuckets() > 0 ? " " + bucketCache : "");
    }
}
