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
 * <p>Layout (little-endian): magic "GPHCLOSE" (8), pool identity (8), items (8), heap blocks (8),
 * bitmap words n (8), then n words of the bitmap (1 = block in use).
 */
public final class CloseRecord {

    public static final long MAGIC = 0x45534F4C43485047L; // "GPHCLOSE" little-endian
    public static final int FIXED_BYTES = 40;

    private CloseRecord() {
    }

    /** Bytes a record of a heap whose bitmap has {@code words} words needs. */
    public static long bytesFor(int words) {
        return FIXED_BYTES + 8L * words;
    }

    /** Writes the record at {@code offset} (not persisted) and returns its CRC32C. */
    public static int write(MemorySegment pool, long offset, long poolId, long items, long heapBlocks, long[] usedBits) {
        MemorySegment r = pool.asSlice(offset, bytesFor(usedBits.length));
        r.set(PoolHeader.LONG, 0, MAGIC);
        r.set(PoolHeader.LONG, 8, poolId);
        r.set(PoolHeader.LONG, 16, items);
        r.set(PoolHeader.LONG, 24, heapBlocks);
        r.set(PoolHeader.LONG, 32, usedBits.length);
        MemorySegment.copy(usedBits, 0, r, PoolHeader.LONG, FIXED_BYTES, usedBits.length);
        return crc(r);
    }

    private static int crc(MemorySegment r) {
        CRC32C crc = new CRC32C();
        crc.update(r.asByteBuffer());
        return (int) crc.getValue();
    }

    /** What a record says, once it is trusted: items, the heap's bitmap and the blocks it marks used. */
    public record Loaded(long items, long[] usedBits, long usedBlocks) {
    }

    /**
     * The record the header names, if it can be trusted for this pool: the clean flag set, inside
     * the committed file, its CRC as the header says, this pool's identity, and a heap of
     * {@code heapBlocks} blocks in {@code words} bitmap words. Null means: scan.
     */
    public static Loaded read(MemorySegment pool, PoolHeader h, long heapBlocks, int words) {
        PoolHeader.CloseRecordRef ref = h.closeRecord();
        if (!h.cleanShutdown() || !ref.present() || h.resizing()) {
            return null;
        }
        long expected = bytesFor(words);
        if (ref.length() != expected || ref.offset() < PoolHeader.REGION_BYTES || ref.offset() + expected > h.fileLength()
                || ref.offset() + expected > pool.byteSize()) {
            return null;
        }
        MemorySegment r = pool.asSlice(ref.offset(), expected);
        if (crc(r) != ref.crc() || r.get(PoolHeader.LONG, 0) != MAGIC || r.get(PoolHeader.LONG, 8) != h.poolId()
                || r.get(PoolHeader.LONG, 24) != heapBlocks || r.get(PoolHeader.LONG, 32) != words) {
            return null;
        }
        long[] bits = new long[words];
        MemorySegment.copy(r, PoolHeader.LONG, FIXED_BYTES, bits, 0, words);
        long items = r.get(PoolHeader.LONG, 16);
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
        return used == items ? new Loaded(items, bits, used) : null;
    }
}
