package org.gphash.table;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import org.gphash.Geometry;
import org.gphash.format.ItemChecksum;
import org.gphash.format.MetaFormat;
import org.gphash.format.PoolHeader;
import org.gphash.format.SlotMeta;

/**
 * One probe of all candidate slots of a key (the CPU form of the GPU's one-shot warp access),
 * with its results. A thread reuses one instance, so a probe allocates nothing.
 *
 * <p>Candidate order is the validity order of GPHash §3.2.2: level from top to bottom, then bucket
 * number ascending, then slot ascending; buckets that two hash functions share are visited once.
 * So {@code matchSlot[0]} is always the valid item of the key and any further match is a duplicate.
 */
public final class Probe {

    static final int MAX_BUCKETS = Geometry.MAX_LEVELS * 2 * Geometry.MAX_HASHES;

    private final Geometry geometry;
    private final long[] seeds;
    public final long[] hashes = new long[Geometry.MAX_HASHES];
    public int fingerprint;

    public final long[] bucketOffset = new long[MAX_BUCKETS];
    final int[] bucketLoad = new int[MAX_BUCKETS];
    public final long[] bucketFirstEmpty = new long[MAX_BUCKETS];
    public int bucketCount;

    public final long[] matchSlot = new long[Geometry.WARP_SIZE * 2];
    public final long[] matchMeta = new long[Geometry.WARP_SIZE * 2];
    public int matchCount;
    /** Whether the last value this probe could not stage was a new item's (which leaves the update reserve). */
    public boolean heapShortForNewItem;
    /** The class of the value the last value this probe could not stage needed (the growth asks the heap for it). */
    public int heapShortClass;

    /** The length of the value the current write stages (format 3's values have any length up to the pool's value size). */
    public int valueLength;
    /** The length of the value a conditional write compares with. */
    public int expectedLength;
    /** The length of the value the last read copied out. */
    public int readLength;

    /** This thread's item checksum, or null when the pool keeps none. */
    public final ItemChecksum checksum;

    /** A value block this thread wrote for the current operation and has not published (-1: none). */
    public long pendingBlock = -1;
    /** The class of {@link #pendingBlock} (format 3's words name it; format 2: -1). */
    public int pendingClass = -1;

    /**
     * A slot this thread claimed (INSERT) and wrote the current operation's key into, in the first
     * phase of its batch (the CPU engine's phased batches); -1: none.
     */
    public long claimedSlot = -1;

    /** The phases of the batch this operation runs in, where its persists go; null: persist at once. */
    public PersistPhases phases;

    private final long[] levelBuckets = new long[Geometry.MAX_HASHES];

    /** The table whose unchecked regions a scan checks first ({@link RegionCheck}); null for a tool's read-only probe. */
    private final Table table;

    Probe(Geometry geometry, long[] seeds) {
        this(geometry, seeds, null, PoolHeader.FORMAT_VERSION);
    }

    /** A tool's read-only probe of a pool of format {@code formatVersion} (whose item checksums it computes). */
    Probe(Geometry geometry, long[] seeds, int formatVersion) {
        this(geometry, seeds, null, formatVersion);
    }

    Probe(Geometry geometry, long[] seeds, Table table) {
        this(geometry, seeds, table, table.values.version());
    }

    private Probe(Geometry geometry, long[] seeds, Table table, int formatVersion) {
        this.table = table;
        this.geometry = geometry;
        this.checksum = geometry.itemChecksums() ? new ItemChecksum(geometry, formatVersion) : null;
        this.seeds = seeds.clone();
    }

    /** Computes the key's hashes and fingerprint. */
    public void hash(MemorySegment key, long keyOffset) {
        for (int j = 0; j < geometry.hashes(); j++) {
            hashes[j] = KeyHasher.hash(key, keyOffset, geometry.keySize(), seeds[j]);
        }
        fingerprint = KeyHasher.fingerprint(hashes[0]);
    }

    /**
     * Loads one word of every cache line of the key's candidate buckets and discards it: a batch
     * touches the next few operations' buckets this way before it scans them, so that their cache
     * misses overlap (a scan's loads wait on each other's branches; these do not) instead of coming
     * one after another. Changes nothing and decides nothing: it reads what the scan reads again.
     * Leaves the key's hashes in {@link #hashes}, like {@link #hash}.
     */
    public void touch(MemorySegment pool, TableLayout layout, MemorySegment key, long keyOffset) {
        hash(key, keyOffset);
        long bucketSize = layout.bucketSize();
        long sink = 0;
        for (int d = 0; d < layout.levelCount(); d++) {
            long level = layout.levelOffset(d);
            for (int j = 0; j < geometry.hashes(); j++) {
                long bucket = level + layout.bucketAtDepth(hashes[j], d) * bucketSize;
                for (long line = bucket & ~(CACHE_LINE - 1); line < bucket + bucketSize; line += CACHE_LINE) {
                    sink += pool.get(ValueLayout.JAVA_LONG, Math.max(line, bucket & ~7L));
                }
            }
        }
        touched += sink;
    }

    private static final long CACHE_LINE = 64;

    /** What {@link #touch} read, summed, so that no load of it is dropped as unused. */
    long touched;

    /**
     * Reads every candidate slot of the key (hashed before by {@link #hash}) in {@code layout}:
     * fills the matches and, per candidate bucket, its load and first empty slot.
     */
    public void scan(MemorySegment pool, TableLayout layout, MemorySegment key, long keyOffset) {
        scan(pool, layout, key, keyOffset, false);
    }

    /**
     * Reads the key's candidate slots in validity order up to its valid item, the first match
     * ({@code matchSlot[0]}, {@code matchMeta[0]}), or all of them when it is absent: what a read
     * needs. A hit reads 2.5 of 4 distinct candidate buckets on average (inserts go to the least
     * loaded, so a key lies in any of them), where {@link #scan} reads all 4 to find duplicates and
     * free slots for writes. The bucket loads and free slots it leaves are partial: not for writes.
     */
    void scanToValid(MemorySegment pool, TableLayout layout, MemorySegment key, long keyOffset) {
        scan(pool, layout, key, keyOffset, true);
    }

    private void scan(MemorySegment pool, TableLayout layout, MemorySegment key, long keyOffset, boolean toValid) {
        RegionCheck regions = table == null ? null : table.regions;
        retry:
        for (;;) {
            bucketCount = 0;
            matchCount = 0;
            int h = geometry.hashes();
            int slots = geometry.slotsPerBucket();
            int slotSize = geometry.slotSize();
            int keySize = geometry.keySize();
            for (int d = 0; d < layout.levelCount(); d++) {
                int n = sortedDistinctBuckets(layout, d, h);
                for (int b = 0; b < n; b++) {
                    if (regions != null) {
                        regions.ensure(d, levelBuckets[b]);  // before the first read of a region since a clean open
                    }
                    long bucket = layout.levelOffset(d) + levelBuckets[b] * layout.bucketSize();
                    int load = 0;
                    long firstEmpty = -1;
                    for (int s = 0; s < slots; s++) {
                        long slot = bucket + (long) s * slotSize;
                        long meta = Slots.getMeta(pool, slot);
                        if (meta == SlotMeta.EMPTY) {
                            if (firstEmpty < 0) {
                                firstEmpty = slot;
                            }
                            continue;
                        }
                        load++;
                        if (SlotMeta.fingerprint(meta) == fingerprint && Slots.keyEquals(pool, slot, keySize, key, keyOffset)) {
                            // The key bytes are only meaningful if the slot still holds the item we read.
                            if (Slots.getMeta(pool, slot) != meta) {
                                continue retry;
                            }
                            matchSlot[matchCount] = slot;
                            matchMeta[matchCount] = meta;
                            matchCount++;
                            if (toValid) {
                                return;  // the first match in validity order is the valid item
                            }
                        }
                    }
                    bucketOffset[bucketCount] = bucket;
                    bucketLoad[bucketCount] = load;
                    bucketFirstEmpty[bucketCount] = firstEmpty;
                    bucketCount++;
                }
            }
            return;
        }
    }

    /** Bucket numbers of the key at depth {@code d}, ascending, without repeats; returns how many. */
    private int sortedDistinctBuckets(TableLayout layout, int depth, int h) {
        return layout.candidateBuckets(hashes, h, depth, levelBuckets);
    }

    /**
     * The first empty slot of the least-loaded candidate bucket that has one (ties go to the
     * earlier bucket in validity order), or -1 when every candidate bucket is full.
     */
    public long leastLoadedEmptySlot() {
        long best = -1;
        int bestLoad = Integer.MAX_VALUE;
        for (int i = 0; i < bucketCount; i++) {
            if (bucketFirstEmpty[i] >= 0 && bucketLoad[i] < bestLoad) {
                best = bucketFirstEmpty[i];
                bestLoad = bucketLoad[i];
            }
        }
        return best;
    }

    /** Whether some match other than {@code index} refers to the same value block. */
    public boolean valueSharedWithOtherMatch(int index) {
        for (int i = 0; i < matchCount; i++) {
            if (i != index && MetaFormat.sameBlock(matchMeta[i], matchMeta[index])) {
                return true;
            }
        }
        return false;
    }
}
