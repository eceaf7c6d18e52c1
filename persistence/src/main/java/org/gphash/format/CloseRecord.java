package org.gphash.format;

import java.lang.foreign.MemorySegment;
import java.util.zip.CRC32C;

/**
 * What a clean close leaves so that the next open need not scan the table: the item count and the
 * value heap's bitmap of used blocks (issue 13: every open scanned the whole pool, 295 ms for an
 * empty one, seconds for millions of items).
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
 * <p>Layout (little-endian): magic "GPHCLOS2" (8), pool identity (8), header digest (8), items (8), heap blocks (8),
 * bitmap words n (8), n words of the bitmap (1 = block in use), regions m (8), m CRC32C values (4
 * each), zero padding to 8 bytes. A record of the first layout (magic "GPHCLOSE", no region CRCs) is
 * not trusted: such a pool opens by the full scan once, and its next close writes this layout.
 */
public final class CloseRecord {

    public static final long MAGIC = 0x32534F4C43485047L; // "GPHCLOS2" little-endian
    public static final int FIXED_BYTES = 48;

    private CloseRecord() {
    }

    /**
     * Bytes a record of a heap whose bitmap has {@code words} words, and of a table of
     * {@code regions} regions, needs.
     */
    public static long bytesFor(int words, int regions) {
        return FIXED_BYTES + 8L * words + 8 + Geometry.alignUp(4L * regions, 8);
    }

    /** Writes the record at {@code offset} (not persisted) and returns its CRC32C. */
    public static int write(MemorySegment pool, long offset, PoolHeader header, long items, long heapBlocks,
                            long[] usedBits, int[] regionCrcs) {
        MemorySegment r = pool.asSlice(offset, bytesFor(usedBits.length, regionCrcs.length));
        r.set(PoolHeader.LONG, 0, MAGIC);
        r.set(PoolHeader.LONG, 8, header.poolId());
        r.set(PoolHeader.LONG, 16, headerDigest(header));
        r.set(PoolHeader.LONG, 24, items);
        r.set(PoolHeader.LONG, 32, heapBlocks);
        r.set(PoolHeader.LONG, 40, usedBits.length);
        MemorySegment.copy(usedBits, 0, r, PoolHeader.LONG, FIXED_BYTES, usedBits.length);
        long at = FIXED_BYTES + 8L * usedBits.length;
        r.set(PoolHeader.LONG, at, regionCrcs.length);
        MemorySegment.copy(regionCrcs, 0, r, java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED, at + 8, regionCrcs.length);
        if (regionCrcs.length % 2 != 0) {
            r.set(java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED, at + 8 + 4L * regionCrcs.length, 0);
        }
        return crc(r);
    }

    /**
     * A digest of every field of {@code h} but those the close's own commit sets (sequence, clean
     * flag, the record's place and the file length it added): the header the record was written under.
     */
    public static long headerDigest(PoolHeader h) {
        try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
            MemorySegment copy = arena.allocate(PoolHeader.COPY_BYTES, 8);
            h.withCloseRecord(PoolHeader.NO_CLOSE_RECORD, 0).withSequence(0).withCleanShutdown(false).writeTo(copy, 0);
            // Not over the copy's own checksum: a CRC over data and its CRC is the same constant for any data.
            return crc(copy.asSlice(0, PoolHeader.OFF_CHECKSUM)) & 0xFFFFFFFFL;
        }
    }

    private static int crc(MemorySegment r) {
        CRC32C crc = new CRC32C();
        crc.update(r.asByteBuffer());
        return (int) crc.getValue();
    }

    /**
     * What a record says, once it is trusted: items, the heap's bitmap, the blocks it marks used and
     * the table's region CRCs ({@link TableDigest}).
     */
    public record Loaded(long items, long[] usedBits, long usedBlocks, int[] regionCrcs) {
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
        long expected = bytesFor(words, regions);
        if (ref.length() != expected || ref.offset() < PoolHeader.REGION_BYTES || ref.offset() + expected > h.fileLength()
                || ref.offset() + expected > pool.byteSize()) {
            return null;
        }
        MemorySegment r = pool.asSlice(ref.offset(), expected);
        if (crc(r) != ref.crc() || r.get(PoolHeader.LONG, 0) != MAGIC || r.get(PoolHeader.LONG, 8) != h.poolId()
                || r.get(PoolHeader.LONG, 16) != headerDigest(h)
                || r.get(PoolHeader.LONG, 32) != heapBlocks || r.get(PoolHeader.LONG, 40) != words
                || r.get(PoolHeader.LONG, FIXED_BYTES + 8L * words) != regions) {
            return null;
        }
        int[] regionCrcs = new int[regions];
        MemorySegment.copy(r, java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED, FIXED_BYTES + 8L * words + 8, regionCrcs, 0,
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
        // Every item owns one block: a record whose counts disagree describes some other state.
        return used == items ? new Loaded(items, bits, used, regionCrcs) : null;
    }
}
