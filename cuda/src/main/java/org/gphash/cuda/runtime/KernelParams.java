package org.gphash.cuda.runtime;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import org.gphash.format.Geometry;
import org.gphash.index.TableLayout;

/**
 * The kernels' parameter structs (cuda/src/main/cuda/gphash/table_params.cuh and scan_params.cuh),
 * packed byte for byte: every field is 8 bytes, little-endian, in declaration order. Passed by value.
 */
public final class KernelParams {

    public static final int MAX_LEVELS = 12;
    public static final int MAX_HASHES = 4;
    public static final int TABLE_BYTES = 8 + MAX_LEVELS * 8 + 9 * 8 + MAX_HASHES * 8 + 8;
    public static final int BATCH_FIELDS = 17;
    public static final int SCAN_FIELDS = 11;
    public static final int CACHE_FIELDS = 12;
    public static final int LOAD_FIELDS = 11;

    /** CacheParams.stats (cache_params.cuh). */
    public static final int CACHE_HITS = 0;
    public static final int CACHE_MISSES = 1;
    public static final int CACHE_STATS = 4;

    /** LoadParams.state (cache_load.cuh). */
    public static final int LOAD_LOADED = 8;
    public static final int LOAD_ABANDONED = 9;
    public static final int LOAD_CHOSEN = 11;
    public static final int LOAD_STATE = 16;
    /** Entries an F(x) word can name (cache_params.cuh, kEntryMask). */
    public static final long MAX_CACHE_ENTRIES = (1L << 30) - 1;

    /** Batch counters (BatchParams.counters), as kernels index them. */
    public static final int RETIRED_COUNT = 0;
    public static final int ITEMS_ADDED = 1;
    public static final int ITEMS_REMOVED = 2;
    public static final int NEED_RESIZE = 3;
    public static final int COUNTERS = 8;

    /** Scan counters (ScanParams.counters). */
    public static final int INSERT_CLEARED = 0;
    public static final int TORN_CLEARED = 1;
    public static final int DUPLICATES_CLEARED = 2;
    public static final int ITEMS = 3;
    public static final int BAD_OFFSETS = 4;
    public static final int SHARED_BLOCKS = 5;
    public static final int MOVED = 6;
    public static final int UNPLACED = 7;
    public static final int SCAN_RETIRED = 8;
    public static final int SCAN_COUNTERS = 16;

    /** ScanMode bits (ScanParams.mode). */
    public static final int SCAN_JUDGE_ONLY = 1;
    public static final int SCAN_VALID_ONLY = 2;

    /** PipeCounter (pipeline/pipe_params.cuh). */
    public static final int PIPE_GROUPS = 0;
    public static final int PIPE_INSERTS = 1;
    public static final int PIPE_VALUE_WRITES = 2;
    public static final int PIPE_DELETES = 3;
    public static final int PIPE_DISTINCT = 4;
    public static final int PIPE_READS = 5;
    public static final int PIPE_SLOT_WRITES = 6;
    public static final int PIPE_ITEMS_ADDED = 7;
    public static final int PIPE_ITEMS_REMOVED = 8;
    public static final int PIPE_NEED_RESIZE = 9;
    public static final int PIPE_BLOCKS_TAKEN = 10;
    public static final int PIPE_BLOCKS_FREED = 11;
    public static final int PIPE_CACHE_HITS = 12;
    public static final int PIPE_CACHE_MISSES = 13;
    public static final int PIPE_HEAP_SHORT = 14;
    public static final int PIPE_FREE_ERRORS = 15;
    public static final int PIPE_SORT_N = 16;
    public static final int PIPE_UNGROUPED = 17;
    public static final int PIPE_REPEATS = 18;
    public static final int PIPE_COUNTERS = 20;
    /** kAddressBins (pipeline/pipe_params.cuh). */
    public static final int ADDRESS_BINS = 1 << 16;
    /** PipeBatch fields (pipeline/pipe_params.cuh). */
    public static final int PIPE_BATCH_FIELDS = 9;
    public static final int PIPE_FIELDS = 40;
    public static final int HEAP_FIELDS = 9;
    /** Tiles of the device-wide scans and sorts (device_scan.cuh, radix_sort.cuh). */
    public static final int SCAN_TILE = 2048;
    public static final int SORT_TILE = 2048;
    public static final int RADIX = 256;
    /** Runs sorted in one block, scans run in one block (radix_sort.cuh, device_scan.cuh). */
    public static final int BLOCK_SORT_MAX = 4096;
    public static final int SMALL_SCAN_MAX = 8 * SCAN_TILE;
    /** Bytes of one slot's tag beside the HBM mirror (pipeline/mirror_tags.cuh). */
    public static final int TAG_BYTES = 2;

    /** Outcome code bits (table_params.cuh). */
    public static final int CODE_MASK = 0x7f;
    public static final int CONSUMED_FLAG = 0x80;
    public static final int NEED_RESIZE_CODE = 15;

    private KernelParams() {
    }

    /**
     * Entries of the retired-block list a batch of {@code n} operations gets: each operation unlinks
     * its old value and the duplicates it meets, so 2n plus slack; past it the host rebuilds free space.
     */
    public static long retiredCapacity(long n) {
        return 2 * n + 64;
    }

    public static byte[] table(long poolAddress, TableLayout layout, Geometry g, long[] seeds) {
        long[] offsets = new long[layout.levelCount()];
        for (int d = 0; d < offsets.length; d++) {
            offsets[d] = layout.levelOffset(d);
        }
        return table(poolAddress, offsets, layout, g, seeds, 0);
    }

    /**
     * TableParams with the given level positions: pool offsets with the pool's address, or, for the
     * HBM mirror, the device addresses of the level copies with a base of 0 (pipeline/index_mirror.cuh)
     * and its tag array's (pipeline/mirror_tags.cuh; 0 for the pool).
     */
    public static byte[] table(long base, long[] levelPositions, TableLayout layout, Geometry g, long[] seeds,
                               long tags) {
        if (layout.levelCount() > MAX_LEVELS) {
            throw new IllegalStateException("a table of " + layout.levelCount() + " levels; kernels take " + MAX_LEVELS);
        }
        ByteBuffer b = ByteBuffer.allocate(TABLE_BYTES).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(base);
        for (int d = 0; d < MAX_LEVELS; d++) {
            b.putLong(d < layout.levelCount() ? levelPositions[d] : 0);
        }
        b.putLong(layout.topLog2());
        b.putLong(layout.levelCount());
        b.putLong(g.hashes());
        b.putLong(g.slotsPerBucket());
        b.putLong(g.keySize());
        b.putLong(g.keyStride());
        b.putLong(g.slotSize());
        b.putLong(g.bucketSize());
        b.putLong(g.valueSize());
        for (int j = 0; j < MAX_HASHES; j++) {
            b.putLong(seeds[j]);
        }
        b.putLong(tags);
        return b.array();
    }

    public static byte[] longs(long... fields) {
        ByteBuffer b = ByteBuffer.allocate(fields.length * 8).order(ByteOrder.LITTLE_ENDIAN);
        for (long f : fields) {
            b.putLong(f);
        }
        return b.array();
    }

    /** BatchParams. */
    public static byte[] batch(long n, long kinds, long keys, long values, long blocks, long codes, long out, long retired,
                        long retiredCapacity, long counters, boolean retryOnly, long[] groups) {
        if (groups.length != 6) {
            throw new IllegalArgumentException("six group fields, got " + groups.length);
        }
        return longs(n, kinds, keys, values, blocks, codes, out, retired, retiredCapacity, counters, retryOnly ? 1 : 0,
                groups[0], groups[1], groups[2], groups[3], groups[4], groups[5]);
    }

    /** CacheParams; capacity 0 means no cache (every other field unused). */
    public static byte[] cache(long capacity, long f, long g, long refs, long entries, long slotSize, long scores,
                        long totalBuckets, int policy, long sampleMask, long clock, long stats) {
        return longs(capacity, f, g, refs, entries, slotSize, scores, totalBuckets, policy, sampleMask, clock, stats);
    }

    /** CacheParams of no cache. */
    public static byte[] noCache() {
        return new byte[CACHE_FIELDS * 8];
    }

    /** LoadParams. */
    public static byte[] load(long assign, long keep, long incoming, long prevHot, long snapshot, long state, long hist, long k,
                       boolean scanGuard, long sequence, long maxTries) {
        return longs(assign, keep, incoming, prevHot, snapshot, state, hist, k, scanGuard ? 1 : 0, sequence, maxTries);
    }

    /** SortPass (pipeline/pipeline.cuh). */
    public static byte[] sortPass(long keys, long vals, long keysOut, long valsOut, long n, long nAt, int shift, long counts,
                           long tiles) {
        return longs(keys, vals, keysOut, valsOut, n, nAt, shift, counts, tiles);
    }

    /** ScanArgs (pipeline/pipeline.cuh). */
    public static byte[] scanArgs(long in, long out, long n, long partials) {
        return longs(in, out, n, partials);
    }

    /** HeapParams (pipeline/heap_bitmap.cuh). */
    public static byte[] heap(long bitmap, long words, long chunkOffsets, long chunkLengths, long chunkFirst, long chunks,
                       long stride, long freePrefix, long cursor) {
        return longs(bitmap, words, chunkOffsets, chunkLengths, chunkFirst, chunks, stride, freePrefix, cursor);
    }

    /** PartGather and PartScatter (pipeline/part_columns.cuh): their 8-byte fields. */
    public static final int PART_GATHER_FIELDS = 11;
    public static final int PART_SCATTER_FIELDS = 7;

    /** PartGather: a chunk of a part gathered from its caller's pinned columns into a lane's device buffers. */
    public static byte[] partGather(long n, long positions, long base, long kindsFrom, long keysFrom, long valuesFrom,
                                    long kindsTo, long keysTo, long valuesTo, int keySize, int valueSize) {
        return longs(n, positions, base, kindsFrom, keysFrom, valuesFrom, kindsTo, keysTo, valuesTo, keySize, valueSize);
    }

    /** PartScatter: a chunk's outcomes (and values read) scattered to their positions of the caller's pinned result. */
    public static byte[] partScatter(long n, long positions, long codesFrom, long valuesFrom, long codesTo, long valuesTo,
                                     int valueSize) {
        return longs(n, positions, codesFrom, valuesFrom, codesTo, valuesTo, valueSize);
    }

    /** ShardSplit (pipeline/shard_split.cuh): its 8-byte fields, and the counts after the shards' in its totals. */
    public static final int SHARD_SPLIT_FIELDS = 9;
    public static final int SPLIT_WRITES = 0;
    public static final int SPLIT_READS = 1;
    public static final int SPLIT_REFUSED = 2;
    public static final int SPLIT_TOTALS = 3;

    /** ShardSplit: each operation of a device-resident batch's shard and position, and the batch's totals. */
    public static byte[] shardSplit(long n, long kinds, long keys, int keySize, long seed, int shards, long shardOf,
                                    long positions, long totals) {
        return longs(n, kinds, keys, keySize, seed, shards, shardOf, positions, totals);
    }

    /** A kernel's {@code int} parameter. */
    public static byte[] int32(int value) {
        return ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(value).array();
    }

    /** ScanParams. */
    public static byte[] scan(int depth, long counters, long retired, long retiredCapacity, long chunkOffsets, long chunkLengths,
                       long chunkFirst, long chunks, long valueStride, long bitmap, int mode) {
        return longs(depth, counters, retired, retiredCapacity, chunkOffsets, chunkLengths, chunkFirst, chunks,
                valueStride, bitmap, mode);
    }
}
