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
 * </pre>
 * A tag is written and persisted before the header commit that adds its extent, and never changes
 * (a bottom level that becomes a heap chunk keeps its offset and length), so a crash cannot leave a
 * committed extent with a torn tag.
 */
public final class ExtentTag {

    public static final int BYTES = 64;
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
