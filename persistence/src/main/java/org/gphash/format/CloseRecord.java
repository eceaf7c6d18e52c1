package org.gphash.format;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

import org.gphash.Geometry;

/**
 * What a clean close leaves so that the next open need not scan the table: the item count and the
 * value heap's bitmap of used blocks (issue 13: every open scanned the whole pool, a noticeable
 * pause even for an empty one, seconds for millions of items).
 *
 * <p>It lives in its own extent (tagged like the others) and is named by the header, with its
 * length and CRC32C, in the same commit that sets the clean-shutdown flag; open clears the flag
 * before anything changes the table. So open trusts the record only when the flag is set, the
 * header's CRC of the record matches, and it describes this pool's heap; any doubt (a crash, a
 * damaged record, another heap size) means the full scan, which rebuilds the same state.
 *
 * <p>It also holds a CRC32C of each region of the table ({@link TableDigest}), so that open can
 * trust the table as well without reading it: an engine checks each region against its CRC the first
 * time an operation reaches it (issue 27: before, damage to the table after a clean close was served).
 *
 * <p>It names the header it was written under by a digest of the header's fields ({@link
 * #headerDigest}): a header changed after the close (a seed, a level, with its checksum made to
 * match) no longer matches, and open scans instead of trusting either.
 *
 * <p><b>Across a crash</b> (issue 52: a crash of a process that had opened a damaged pool used to
 * launder the damage, since the scan after it cannot tell an edit from a crash): open does not throw
 * the record away. It turns it into an <em>opened</em> record ({@link #reopen}: magic "GPHOPEN2",
 * the header digest replaced by a digest of the table's shape alone, {@link #shapeDigest}), and keeps
 * beside it, in the same extent, one bit per region: set and persisted before anything in the region
 * can be written ({@link #markTouched}). The scan after a crash checks every region whose bit is clear
 * against the CRC the close recorded ({@link #readOpened}): no write of the crashed process touched it.
 *
 * <p>Layout (little-endian): magic "GPHCLOS4" or "GPHOPEN4" (8), pool identity (8), header digest or
 * shape digest (8), items (8), heap blocks (8), bitmap words n (8), n words of the bitmap (1 = block
 * in use), regions m (8), m CRC32C values (4 each), zero padding to 8 bytes, segment classes k (8), k
 * bytes (the class each of format 3's heap segments holds, -1 for none: a bare block has no header
 * to name its class; none in format 2), zero padding to 8 bytes; the header's CRC and length cover
 * these bytes. Then, not covered by them, the touched bits ({@link #touchedBytes}), where the extent
 * has room. A record of the layout before ("GPHCLOS3", "GPHOPEN3": no segment classes) is read as
 * one with none ({@link Loaded#segmentClasses} null: a format 3 pool then opens by the scan once); one
 * of the first layout (magic "GPHCLOSE", no region CRCs) is not trusted: such a pool opens by the full
 * scan once, and its next close writes this layout.
 */
public final class CloseRecord {

    public static final long MAGIC = 0x34534F4C43485047L; // "GPHCLOS4" little-endian
    /** The magic of a record whose pool was opened since (see the class comment). */
    public static final long OPENED_MAGIC = 0x344E45504F485047L; // "GPHOPEN4" little-endian
    /** The magic of a record of the layout before segment classes. */
    static final long MAGIC_3 = 0x33534F4C43485047L; // "GPHCLOS3" little-endian
    /** The magic of an opened record of the layout before segment classes. */
    static final long OPENED_MAGIC_3 = 0x334E45504F485047L; // "GPHOPEN3" little-endian
    public static final int FIXED_BYTES = 48;
    /** {@link #checkedBytes}'s count of segment classes for a record of the layout before them. */
    private static final int NO_CLASSES = -1;

    private CloseRecord() {
    }

    /**
     * Bytes of the checksummed part of a record of a heap whose bitmap has {@code words} words and
     * which has {@code classes} segment classes ({@link #NO_CLASSES}: the layout before them), and of a
     * table of {@code regions} regions.
     */
    private static long checkedBytes(int words, int regions, int classes) {
        long bytes = classesAt(words, regions);
        return classes == NO_CLASSES ? bytes : bytes + 8 + Geometry.alignUp(classes, 8);
    }

    /** Where the count of segment classes lies in a record. */
    private static long classesAt(int words, int regions) {
        return FIXED_BYTES + 8L * words + 8 + Geometry.alignUp(4L * regions, 8);
    }

    /**
     * Bytes a record of a heap whose bitmap has {@code words} words and which has {@code classes}
     * segment classes, and of a table of {@code regions} regions, needs: the checksummed part and the
     * touched bits after it (the length the header names).
     */
    public static long bytesFor(int words, int regions, int classes) {
        return checkedBytes(words, regions, classes) + touchedBytes(regions);
    }

    /** Bytes of the touched bits of a table of {@code regions} regions (one bit each, whole words). */
    public static long touchedBytes(int regions) {
        return 8L * ((regions + 63) >>> 6);
    }

    /** Writes the record at {@code offset}, its touched bits clear (not persisted), and returns its CRC32C. */
    public static int write(MemorySegment pool, long offset, PoolHeader header, long items, long heapBlocks,
                            long[] usedBits, int[] regionCrcs, byte[] segmentClasses) {
        MemorySegment r = pool.asSlice(offset, checkedBytes(usedBits.length, regionCrcs.length, segmentClasses.length));
        pool.asSlice(offset + r.byteSize(), touchedBytes(regionCrcs.length)).fill((byte) 0);
        r.set(PoolHeader.LONG, 0, MAGIC);
        r.set(PoolHeader.LONG, 8, header.poolId());
        r.set(PoolHeader.LONG, 16, headerDigest(header));
        r.set(PoolHeader.LONG, 24, items);
        r.set(PoolHeader.LONG, 32, heapBlocks);
        r.set(PoolHeader.LONG, 40, usedBits.length);
        MemorySegment.copy(usedBits, 0, r, PoolHeader.LONG, FIXED_BYTES, usedBits.length);
        long at = FIXED_BYTES + 8L * usedBits.length;
        r.set(PoolHeader.LONG, at, regionCrcs.length);
        MemorySegment.copy(regionCrcs, 0, r, ValueLayout.JAVA_INT_UNALIGNED, at + 8, regionCrcs.length);
        if (regionCrcs.length % 2 != 0) {
            r.set(ValueLayout.JAVA_INT_UNALIGNED, at + 8 + 4L * regionCrcs.length, 0);
        }
        long classesAt = classesAt(usedBits.length, regionCrcs.length);
        r.set(PoolHeader.LONG, classesAt, segmentClasses.length);
        r.asSlice(classesAt + 8, Geometry.alignUp(segmentClasses.length, 8)).fill((byte) 0);
        MemorySegment.copy(segmentClasses, 0, r, ValueLayout.JAVA_BYTE, classesAt + 8, segmentClasses.length);
        return crc(r);
    }

    /**
     * A digest of every field of {@code h} but those the close's own commit sets (sequence, clean
     * flag, the record's place and the file length it added): the header the record was written under.
     */
    public static long headerDigest(PoolHeader h) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment copy = arena.allocate(PoolHeader.COPY_BYTES, 8);
            h.withCloseRecord(PoolHeader.NO_CLOSE_RECORD, 0).withSequence(0).withCleanShutdown(false).writeTo(copy, 0);
            // Not over the copy's own checksum: a CRC over data and its CRC is the same constant for any data.
            return crc(copy.asSlice(0, PoolHeader.OFF_CHECKSUM)) & 0xFFFFFFFFL;
        }
    }

    /**
     * A digest of what the region CRCs depend on: geometry, seeds and the levels' places. Unlike
     * {@link #headerDigest}, not of the heap's chunks, which an opened pool may grow.
     */
    public static long shapeDigest(PoolHeader h) {
        ByteBuffer b = ByteBuffer.allocate(32 + 8 * h.seeds().length + 16 * h.levelOffsets().length)
                .order(ByteOrder.LITTLE_ENDIAN);
        Geometry g = h.geometry();
        b.putInt(g.levels()).putInt(g.hashes()).putInt(g.slotsPerBucket()).putInt(g.keySize()).putInt(g.valueSize())
                .putInt(g.itemChecksums() ? 1 : 0).putInt(h.topLog2()).putInt(h.resizing() ? 1 : 0);
        for (long s : h.seeds()) {
            b.putLong(s);
        }
        for (int i = 0; i < h.levelOffsets().length; i++) {
            b.putLong(h.levelOffsets()[i]).putLong(h.bucketsInLevel(i));
        }
        CRC32C crc = new CRC32C();
        crc.update(b.flip());
        return crc.getValue();
    }

    /**
     * Turns the trusted record {@code ref} names into an opened one (magic, shape digest) with every
     * touched bit clear; nothing persisted. Returns the reference to commit with the header that
     * clears the clean flag.
     */
    public static PoolHeader.CloseRecordRef reopen(MemorySegment pool, PoolHeader h, int regions) {
        PoolHeader.CloseRecordRef ref = h.closeRecord();
        MemorySegment r = pool.asSlice(ref.offset(), ref.length() - touchedBytes(regions));
        r.set(PoolHeader.LONG, 0, r.get(PoolHeader.LONG, 0) == MAGIC_3 ? OPENED_MAGIC_3 : OPENED_MAGIC);
        r.set(PoolHeader.LONG, 16, shapeDigest(h));
        pool.asSlice(touchedOffset(ref, regions), touchedBytes(regions)).fill((byte) 0);
        return new PoolHeader.CloseRecordRef(ref.offset(), ref.length(), crc(r));
    }

    /** Where the touched bits of the record {@code ref} names, of a table of {@code regions} regions, begin. */
    public static long touchedOffset(PoolHeader.CloseRecordRef ref, int regions) {
        return ref.offset() + ref.length() - touchedBytes(regions);
    }

    /**
     * Sets the touched bit of region {@code r} (an atomic OR of its word, not persisted) and returns
     * the offset of that word, for the caller to persist.
     */
    public static long markTouched(MemorySegment pool, long touchedOffset, int r) {
        long word = touchedOffset + 8L * (r >>> 6);
        WORD.getAndBitwiseOr(pool, word, 1L << r);
        return word;
    }

    private static final VarHandle WORD = ValueLayout.JAVA_LONG
            .withOrder(ByteOrder.LITTLE_ENDIAN).varHandle();

    /** An opened record: the CRCs the close recorded, and which regions were touched since the open. */
    public record Opened(int[] regionCrcs, long[] touched) {

        public boolean touched(int r) {
            return (touched[r >>> 6] & (1L << r)) != 0;
        }
    }

    /**
     * The opened record the header names, if it can be trusted after a crash: the clean flag clear,
     * inside the committed file with its touched bits, its CRC as the header says, this pool's identity
     * and the table's shape as the header has it, one CRC per region. Null means: no region is known.
     */
    public static Opened readOpened(MemorySegment pool, PoolHeader h) {
        PoolHeader.CloseRecordRef ref = h.closeRecord();
        if (h.cleanShutdown() || !ref.present() || ref.offset() < PoolHeader.REGION_BYTES || ref.length() < FIXED_BYTES) {
            return null;
        }
        int regions = new TableDigest(h).regions();
        long end = ref.offset() + ref.length();
        if (end > h.fileLength() || end > pool.byteSize()) {
            return null;
        }
        long words = pool.get(PoolHeader.LONG, ref.offset() + 40);
        if (words < 0 || words > Integer.MAX_VALUE) {
            return null;
        }
        int classes = classCount(pool, ref, (int) words, regions, OPENED_MAGIC, OPENED_MAGIC_3);
        if (classes < NO_CLASSES) {
            return null;
        }
        MemorySegment r = pool.asSlice(ref.offset(), checkedBytes((int) words, regions, classes));
        if (crc(r) != ref.crc() || r.get(PoolHeader.LONG, 8) != h.poolId()
                || r.get(PoolHeader.LONG, 16) != shapeDigest(h)
                || r.get(PoolHeader.LONG, FIXED_BYTES + 8L * words) != regions) {
            return null;
        }
        int[] regionCrcs = new int[regions];
        MemorySegment.copy(r, ValueLayout.JAVA_INT_UNALIGNED, FIXED_BYTES + 8L * words + 8, regionCrcs, 0,
                regions);
        long[] touched = new long[(int) (touchedBytes(regions) / 8)];
        MemorySegment.copy(pool, PoolHeader.LONG, touchedOffset(ref, regions), touched, 0, touched.length);
        return new Opened(regionCrcs, touched);
    }

    /**
     * The count of segment classes in the record {@code ref} names, by its magic: read where it lies
     * in a record of {@code magic} (the layout with them), {@link #NO_CLASSES} in one of
     * {@code magicBefore}; -2 where the magic is neither, or the count cannot be (past the record,
     * negative, too large) or disagrees with the record's length.
     */
    private static int classCount(MemorySegment pool, PoolHeader.CloseRecordRef ref, int words, int regions, long magic,
                                  long magicBefore) {
        long m = pool.get(PoolHeader.LONG, ref.offset());
        int classes;
        if (m == magicBefore) {
            classes = NO_CLASSES;
        } else if (m == magic) {
            long at = classesAt(words, regions);
            long n = at + 8 > ref.length() ? -1 : pool.get(PoolHeader.LONG, ref.offset() + at);
            if (n < 0 || n > ref.length()) {
                return -2;
            }
            classes = (int) n;
        } else {
            return -2;
        }
        return ref.length() == bytesFor(words, regions, classes) ? classes : -2;
    }

    private static int crc(MemorySegment r) {
        CRC32C crc = new CRC32C();
        crc.update(r.asByteBuffer());
        return (int) crc.getValue();
    }

    /**
     * What a record says, once it is trusted: items, the heap's bitmap, the blocks it marks used, the
     * table's region CRCs ({@link TableDigest}) and the heap's segment classes (null in a record of the
     * layout before them).
     */
    public record Loaded(long items, long[] usedBits, long usedBlocks, int[] regionCrcs, byte[] segmentClasses) {
    }

    /**
     * The record the header names, if it can be trusted for this pool: the clean flag set, inside
     * the committed file, its CRC as the header says, this pool's identity, a heap of
     * {@code heapBlocks} blocks in {@code words} bitmap words, and one CRC for each of the header's
     * table regions. Null means: scan.
     */
    public static Loaded read(MemorySegment pool, PoolHeader h, long heapBlocks, int words) {
        int regions = new TableDigest(h).regions();
        PoolHeader.CloseRecordRef ref = h.closeRecord();
        if (!h.cleanShutdown() || !ref.present() || h.resizing()) {
            return null;
        }
        if (ref.offset() < PoolHeader.REGION_BYTES || ref.offset() + ref.length() > h.fileLength()
                || ref.offset() + ref.length() > pool.byteSize() || ref.length() < FIXED_BYTES) {
            return null;
        }
        int classes = classCount(pool, ref, words, regions, MAGIC, MAGIC_3);
        if (classes < NO_CLASSES) {
            return null;
        }
        MemorySegment r = pool.asSlice(ref.offset(), checkedBytes(words, regions, classes));
        if (crc(r) != ref.crc() || r.get(PoolHeader.LONG, 8) != h.poolId()
                || r.get(PoolHeader.LONG, 16) != headerDigest(h)
                || r.get(PoolHeader.LONG, 32) != heapBlocks || r.get(PoolHeader.LONG, 40) != words
                || r.get(PoolHeader.LONG, FIXED_BYTES + 8L * words) != regions) {
            return null;
        }
        int[] regionCrcs = new int[regions];
        MemorySegment.copy(r, ValueLayout.JAVA_INT_UNALIGNED, FIXED_BYTES + 8L * words + 8, regionCrcs, 0,
                regions);
        long[] bits = new long[words];
        MemorySegment.copy(r, PoolHeader.LONG, FIXED_BYTES, bits, 0, words);
        long items = r.get(PoolHeader.LONG, 24);
        long padding = 64L * words - heapBlocks;
        if (padding < 0 || padding > 64) {
            return null;
        }
        if (padding > 0) {
            bits[words - 1] |= -1L << (64 - padding);  // past the last block reads as used, whatever the record says
        }
        long used = -padding;
        for (long w : bits) {
            used += Long.bitCount(w);
        }
        byte[] segmentClasses = null;
        if (classes != NO_CLASSES) {
            segmentClasses = new byte[classes];
            MemorySegment.copy(r, ValueLayout.JAVA_BYTE, classesAt(words, regions) + 8, segmentClasses, 0, classes);
        }
        // Every item owns one block: a record whose counts disagree describes some other state.
        return used == items ? new Loaded(items, bits, used, regionCrcs, segmentClasses) : null;
    }
}
