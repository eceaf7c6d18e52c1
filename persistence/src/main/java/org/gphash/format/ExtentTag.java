package org.gphash.format;

import java.lang.foreign.MemorySegment;
import java.util.zip.CRC32C;

/**
 * The tag in front of every level and heap chunk: which pool it belongs to, and where it is.
 *
 * <p>A header names its extents by offset only, so a header from another pool (or a CRC-valid copy
 * of the wrong file) would make recovery read someone else's slots, find their fingerprints
 * "torn", and clear them (issue 14). With a tag, open compares every extent's pool identity, offset
 * and length with the header's before it reads a slot, and refuses a header that does not belong.
 *
 * <p>Layout ({@link #BYTES} bytes, ending where the extent starts; little-endian):
 * <pre>
 *    0 magic        8   "GPHXTNT\0"
 *    8 pool id      8
 *   16 offset       8   of the extent
 *   24 length       8   of the extent
 *   32 checksum     4   CRC32C of [0, 32)
 *   40 level serial 8   a level's number in the order levels were added (the first bottom level 1); 0 otherwise
 *   48 dropped by   8   for a level a resize emptied and gave to the value heap, that resize's number; 0 otherwise
 *   56 stamp check  4   CRC32C of [40, 56)
 * </pre>
 * A tag is written and persisted before the header commit that adds its extent. Its first part never
 * changes (a bottom level that becomes a heap chunk keeps its offset and length), so a crash cannot
 * leave a committed extent with a torn tag. The level stamp ([40, 60), issue 52) says which table a
 * level belongs to: a header older than the table names a level a later resize dropped (stamped
 * after the commit that dropped it; a torn stamp reads as none), or leaves out a level beyond its
 * committed length that holds items, and open refuses it instead of scanning a table without its
 * newest level. Tags written before stamps existed have zeros there, which read as no stamp.
 */
public final class ExtentTag {

    public static final int BYTES = 64;
    /** Extents start on a page boundary: whole pages for msync, aligned buckets for the GPU. */
    public static final long ALIGNMENT = 4096;
    public static final long MAGIC = 0x00544E5458504847L; // "GPHXTNT\0" little-endian

    private ExtentTag() {
    }

    /** Where the tag of the extent at {@code extentOffset} lies. */
    public static long tagOffset(long extentOffset) {
        return extentOffset - BYTES;
    }

    /** Writes the tag of an extent (not persisted: the caller persists it with the extent). */
    public static void write(MemorySegment pool, long extentOffset, long extentLength, long poolId) {
        MemorySegment t = pool.asSlice(tagOffset(extentOffset), BYTES);
        t.fill((byte) 0);
        t.set(PoolHeader.LONG, 0, MAGIC);
        t.set(PoolHeader.LONG, 8, poolId);
        t.set(PoolHeader.LONG, 16, extentOffset);
        t.set(PoolHeader.LONG, 24, extentLength);
        t.set(PoolHeader.INT, 32, checksum(t));
    }

    /** What a level's stamp says: its serial, and the resize that dropped it (0 while it is in use). */
    public record LevelStamp(long serial, long droppedBy) {
    }

    /** Stamps the tag of the level at {@code extentOffset} (not persisted: the caller persists the tag). */
    public static void stampLevel(MemorySegment pool, long extentOffset, long serial, long droppedBy) {
        MemorySegment t = pool.asSlice(tagOffset(extentOffset), BYTES);
        t.set(PoolHeader.LONG, 40, serial);
        t.set(PoolHeader.LONG, 48, droppedBy);
        t.set(PoolHeader.INT, 56, stampChecksum(t));
    }

    /** The stamp of the level at {@code extentOffset}, or null when there is none (or it is torn). */
    public static LevelStamp levelStamp(MemorySegment pool, long extentOffset) {
        MemorySegment t = pool.asSlice(tagOffset(extentOffset), BYTES);
        long serial = t.get(PoolHeader.LONG, 40);
        long droppedBy = t.get(PoolHeader.LONG, 48);
        if (serial == 0 && droppedBy == 0 || t.get(PoolHeader.INT, 56) != stampChecksum(t)) {
            return null;
        }
        return new LevelStamp(serial, droppedBy);
    }

    private static int stampChecksum(MemorySegment tag) {
        CRC32C crc = new CRC32C();
        crc.update(tag.asSlice(40, 16).asByteBuffer());
        return (int) crc.getValue();
    }

    /** The extent length a tag holds (meaningful when the tag is not damaged). */
    public static long lengthOf(MemorySegment pool, long extentOffset) {
        return pool.get(PoolHeader.LONG, tagOffset(extentOffset) + 24);
    }

    private static int checksum(MemorySegment tag) {
        CRC32C crc = new CRC32C();
        crc.update(tag.asSlice(0, 32).asByteBuffer());
        return (int) crc.getValue();
    }

    /** What a check found. */
    public enum Verdict { MATCHES, DAMAGED, OTHER_POOL, OTHER_EXTENT }

    /** Compares the tag in front of an extent with what the header says of it. */
    public static Verdict check(MemorySegment pool, long extentOffset, long extentLength, long poolId) {
        MemorySegment t = pool.asSlice(tagOffset(extentOffset), BYTES);
        if (t.get(PoolHeader.LONG, 0) != MAGIC || t.get(PoolHeader.INT, 32) != checksum(t)) {
            return Verdict.DAMAGED;
        }
        if (t.get(PoolHeader.LONG, 8) != poolId) {
            return Verdict.OTHER_POOL;
        }
        if (t.get(PoolHeader.LONG, 16) != extentOffset || t.get(PoolHeader.LONG, 24) != extentLength) {
            return Verdict.OTHER_EXTENT;
        }
        return Verdict.MATCHES;
    }

    /** The pool identity a tag holds (for messages; meaningful when the tag is not damaged). */
    public static long poolIdOf(MemorySegment pool, long extentOffset) {
        return pool.get(PoolHeader.LONG, tagOffset(extentOffset) + 8);
    }
}
