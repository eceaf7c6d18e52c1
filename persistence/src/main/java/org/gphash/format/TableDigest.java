package org.gphash.format;

import java.lang.foreign.MemorySegment;
import java.util.function.IntPredicate;
import java.util.stream.IntStream;
import java.util.zip.CRC32C;

/**
 * Checksums of the table's levels in regions of {@value #REGION_BUCKETS} buckets, recorded by a clean
 * close (in the {@link CloseRecord}) so that the next open can trust the table without reading it
 * (issue 27: the fast open trusted the table blindly, and served bit flips in it). An engine checks a
 * region the first time an operation reaches it; the recovery tool checks all of them.
 *
 * <p>Regions are numbered level by level in the header's order ({@link PoolHeader#levelOffsets()},
 * bottom level first), each level from its first bucket; a level's last region may be shorter.
 */
public final class TableDigest {

    /**
     * Buckets per region, log2: 256 buckets (48 KiB of 8-way, 24-byte slots), a few microseconds to
     * check. Small, because a changed region refuses every key with a candidate bucket in it; 16M
     * items make about 8,000 regions, 32 KiB of CRCs in the close record.
     */
    public static final int REGION_BUCKETS_LOG2 = 8;
    public static final long REGION_BUCKETS = 1L << REGION_BUCKETS_LOG2;

    private final long[] levelOffsets;
    private final long[] levelBuckets;
    private final int[] firstRegion;
    private final int bucketSize;
    private final int regions;

    /** The regions of the levels {@code h} names. */
    public TableDigest(PoolHeader h) {
        this.levelOffsets = h.levelOffsets();
        this.levelBuckets = new long[levelOffsets.length];
        this.firstRegion = new int[levelOffsets.length + 1];
        this.bucketSize = h.geometry().bucketSize();
        long n = 0;
        for (int i = 0; i < levelOffsets.length; i++) {
            levelBuckets[i] = h.bucketsInLevel(i);
            firstRegion[i] = Math.toIntExact(n);
            n += (levelBuckets[i] + REGION_BUCKETS - 1) >>> REGION_BUCKETS_LOG2;
        }
        this.regions = Math.toIntExact(n);
        firstRegion[levelOffsets.length] = regions;
    }

    public int regions() {
        return regions;
    }

    /** The region that holds bucket {@code bucket} of the level at header index {@code level}. */
    public int regionOf(int level, long bucket) {
        return firstRegion[level] + (int) (bucket >>> REGION_BUCKETS_LOG2);
    }

    /** The header index of the level region {@code r} lies in. */
    public int levelOf(int r) {
        int i = 0;
        while (firstRegion[i + 1] <= r) {
            i++;
        }
        return i;
    }

    /** The first bucket (within its level) of region {@code r}. */
    public long firstBucket(int r) {
        return (long) (r - firstRegion[levelOf(r)]) << REGION_BUCKETS_LOG2;
    }

    /** The buckets in region {@code r}. */
    public long bucketsIn(int r) {
        return Math.min(REGION_BUCKETS, levelBuckets[levelOf(r)] - firstBucket(r));
    }

    /** The pool offset of region {@code r}'s first byte. */
    public long offsetOf(int r) {
        return levelOffsets[levelOf(r)] + firstBucket(r) * bucketSize;
    }

    /** The region's bytes. */
    public long bytesOf(int r) {
        return bucketsIn(r) * bucketSize;
    }

    /** The CRC32C of region {@code r} as {@code pool} holds it now. */
    public int crc(MemorySegment pool, int r) {
        CRC32C crc = new CRC32C();
        crc.update(pool.asSlice(offsetOf(r), bytesOf(r)).asByteBuffer());
        return (int) crc.getValue();
    }

    /**
     * Every region's CRC32C, computed in parallel, except where {@code keep} is non-null and
     * {@code keepMask} says to keep the value it holds (regions nothing changed since they were recorded).
     */
    public int[] crcs(MemorySegment pool, int[] keep, IntPredicate keepMask) {
        int[] out = new int[regions];
        IntStream.range(0, regions).parallel().forEach(r ->
                out[r] = keep != null && keepMask.test(r) ? keep[r] : crc(pool, r));
        return out;
    }
}
