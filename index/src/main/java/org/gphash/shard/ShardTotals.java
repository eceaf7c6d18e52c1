package org.gphash.shard;

import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;

import org.gphash.IndexStats;
import org.gphash.RecoveryReport;
import org.gphash.bktcache.BktCacheStats;

/** A sharded index's figures: the shards' summed, or taken from the largest where a sum means nothing. */
public final class ShardTotals {

    private ShardTotals() {
    }

    /**
     * The index's figures from its shards': counts and bytes summed, levels and the top level the
     * largest shard's, BktCache's figures shard 0's (each shard's are in {@code shardStats}), the
     * placement every shard's, and {@code recovery} as the last recovery.
     */
    public static IndexStats stats(List<IndexStats> shards, RecoveryReport recovery) {
        long size = 0;
        long capacity = 0;
        long resizes = 0;
        long growths = 0;
        long blocks = 0;
        long free = 0;
        long pending = 0;
        long bytes = 0;
        int levels = 0;
        int top = 0;
        for (IndexStats s : shards) {
            size += s.size();
            capacity += s.capacity();
            resizes += s.resizes();
            growths += s.heapGrowths();
            blocks += s.valueBlocks();
            free += s.valueBlocksFree();
            pending += s.pendingReclamation();
            bytes += s.fileBytes();
            levels = Math.max(levels, s.levels());
            top = Math.max(top, s.topLevelLog2());
        }
        IndexStats first = shards.get(0);
        String placements = shards.stream().map(IndexStats::indexPlacement).distinct().collect(Collectors.joining("; "));
        return new IndexStats(size, capacity, capacity == 0 ? 0 : (double) size / capacity, levels, top, resizes, growths,
                blocks, free, pending, bytes, first.persistenceMode(), first.backend(), recovery,
                BktCacheStats.total(shards.stream().map(IndexStats::bucketCache).toList()),
                shards.size() + " shards: " + placements);
    }

    /**
     * What recovery did across the shards: counts summed, a flag set where any shard's is (clean
     * shutdown and trusted close records only where every shard's was), and {@code openTime} as the
     * duration (the shards recover at once).
     */
    public static RecoveryReport recovery(List<RecoveryReport> shards, Duration openTime) {
        boolean clean = true;
        boolean headerRepaired = false;
        boolean resumed = false;
        boolean fromClose = true;
        long insertSlots = 0;
        long torn = 0;
        long duplicates = 0;
        long rehashed = 0;
        long items = 0;
        long inUse = 0;
        long free = 0;
        long trailing = 0;
        for (RecoveryReport r : shards) {
            clean &= r.previousShutdownClean();
            headerRepaired |= r.headerCopyRepaired();
            resumed |= r.resizeResumed();
            fromClose &= r.fromCloseRecord();
            insertSlots += r.insertSlotsCleared();
            torn += r.tornSlotsCleared();
            duplicates += r.duplicatesRemoved();
            rehashed += r.itemsRehashed();
            items += r.items();
            inUse += r.valueBlocksInUse();
            free += r.valueBlocksFree();
            trailing += r.trailingBytesIgnored();
        }
        return new RecoveryReport(clean, headerRepaired, insertSlots, torn, duplicates, resumed, rehashed, items, inUse,
                free, trailing, openTime, fromClose);
    }
}
