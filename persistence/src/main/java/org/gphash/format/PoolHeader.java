package org.gphash.format;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.zip.CRC32C;

import org.gphash.Geometry;
import org.gphash.error.PoolFormatException;

/**
 * The on-media header of a pool: everything needed to interpret the rest of the file, as offsets
 * only (never addresses). Immutable; {@link HeaderStore} writes and reads it.
 *
 * <p>Layout of one copy (all little-endian, {@link #COPY_BYTES} bytes, CRC32C over everything
 * before the checksum field):
 * <pre>
 *    0 magic            8   "GPHASHP\0"
 *    8 format version   4
 *   12 copy size        4
 *   16 sequence         8   increases with every commit
 *   24 key size         4
 *   28 value size       4
 *   32 levels           4   geometry: levels, hashes, slots per bucket
 *   36 hashes           4
 *   40 slots/bucket     4
 *   44 flags            4   bit 0: clean shutdown; bit 1: item checksums (fixed at create)
 *   48 seeds            4 x 8
 *   80 top level log2   4   the top level has 2^this buckets
 *   84 active levels    4   = levels, or up to levels + 4 while a resize is in progress
 *   88 resize state     4   0 none, 1 rehashing bottom levels into the others
 *   92 heap chunks      4   number of entries used in the chunk table
 *   96 resizes          8   completed resizes since creation
 *  104 file length      8   committed length; bytes beyond it are not part of the pool
 *  112 created (ms)     8
 *  128 level offsets   12 x 8   bottom level first
 *  224 pool identity    8   random at create, never 0; every level and heap chunk carries it ({@link ExtentTag})
 *  232 ops in flight    8   the most operations that may have been in flight at a crash (recovery's damage bound)
 *  240 close record     8 + 4 + 4   offset, length, CRC32C of the last clean close's {@link CloseRecord} (0: none)
 *  256 heap chunk table 96 x (offset 8, length 8)
 * 1760 shard membership 32  in a shard's pool (at most 94 chunks), in place of the last two entries:
 *                           index identity 8, shard seed 8, shard 4, shards 4, epoch 8 ({@link ShardMembership})
 * 1792 checksum         4   CRC32C of bytes [0, 1792)
 * </pre>
 */
public record PoolHeader(long sequence, Geometry geometry, boolean cleanShutdown, long[] seeds, int topLog2,
                         long[] levelOffsets, boolean resizing, List<HeapChunk> heapChunks, long resizes,
                         long fileLength, long createdMillis, long poolId, long opsInFlightLimit,
                         CloseRecordRef closeRecord, ShardMembership membership, int formatVersion) {

    /**
     * What ties a shard's pool to its sharded index (issue 52: a crafted manifest, shards swapped or a
     * shard restored from an older copy of itself were accepted): the index's identity, the shard
     * function's seed, this shard's number and the shard count, and the index's open epoch, which
     * every open of the index raises in every shard and then in the manifest. Null for a pool that
     * is no shard. It lies in the last two entries of the heap chunk table (so a shard's heap holds
     * at most {@value #MAX_SHARD_HEAP_CHUNKS} chunks), inside the checksummed bytes; a pool with more
     * chunks than that, or zeros there, has none.
     */
    public record ShardMembership(long indexId, long seed, int shard, int shards, long epoch) {
        public ShardMembership {
            if (indexId == 0 || shard < 0 || shards < 1 || shard >= shards || epoch < 0) {
                throw new IllegalArgumentException("shard membership " + indexId + "/" + shard + " of " + shards
                        + ", epoch " + epoch);
            }
        }

        /** {@return the same membership at {@code newEpoch}} */
        public ShardMembership withEpoch(long newEpoch) {
            return new ShardMembership(indexId, seed, shard, shards, newEpoch);
        }
    }

    /** A header without shard membership (every pool that is no shard). */
    public PoolHeader(long sequence, Geometry geometry, boolean cleanShutdown, long[] seeds, int topLog2,
                      long[] levelOffsets, boolean resizing, List<HeapChunk> heapChunks, long resizes,
                      long fileLength, long createdMillis, long poolId, long opsInFlightLimit, CloseRecordRef closeRecord) {
        this(sequence, geometry, cleanShutdown, seeds, topLog2, levelOffsets, resizing, heapChunks, resizes, fileLength,
                createdMillis, poolId, opsInFlightLimit, closeRecord, null, FORMAT_VERSION);
    }

    /**
     * Where the record of the last clean close lies ({@link CloseRecord}: free space and item count,
     * so that open need not scan the table), its length and its CRC32C; {@link #NO_CLOSE_RECORD}
     * when there is none. Only trusted while the clean-shutdown flag is set.
     */
    public record CloseRecordRef(long offset, int length, int crc) {
        public boolean present() {
            return offset != 0;
        }
    }

    public static final CloseRecordRef NO_CLOSE_RECORD = new CloseRecordRef(0, 0, 0);

    public static final long MAGIC = 0x0050485341485047L; // "GPHASHP\0" little-endian
    /**
     * The format new pools take unless asked for another: 2, with pool identity, extent tags and the
     * in-flight bound (version 1 pools predate 2026-11-23).
     */
    public static final int FORMAT_VERSION = 2;
    /**
     * Format 3 (issue 53): the same header, slots whose meta word names a value's size class, values
     * framed by a length and checksum in a heap of size classes; only the CPU engine runs it yet, for
     * pools of one value size (docs/lab/2026-11-29-format-3-plan.md, step 3).
     */
    public static final int FORMAT_3 = 3;

    /** {@return whether this build reads pools of format version {@code version}} */
    public static boolean readable(int version) {
        return version == FORMAT_VERSION || version == FORMAT_3;
    }
    public static final int COPY_BYTES = 2048;
    public static final int REGION_BYTES = 2 * COPY_BYTES;
    public static final int MAX_HEAP_CHUNKS = 96;
    /** The heap chunks of a shard's pool: the table's last two entries hold its {@link ShardMembership}. */
    public static final int MAX_SHARD_HEAP_CHUNKS = MAX_HEAP_CHUNKS - 2;
    /** Levels a resize may add beyond the geometry's before it has emptied the bottom ones. */
    public static final int MAX_EXTRA_LEVELS = 4;

    public static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    public static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    public static final int OFF_MAGIC = 0;
    public static final int OFF_VERSION = 8;
    public static final int OFF_COPY_SIZE = 12;
    public static final int OFF_SEQUENCE = 16;
    public static final int OFF_KEY_SIZE = 24;
    public static final int OFF_VALUE_SIZE = 28;
    public static final int OFF_LEVELS = 32;
    public static final int OFF_HASHES = 36;
    public static final int OFF_SLOTS = 40;
    public static final int OFF_FLAGS = 44;
    public static final int OFF_SEEDS = 48;
    public static final int OFF_TOP_LOG2 = 80;
    public static final int OFF_ACTIVE_LEVELS = 84;
    public static final int OFF_RESIZE_STATE = 88;
    public static final int OFF_CHUNK_COUNT = 92;
    public static final int OFF_RESIZES = 96;
    public static final int OFF_FILE_LENGTH = 104;
    public static final int OFF_CREATED = 112;
    public static final int OFF_LEVEL_OFFSETS = 128;
    public static final int OFF_POOL_ID = 224;
    public static final int OFF_OPS_IN_FLIGHT = 232;
    public static final int OFF_CLOSE_RECORD = 240;
    public static final int OFF_CHUNKS = 256;
    public static final int OFF_MEMBERSHIP = OFF_CHUNKS + MAX_SHARD_HEAP_CHUNKS * 16;
    public static final int OFF_CHECKSUM = OFF_CHUNKS + MAX_HEAP_CHUNKS * 16;

    private static final int FLAG_CLEAN = 1;
    private static final int FLAG_ITEM_CHECKSUMS = 2;

    public PoolHeader {
        seeds = seeds.clone();
        levelOffsets = levelOffsets.clone();
        heapChunks = List.copyOf(heapChunks);
        if (seeds.length != Geometry.MAX_HASHES) {
            throw new IllegalArgumentException("need " + Geometry.MAX_HASHES + " seeds");
        }
        int extra = levelOffsets.length - geometry.levels();
        if (resizing ? extra < 1 || extra > MAX_EXTRA_LEVELS : extra != 0) {
            throw new IllegalArgumentException("level table has " + levelOffsets.length + " entries for a geometry of "
                    + geometry.levels() + " levels" + (resizing ? " while resizing" : ""));
        }
        if (heapChunks.size() > (membership == null ? MAX_HEAP_CHUNKS : MAX_SHARD_HEAP_CHUNKS)) {
            throw new IllegalArgumentException("at most " + MAX_HEAP_CHUNKS + " heap chunks, " + MAX_SHARD_HEAP_CHUNKS
                    + " in a shard's pool");
        }
        if (poolId == 0) {
            throw new IllegalArgumentException("pool identity 0");
        }
        Objects.requireNonNull(closeRecord, "closeRecord");
        if (opsInFlightLimit < 0) {
            throw new IllegalArgumentException("negative in-flight bound " + opsInFlightLimit);
        }
        if (!readable(formatVersion)) {
            throw new IllegalArgumentException("pool format " + formatVersion + " (this build writes " + FORMAT_VERSION
                    + " and " + FORMAT_3 + ")");
        }
    }

    @Override
    public long[] seeds() {
        return seeds.clone();
    }

    @Override
    public long[] levelOffsets() {
        return levelOffsets.clone();
    }

    /** {@return the most heap chunks this header can name} */
    public int maxHeapChunks() {
        return membership == null ? MAX_HEAP_CHUNKS : MAX_SHARD_HEAP_CHUNKS;
    }

    /** {@return the same header with {@code m} as its shard membership} */
    public PoolHeader withMembership(ShardMembership m) {
        return new PoolHeader(sequence, geometry, cleanShutdown, seeds, topLog2, levelOffsets, resizing, heapChunks,
                resizes, fileLength, createdMillis, poolId, opsInFlightLimit, closeRecord, m, formatVersion);
    }

    /** Buckets in the level at {@code index} of {@link #levelOffsets()} (0 = bottom). */
    public long bucketsInLevel(int index) {
        return 1L << (topLog2 - (levelOffsets.length - 1 - index));
    }

    /**
     * Half-done operations a crash can leave in this pool: one per operation in flight, and during
     * a resize one per slot of the bottom level being emptied (its items are copied up before they
     * are cleared there). Recovery refuses more without being asked to repair.
     */
    public long crashAllowance() {
        long allowance = opsInFlightLimit;
        if (resizing) {
            allowance += bucketsInLevel(0) * geometry.slotsPerBucket();
        }
        return allowance;
    }

    public PoolHeader withSequence(long newSequence) {
        return new PoolHeader(newSequence, geometry, cleanShutdown, seeds, topLog2, levelOffsets, resizing, heapChunks,
                resizes, fileLength, createdMillis, poolId, opsInFlightLimit, closeRecord, membership, formatVersion);
    }

    public PoolHeader withCleanShutdown(boolean clean) {
        return new PoolHeader(sequence, geometry, clean, seeds, topLog2, levelOffsets, resizing, heapChunks, resizes,
                fileLength, createdMillis, poolId, opsInFlightLimit, closeRecord, membership, formatVersion);
    }

    /** The same header with the record of a clean close at {@code ref}, in a pool now {@code newFileLength} long. */
    public PoolHeader withCloseRecord(CloseRecordRef ref, long newFileLength) {
        return new PoolHeader(sequence, geometry, cleanShutdown, seeds, topLog2, levelOffsets, resizing, heapChunks,
                resizes, newFileLength, createdMillis, poolId, opsInFlightLimit, ref, membership, formatVersion);
    }

    /** The same header admitting up to {@code limit} operations in flight. */
    public PoolHeader withOpsInFlightLimit(long limit) {
        return new PoolHeader(sequence, geometry, cleanShutdown, seeds, topLog2, levelOffsets, resizing, heapChunks,
                resizes, fileLength, createdMillis, poolId, limit, closeRecord, membership, formatVersion);
    }

    /**
     * A new top level at {@code newLevelOffset}, twice the size of the current top: the resize is
     * (still) in progress until the bottom levels beyond the geometry's count are emptied.
     */
    public PoolHeader withTopLevelAdded(long newLevelOffset, long newFileLength) {
        long[] levels = Arrays.copyOf(levelOffsets, levelOffsets.length + 1);
        levels[levels.length - 1] = newLevelOffset;
        return new PoolHeader(sequence, geometry, cleanShutdown, seeds, topLog2 + 1, levels, true, heapChunks, resizes,
                newFileLength, createdMillis, poolId, opsInFlightLimit, closeRecord, membership, formatVersion);
    }

    /**
     * The bottom level was emptied: it is dropped and its space joins the heap. When that brings
     * the table back to the geometry's level count, the resize is complete.
     */
    public PoolHeader withBottomLevelDropped(HeapChunk reclaimedBottom) {
        long[] levels = Arrays.copyOfRange(levelOffsets, 1, levelOffsets.length);
        List<HeapChunk> chunks = new ArrayList<>(heapChunks);
        chunks.add(reclaimedBottom);
        boolean done = levels.length == geometry.levels();
        return new PoolHeader(sequence, geometry, cleanShutdown, seeds, topLog2, levels, !done, chunks,
                done ? resizes + 1 : resizes, fileLength, createdMillis, poolId, opsInFlightLimit, closeRecord, membership, formatVersion);
    }

    public PoolHeader withHeapChunk(HeapChunk chunk, long newFileLength) {
        List<HeapChunk> chunks = new ArrayList<>(heapChunks);
        chunks.add(chunk);
        return new PoolHeader(sequence, geometry, cleanShutdown, seeds, topLog2, levelOffsets, resizing, chunks, resizes,
                newFileLength, createdMillis, poolId, opsInFlightLimit, closeRecord, membership, formatVersion);
    }

    /** Writes this header as one copy at {@code base} of {@code segment}, checksum last. */
    public void writeTo(MemorySegment segment, long base) {
        MemorySegment c = segment.asSlice(base, COPY_BYTES);
        c.fill((byte) 0);
        c.set(LONG, OFF_MAGIC, MAGIC);
        c.set(INT, OFF_VERSION, formatVersion);
        c.set(INT, OFF_COPY_SIZE, COPY_BYTES);
        c.set(LONG, OFF_SEQUENCE, sequence);
        c.set(INT, OFF_KEY_SIZE, geometry.keySize());
        c.set(INT, OFF_VALUE_SIZE, geometry.valueSize());
        c.set(INT, OFF_LEVELS, geometry.levels());
        c.set(INT, OFF_HASHES, geometry.hashes());
        c.set(INT, OFF_SLOTS, geometry.slotsPerBucket());
        c.set(INT, OFF_FLAGS, (cleanShutdown ? FLAG_CLEAN : 0) | (geometry.itemChecksums() ? FLAG_ITEM_CHECKSUMS : 0));
        for (int i = 0; i < seeds.length; i++) {
            c.set(LONG, OFF_SEEDS + 8L * i, seeds[i]);
        }
        c.set(INT, OFF_TOP_LOG2, topLog2);
        c.set(INT, OFF_ACTIVE_LEVELS, levelOffsets.length);
        c.set(INT, OFF_RESIZE_STATE, resizing ? 1 : 0);
        c.set(INT, OFF_CHUNK_COUNT, heapChunks.size());
        c.set(LONG, OFF_RESIZES, resizes);
        c.set(LONG, OFF_FILE_LENGTH, fileLength);
        c.set(LONG, OFF_CREATED, createdMillis);
        c.set(LONG, OFF_POOL_ID, poolId);
        c.set(LONG, OFF_OPS_IN_FLIGHT, opsInFlightLimit);
        c.set(LONG, OFF_CLOSE_RECORD, closeRecord.offset());
        c.set(INT, OFF_CLOSE_RECORD + 8, closeRecord.length());
        c.set(INT, OFF_CLOSE_RECORD + 12, closeRecord.crc());
        for (int i = 0; i < levelOffsets.length; i++) {
            c.set(LONG, OFF_LEVEL_OFFSETS + 8L * i, levelOffsets[i]);
        }
        for (int i = 0; i < heapChunks.size(); i++) {
            c.set(LONG, OFF_CHUNKS + 16L * i, heapChunks.get(i).offset());
            c.set(LONG, OFF_CHUNKS + 16L * i + 8, heapChunks.get(i).length());
        }
        if (membership != null) {
            c.set(LONG, OFF_MEMBERSHIP, membership.indexId());
            c.set(LONG, OFF_MEMBERSHIP + 8, membership.seed());
            c.set(INT, OFF_MEMBERSHIP + 16, membership.shard());
            c.set(INT, OFF_MEMBERSHIP + 20, membership.shards());
            c.set(LONG, OFF_MEMBERSHIP + 24, membership.epoch());
        }
        c.set(INT, OFF_CHECKSUM, checksum(c));
    }

    public static int checksum(MemorySegment copy) {
        CRC32C crc = new CRC32C();
        crc.update(copy.asSlice(0, OFF_CHECKSUM).asByteBuffer());
        return (int) crc.getValue();
    }

    /**
     * What one copy holds, before deciding whether it is usable. The checksum is judged before the
     * version: a flipped bit in the version field of one copy is damage to that copy (the other copy
     * serves), not a pool of another format. A copy whose checksum does not verify but whose version
     * differs is {@code OTHER_VERSION_UNVERIFIED}: maybe another format (whose checksum this build
     * cannot check), maybe damage.
     */
    public enum CopyState { NO_MAGIC, WRONG_VERSION, OTHER_VERSION_UNVERIFIED, BAD_CHECKSUM, VALID }

    public static CopyState inspect(MemorySegment segment, long base) {
        MemorySegment c = segment.asSlice(base, COPY_BYTES);
        if (c.get(LONG, OFF_MAGIC) != MAGIC) {
            return CopyState.NO_MAGIC;
        }
        boolean ours = readable(c.get(INT, OFF_VERSION));
        if (c.get(INT, OFF_CHECKSUM) != checksum(c)) {
            return ours ? CopyState.BAD_CHECKSUM : CopyState.OTHER_VERSION_UNVERIFIED;
        }
        return ours ? CopyState.VALID : CopyState.WRONG_VERSION;
    }

    public static int versionOf(MemorySegment segment, long base) {
        return segment.get(INT, base + OFF_VERSION);
    }

    /**
     * Decodes a copy whose checksum is valid. Values that the checksum cannot vouch for semantically
     * (a geometry a writer could never produce) still raise {@link PoolFormatException}.
     */
    public static PoolHeader readFrom(MemorySegment segment, long base, Path path) {
        MemorySegment c = segment.asSlice(base, COPY_BYTES);
        try {
            Geometry g = new Geometry(c.get(INT, OFF_LEVELS), c.get(INT, OFF_HASHES), c.get(INT, OFF_SLOTS),
                    c.get(INT, OFF_KEY_SIZE), c.get(INT, OFF_VALUE_SIZE),
                    (c.get(INT, OFF_FLAGS) & FLAG_ITEM_CHECKSUMS) != 0);
            long[] seeds = new long[Geometry.MAX_HASHES];
            for (int i = 0; i < seeds.length; i++) {
                seeds[i] = c.get(LONG, OFF_SEEDS + 8L * i);
            }
            int active = c.get(INT, OFF_ACTIVE_LEVELS);
            int chunks = c.get(INT, OFF_CHUNK_COUNT);
            if (active < 1 || active > Geometry.MAX_LEVELS + MAX_EXTRA_LEVELS || chunks < 0 || chunks > MAX_HEAP_CHUNKS) {
                throw new IllegalArgumentException("level count " + active + " or chunk count " + chunks + " out of range");
            }
            long[] levels = new long[active];
            for (int i = 0; i < active; i++) {
                levels[i] = c.get(LONG, OFF_LEVEL_OFFSETS + 8L * i);
            }
            List<HeapChunk> heap = new ArrayList<>();
            for (int i = 0; i < chunks; i++) {
                heap.add(new HeapChunk(c.get(LONG, OFF_CHUNKS + 16L * i), c.get(LONG, OFF_CHUNKS + 16L * i + 8)));
            }
            ShardMembership membership = chunks <= MAX_SHARD_HEAP_CHUNKS && c.get(LONG, OFF_MEMBERSHIP) != 0
                    ? new ShardMembership(c.get(LONG, OFF_MEMBERSHIP), c.get(LONG, OFF_MEMBERSHIP + 8),
                            c.get(INT, OFF_MEMBERSHIP + 16), c.get(INT, OFF_MEMBERSHIP + 20), c.get(LONG, OFF_MEMBERSHIP + 24))
                    : null;
            int topLog2 = c.get(INT, OFF_TOP_LOG2);
            if (topLog2 < active - 1 || topLog2 > 40) {
                throw new IllegalArgumentException("top level log2 " + topLog2 + " out of range");
            }
            return new PoolHeader(c.get(LONG, OFF_SEQUENCE), g, (c.get(INT, OFF_FLAGS) & FLAG_CLEAN) != 0, seeds, topLog2,
                    levels, c.get(INT, OFF_RESIZE_STATE) == 1, heap, c.get(LONG, OFF_RESIZES),
                    c.get(LONG, OFF_FILE_LENGTH), c.get(LONG, OFF_CREATED), c.get(LONG, OFF_POOL_ID),
                    c.get(LONG, OFF_OPS_IN_FLIGHT), new CloseRecordRef(c.get(LONG, OFF_CLOSE_RECORD),
                            c.get(INT, OFF_CLOSE_RECORD + 8), c.get(INT, OFF_CLOSE_RECORD + 12)), membership,
                    c.get(INT, OFF_VERSION));
        } catch (IllegalArgumentException e) {
            throw new PoolFormatException(PoolFormatException.Reason.CORRUPT, path,
                    "header has a valid checksum but impossible contents: " + e.getMessage());
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PoolHeader h && sequence == h.sequence && geometry.equals(h.geometry)
                && cleanShutdown == h.cleanShutdown && Arrays.equals(seeds, h.seeds) && topLog2 == h.topLog2
                && Arrays.equals(levelOffsets, h.levelOffsets) && resizing == h.resizing && heapChunks.equals(h.heapChunks)
                && resizes == h.resizes && fileLength == h.fileLength && createdMillis == h.createdMillis
                && poolId == h.poolId && opsInFlightLimit == h.opsInFlightLimit && closeRecord.equals(h.closeRecord)
                && Objects.equals(membership, h.membership) && formatVersion == h.formatVersion;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(sequence) * 31 + Arrays.hashCode(levelOffsets);
    }

    @Override
    public String toString() {
        return "PoolHeader[format=" + formatVersion + ", seq=" + sequence + ", " + geometry + ", clean=" + cleanShutdown + ", topLog2=" + topLog2
                + ", levels=" + Arrays.toString(levelOffsets) + ", resizing=" + resizing + ", chunks=" + heapChunks
                + ", resizes=" + resizes + ", fileLength=" + fileLength + ", poolId=" + Long.toHexString(poolId)
                + ", opsInFlightLimit=" + opsInFlightLimit + (membership == null ? "" : ", " + membership) + "]";
    }
}
