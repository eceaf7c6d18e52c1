package org.gphash.cuda.runtime;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import org.gphash.Geometry;
import org.gphash.format.PoolHeader;
import org.gphash.format.ValueFormat;
import org.gphash.table.TableLayout;

/**
 * The kernels' parameter structs (cuda/src/main/cuda/gphash/core/table_params.cuh and pool/scan_params.cuh),
 * packed byte for byte: every field is 8 bytes, little-endian, in declaration order. Passed by value.
 */
public final class KernelParams {

    public static final int MAX_LEVELS = 12;
    public static final int MAX_HASHES = 4;

    // The parameter structs, field by field as the CUDA headers declare them (SharedConstantsTest
    // compares each with its header by name and order); the packers below fill them by name.
    /** TableParams (core/table_params.cuh). */
    public static final ParamStruct TABLE = ParamStruct.of("TableParams", "pool", "level_offset[" + MAX_LEVELS + "]",
            "top_log2", "level_count", "hashes", "slots", "key_size", "key_stride", "slot_size", "bucket_size",
            "value_size", "seed[" + MAX_HASHES + "]", "tags", "format", "value_class");
    /** BatchParams (core/table_params.cuh). */
    public static final ParamStruct BATCH = ParamStruct.of("BatchParams", "n", "kinds", "keys", "values", "blocks",
            "codes", "out", "retired", "retired_capacity", "counters", "retry_only", "group_owner", "group_top",
            "group_count", "group_capacity", "op_group", "op_next");
    /** ScanParams (pool/scan_params.cuh). */
    public static final ParamStruct SCAN = ParamStruct.of("ScanParams", "depth", "counters", "retired",
            "retired_capacity", "chunk_offset", "chunk_length", "chunk_first", "chunks", "value_stride", "bitmap", "mode", "segment_class");
    /** CacheParams (cache/cache_params.cuh). */
    public static final ParamStruct CACHE = ParamStruct.of("CacheParams", "capacity", "f", "g", "refs", "entries",
            "slot_size", "scores", "total_buckets", "policy", "sample_mask", "clock", "stats");
    /** LoadParams (cache/cache_load.cuh). */
    public static final ParamStruct LOAD = ParamStruct.of("LoadParams", "assign", "keep", "incoming", "prev_hot",
            "snapshot", "state", "hist", "k", "scan_guard", "sequence", "max_tries");
    /** HeapParams (pipeline/heap_bitmap.cuh). */
    public static final ParamStruct HEAP = ParamStruct.of("HeapParams", "bitmap", "words", "chunk_offset",
            "chunk_length", "chunk_first", "chunks", "stride", "free_prefix", "cursor", "segmented", "segments",
            "seg_offset", "seg_class", "seg_used", "free_stack", "seg_state", "class_table", "take_class", "seg_room");
    /** SortPass (pipeline/pipeline.cuh). */
    public static final ParamStruct SORT_PASS = ParamStruct.of("SortPass", "keys", "vals", "keys_out", "vals_out", "n",
            "n_at", "shift", "counts", "tiles");
    /** ScanArgs (pipeline/pipeline.cuh). */
    public static final ParamStruct SCAN_ARGS = ParamStruct.of("ScanArgs", "in", "out", "n", "partials");
    /** PackedColumn (pipeline/packed_columns.cuh). */
    public static final ParamStruct PACKED_COLUMN = ParamStruct.of("PackedColumn", "n", "packed", "offsets", "lengths",
            "column", "value_size");
    /** PartGather (pipeline/part_columns.cuh). */
    public static final ParamStruct PART_GATHER = ParamStruct.of("PartGather", "n", "positions", "base", "kinds_from",
            "keys_from", "values_from", "kinds_to", "keys_to", "values_to", "key_size", "value_size");
    /** PartScatter (pipeline/part_columns.cuh). */
    public static final ParamStruct PART_SCATTER = ParamStruct.of("PartScatter", "n", "positions", "codes_from",
            "values_from", "codes_to", "values_to", "value_size");
    /** ShardSplit (pipeline/shard_split.cuh). */
    public static final ParamStruct SHARD_SPLIT = ParamStruct.of("ShardSplit", "n", "kinds", "keys", "key_size", "seed",
            "shards", "shard_of", "positions", "totals");
    /** PipeBatch (pipeline/pipe_params.cuh): a batch's columns as the pipeline's kernels read them. */
    public static final ParamStruct PIPE_BATCH = ParamStruct.of("PipeBatch", "n", "kinds", "keys", "values", "codes",
            "out", "ops", "clock", "out_at", "lengths", "out_lengths");
    /** PipeParams (pipeline/pipe_params.cuh): the pipeline's device buffers. */
    public static final ParamStruct PIPE = ParamStruct.of("PipeParams", "batch", "capacity", "table_capacity",
            "sort_keys", "sort_vals", "sorted_entry", "sorted_op", "last_set", "last_src", "vsrc", "owner", "g_start",
            "g_end", "g_meta", "g_slot", "g_bucket", "g_fp", "g_hash", "g_action", "g_src", "g_block", "g_read",
            "g_need", "g_len", "groups", "inserts", "vwrites", "deletes", "unsorted_off", "unsorted_ent", "reads",
            "slot_writes", "bins", "bin_start", "bin_fill", "gather", "blocks", "vclass", "counters", "address_shift",
            "lines", "line_groups");

    public static final int TABLE_BYTES = TABLE.words() * 8;
    public static final int BATCH_FIELDS = BATCH.words();
    public static final int SCAN_FIELDS = SCAN.words();
    public static final int CACHE_FIELDS = CACHE.words();
    public static final int LOAD_FIELDS = LOAD.words();

    /** CacheParams.stats (cache/cache_params.cuh). */
    public static final int CACHE_HITS = 0;
    public static final int CACHE_MISSES = 1;
    public static final int CACHE_STATS = 4;

    /** LoadParams.state (cache/cache_load.cuh). */
    public static final int LOAD_LOADED = 8;
    public static final int LOAD_ABANDONED = 9;
    public static final int LOAD_CHOSEN = 11;
    public static final int LOAD_STATE = 16;
    /** Entries an F(x) word can name (cache/cache_params.cuh, kEntryMask). */
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
    /** Marking by class ({@link #SCAN_BY_CLASS}): items whose word names another class than a block beside theirs in a segment. */
    public static final int OTHER_CLASSES = 9;
    public static final int SCAN_COUNTERS = 16;

    /** ScanMode bits (ScanParams.mode). */
    public static final int SCAN_JUDGE_ONLY = 1;
    public static final int SCAN_VALID_ONLY = 2;
    /** Format 3's heap marked by class: chunks are segments, blocks 16-byte units, each segment's class recorded. */
    public static final int SCAN_BY_CLASS = 4;

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
    public static final int PIPE_HEAP_DISAGREE = 19;
    public static final int PIPE_COUNTERS = 20;
    /** kAddressBins (pipeline/pipe_params.cuh). */
    public static final int ADDRESS_BINS = 1 << 16;
    /** PipeBatch fields (pipeline/pipe_params.cuh). */
    public static final int PIPE_BATCH_FIELDS = PIPE_BATCH.words();
    public static final int PIPE_FIELDS = PIPE.words();
    public static final int HEAP_FIELDS = HEAP.words();
    /** Tiles of the device-wide scans and sorts (device_scan.cuh, radix_sort.cuh). */
    public static final int SCAN_TILE = 2048;
    public static final int SORT_TILE = 2048;
    public static final int RADIX = 256;
    /** Runs sorted in one block, scans run in one block (radix_sort.cuh, device_scan.cuh). */
    public static final int BLOCK_SORT_MAX = 4096;
    public static final int SMALL_SCAN_MAX = 8 * SCAN_TILE;
    /** Bytes of one slot's tag beside the HBM mirror (pipeline/mirror_tags.cuh). */
    public static final int TAG_BYTES = 2;

    /** The one-launch small writes' flag word (pipeline/pipe_small_writes.cuh, kSmall*). */
    public static final int SMALL_READS = 1;
    public static final int SMALL_WRITES = 2;
    public static final int SMALL_CACHE_ON = 4;

    /** Outcome code bits (core/table_params.cuh). */
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

    public static byte[] table(long poolAddress, TableLayout layout, Geometry g, long[] seeds, int formatVersion) {
        long[] offsets = new long[layout.levelCount()];
        for (int d = 0; d < offsets.length; d++) {
            offsets[d] = layout.levelOffset(d);
        }
        return table(poolAddress, offsets, layout, g, seeds, formatVersion, 0);
    }

    /**
     * TableParams with the given level positions: pool offsets with the pool's address, or, for the
     * HBM mirror, the device addresses of the level copies with a base of 0 (pipeline/index_mirror.cuh)
     * and its tag array's (pipeline/mirror_tags.cuh; 0 for the pool).
     */
    public static byte[] table(long base, long[] levelPositions, TableLayout layout, Geometry g, long[] seeds,
                               int formatVersion, long tags) {
        if (layout.levelCount() > MAX_LEVELS) {
            throw new IllegalStateException("a table of " + layout.levelCount() + " levels; kernels take " + MAX_LEVELS);
        }
        ParamStruct.Writer w = TABLE.writer().put("pool", base);
        for (int d = 0; d < MAX_LEVELS; d++) {
            w.put("level_offset", d, d < layout.levelCount() ? levelPositions[d] : 0);
        }
        w.put("top_log2", layout.topLog2()).put("level_count", layout.levelCount()).put("hashes", g.hashes())
                .put("slots", g.slotsPerBucket()).put("key_size", g.keySize()).put("key_stride", g.keyStride())
                .put("slot_size", g.slotSize()).put("bucket_size", g.bucketSize()).put("value_size", g.valueSize());
        for (int j = 0; j < MAX_HASHES; j++) {
            w.put("seed", j, seeds[j]);
        }
        // Format 3's words name the class of the pool's value size: every value the kernels write has it.
        // The class of a value of the value size, as the CPU engine chooses it (bare where it is a block size).
        int valueClass = formatVersion == PoolHeader.FORMAT_3
                ? ValueFormat.of(formatVersion, g.valueSize(), g.itemChecksums()).classOf(g.valueSize()) : -1;
        return w.put("tags", tags).put("format", formatVersion).put("value_class", valueClass).bytes();
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
        return BATCH.writer().put("n", n).put("kinds", kinds).put("keys", keys).put("values", values)
                .put("blocks", blocks).put("codes", codes).put("out", out).put("retired", retired)
                .put("retired_capacity", retiredCapacity).put("counters", counters).put("retry_only", retryOnly)
                .put("group_owner", groups[0]).put("group_top", groups[1]).put("group_count", groups[2])
                .put("group_capacity", groups[3]).put("op_group", groups[4]).put("op_next", groups[5]).bytes();
    }

    /** CacheParams; capacity 0 means no cache (every other field unused). */
    public static byte[] cache(long capacity, long f, long g, long refs, long entries, long slotSize, long scores,
                        long totalBuckets, int policy, long sampleMask, long clock, long stats) {
        return CACHE.writer().put("capacity", capacity).put("f", f).put("g", g).put("refs", refs)
                .put("entries", entries).put("slot_size", slotSize).put("scores", scores)
                .put("total_buckets", totalBuckets).put("policy", policy).put("sample_mask", sampleMask)
                .put("clock", clock).put("stats", stats).bytes();
    }

    /** CacheParams of no cache. */
    public static byte[] noCache() {
        return new byte[CACHE_FIELDS * 8];
    }

    /** LoadParams. */
    public static byte[] load(long assign, long keep, long incoming, long prevHot, long snapshot, long state, long hist, long k,
                       boolean scanGuard, long sequence, long maxTries) {
        return LOAD.writer().put("assign", assign).put("keep", keep).put("incoming", incoming).put("prev_hot", prevHot)
                .put("snapshot", snapshot).put("state", state).put("hist", hist).put("k", k).put("scan_guard", scanGuard)
                .put("sequence", sequence).put("max_tries", maxTries).bytes();
    }

    /** SortPass (pipeline/pipeline.cuh). */
    public static byte[] sortPass(long keys, long vals, long keysOut, long valsOut, long n, long nAt, int shift, long counts,
                           long tiles) {
        return SORT_PASS.writer().put("keys", keys).put("vals", vals).put("keys_out", keysOut).put("vals_out", valsOut)
                .put("n", n).put("n_at", nAt).put("shift", shift).put("counts", counts).put("tiles", tiles).bytes();
    }

    /** ScanArgs (pipeline/pipeline.cuh). */
    public static byte[] scanArgs(long in, long out, long n, long partials) {
        return SCAN_ARGS.writer().put("in", in).put("out", out).put("n", n).put("partials", partials).bytes();
    }

    /** PipeBatch: a batch's columns (device addresses) for the pipeline's kernels. */
    public static ParamStruct.Writer pipeBatch(long n, long kinds, long keys, long values, long codes, long out, long ops,
                                               long clock, long outAt, long lengths, long outLengths) {
        return PIPE_BATCH.writer().put("n", n).put("kinds", kinds).put("keys", keys).put("values", values)
                .put("codes", codes).put("out", out).put("ops", ops).put("clock", clock).put("out_at", outAt)
                .put("lengths", lengths).put("out_lengths", outLengths);
    }

    /** HeapParams (pipeline/heap_params.cuh) of format 2's one bitmap (pipeline/heap_bitmap.cuh). */
    public static byte[] heap(long bitmap, long words, long chunkOffsets, long chunkLengths, long chunkFirst, long chunks,
                       long stride, long freePrefix, long cursor) {
        return HEAP.writer().put("bitmap", bitmap).put("words", words).put("chunk_offset", chunkOffsets)
                .put("chunk_length", chunkLengths).put("chunk_first", chunkFirst).put("chunks", chunks)
                .put("stride", stride).put("free_prefix", freePrefix).put("cursor", cursor).put("segmented", 0)
                .put("segments", 0).put("seg_offset", 0).put("seg_class", 0).put("seg_used", 0).put("free_stack", 0)
                .put("seg_state", 0).put("class_table", 0).put("take_class", 0).put("seg_room", 0).bytes();
    }

    /** HeapParams (pipeline/heap_params.cuh) of format 3's segments (pipeline/heap_segments.cuh). */
    public static byte[] segmentHeap(long unitBits, long words, long segments, long offsets, long classes, long used,
                                     long freeStack, long state, long classTable, int takeClass, long room) {
        return HEAP.writer().put("bitmap", unitBits).put("words", words).put("chunk_offset", 0).put("chunk_length", 0)
                .put("chunk_first", 0).put("chunks", 0).put("stride", 0).put("free_prefix", 0).put("cursor", 0)
                .put("segmented", 1).put("segments", segments)
                .put("seg_offset", offsets).put("seg_class", classes).put("seg_used", used).put("free_stack", freeStack)
                .put("seg_state", state).put("class_table", classTable).put("take_class", takeClass)
                .put("seg_room", room).bytes();
    }

    /**
     * heap_segments.cuh's state words (HeapParams.seg_state): the free stack's top; the last take's plan
     * (the top before it, segments popped, blocks taken from them); each class's free blocks from
     * SEG_HELD_FREE and the blocks the last take found in held segments from SEG_HELD_TAKEN.
     */
    public static final int SEG_TOP = 0;
    public static final int SEG_TOP_BEFORE = 3;
    public static final int SEG_POPPED = 4;
    public static final int SEG_FRESH = 5;
    /** Runs of the take class freed since the heap was pushed (pools whose blocks take runs of segments). */
    public static final int SEG_RUNS_FREED = 7;
    /** Words of the units' bitmap a 64 KiB segment has (one bit per 16 bytes). */
    public static final int SEGMENT_WORDS = 64;
    public static final int SEG_HELD_FREE = 8;
    public static final int SEG_HELD_TAKEN = SEG_HELD_FREE + 5 * 128;
    public static final int SEG_STATE_WORDS = SEG_HELD_FREE + 6 * 128 + 2 * 129;

    /** PartGather and PartScatter (pipeline/part_columns.cuh): their 8-byte fields. */
    public static final int PART_GATHER_FIELDS = PART_GATHER.words();
    public static final int PART_SCATTER_FIELDS = PART_SCATTER.words();

    /** PartGather: a chunk of a part gathered from its caller's pinned columns into a lane's device buffers. */
    public static byte[] partGather(long n, long positions, long base, long kindsFrom, long keysFrom, long valuesFrom,
                                    long kindsTo, long keysTo, long valuesTo, int keySize, int valueSize) {
        return PART_GATHER.writer().put("n", n).put("positions", positions).put("base", base)
                .put("kinds_from", kindsFrom).put("keys_from", keysFrom).put("values_from", valuesFrom)
                .put("kinds_to", kindsTo).put("keys_to", keysTo).put("values_to", valuesTo).put("key_size", keySize)
                .put("value_size", valueSize).bytes();
    }

    /** PackedColumn: a chunk's values between their packed bytes and their places of the value size. */
    public static byte[] packedColumn(long n, long packed, long offsets, long lengths, long column, int valueSize) {
        return PACKED_COLUMN.writer().put("n", n).put("packed", packed).put("offsets", offsets).put("lengths", lengths)
                .put("column", column).put("value_size", valueSize).bytes();
    }

    /** PartScatter: a chunk's outcomes (and values read) scattered to their positions of the caller's pinned result. */
    public static byte[] partScatter(long n, long positions, long codesFrom, long valuesFrom, long codesTo, long valuesTo,
                                     int valueSize) {
        return PART_SCATTER.writer().put("n", n).put("positions", positions).put("codes_from", codesFrom)
                .put("values_from", valuesFrom).put("codes_to", codesTo).put("values_to", valuesTo)
                .put("value_size", valueSize).bytes();
    }

    /** ShardSplit (pipeline/shard_split.cuh): its 8-byte fields, and the counts after the shards' in its totals. */
    public static final int SHARD_SPLIT_FIELDS = SHARD_SPLIT.words();
    public static final int SPLIT_WRITES = 0;
    public static final int SPLIT_READS = 1;
    public static final int SPLIT_REFUSED = 2;
    public static final int SPLIT_TOTALS = 3;

    /** ShardSplit: each operation of a device-resident batch's shard and position, and the batch's totals. */
    public static byte[] shardSplit(long n, long kinds, long keys, int keySize, long seed, int shards, long shardOf,
                                    long positions, long totals) {
        return SHARD_SPLIT.writer().put("n", n).put("kinds", kinds).put("keys", keys).put("key_size", keySize)
                .put("seed", seed).put("shards", shards).put("shard_of", shardOf).put("positions", positions)
                .put("totals", totals).bytes();
    }

    /** A kernel's {@code int} parameter. */
    public static byte[] int32(int value) {
        return ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(value).array();
    }

    /** ScanParams ({@code segmentClass}: each segment's class where {@code mode} has {@link #SCAN_BY_CLASS}, else 0). */
    public static byte[] scan(int depth, long counters, long retired, long retiredCapacity, long chunkOffsets, long chunkLengths,
                       long chunkFirst, long chunks, long valueStride, long bitmap, int mode, long segmentClass) {
        return SCAN.writer().put("depth", depth).put("counters", counters).put("retired", retired)
                .put("retired_capacity", retiredCapacity).put("chunk_offset", chunkOffsets)
                .put("chunk_length", chunkLengths).put("chunk_first", chunkFirst).put("chunks", chunks)
                .put("value_stride", valueStride).put("bitmap", bitmap).put("mode", mode)
                .put("segment_class", segmentClass).bytes();
    }
}
