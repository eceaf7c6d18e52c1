package org.gphash.format;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

import org.gphash.Geometry;

/**
 * The optional per-item checksum: CRC32C of the key and the value. It is written with the value and
 * persisted before the slot that publishes the item, so a published item always has a matching
 * checksum unless something other than the engine changed the pool (a flipped bit, a bad sector, a
 * stray write): then the read fails with {@link org.gphash.ItemChecksumException} instead of returning
 * the wrong value.
 *
 * <p>Format 2 stores it in the 4 bytes after the value in its block (little-endian) and sums the key
 * and the value of the pool's value size. Format 3 stores it in the value header's checksum field
 * ({@link ValueBlockHeader}: the header's high 32 bits, bytes 4 to 7 of the block) and sums the key,
 * the value's length (4 bytes, little-endian) and the value's bytes, so that a length torn within its
 * size class fails the checksum too.
 *
 * <p>One per thread (it keeps a scratch buffer, so computing allocates nothing).
 */
public final class ItemChecksum {

    public static final int BYTES = Geometry.ITEM_CHECKSUM_BYTES;
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final CRC32C crc = new CRC32C();
    private final byte[] scratch;
    private final int keySize;
    private final int valueSize;
    /** Format 3: the checksum in the value header, the length summed too. */
    private final boolean inHeader;

    /** Format 2's checksums for a pool of geometry {@code g}. */
    public ItemChecksum(Geometry g) {
        this(g, PoolHeader.FORMAT_VERSION);
    }

    /** The checksums of a pool of geometry {@code g} in format {@code formatVersion} (2 or 3). */
    public ItemChecksum(Geometry g, int formatVersion) {
        this.keySize = g.keySize();
        this.valueSize = g.valueSize();
        this.inHeader = formatVersion == PoolHeader.FORMAT_3;
        this.scratch = new byte[keySize + 4 + valueSize];
    }

    /** {@return the bytes after the value's frame that the checksum takes: format 2's 4, format 3's none (it is in the header)} */
    public int extraBytes() {
        return inHeader ? 0 : BYTES;
    }

    /** CRC32C of the key at {@code key[keyOffset]} and the value of the pool's value size at {@code value[valueOffset]}. */
    public int of(MemorySegment key, long keyOffset, MemorySegment value, long valueOffset) {
        return of(key, keyOffset, value, valueOffset, valueSize);
    }

    /**
     * CRC32C of the key at {@code key[keyOffset]} and the value of {@code length} bytes at
     * {@code value[valueOffset]} (format 3: its length summed between them).
     */
    public int of(MemorySegment key, long keyOffset, MemorySegment value, long valueOffset, int length) {
        MemorySegment.copy(key, ValueLayout.JAVA_BYTE, keyOffset, scratch, 0, keySize);
        int at = keySize;
        if (inHeader) {
            scratch[at++] = (byte) length;
            scratch[at++] = (byte) (length >>> 8);
            scratch[at++] = (byte) (length >>> 16);
            scratch[at++] = (byte) (length >>> 24);
        }
        MemorySegment.copy(value, ValueLayout.JAVA_BYTE, valueOffset, scratch, at, length);
        crc.reset();
        crc.update(scratch, 0, at + length);
        return (int) crc.getValue();
    }

    /**
     * CRC32C of the key at {@code key[keyOffset]} and the value in the block at {@code block} of
     * {@code pool} as it lies there (format 3: behind its header, of the header's length, at most the
     * value size): what {@link #stored} must match.
     */
    public int ofStored(MemorySegment key, long keyOffset, MemorySegment pool, long block) {
        if (!inHeader) {
            return of(key, keyOffset, pool, block, valueSize);
        }
        long length = Integer.toUnsignedLong(pool.get(INT, block));
        return of(key, keyOffset, pool, block + ValueClasses.HEADER_BYTES, (int) Math.min(length, valueSize));
    }

    /** Where the checksum of the block at {@code block} lies. */
    private long at(long block) {
        return inHeader ? block + 4 : block + valueSize;
    }

    /** Stores the checksum of the block at {@code block} (format 2: after the value; format 3: in the header). */
    public void store(MemorySegment pool, long block, int checksum) {
        pool.set(INT, at(block), checksum);
    }

    /**
     * Inverts the checksum stored in a block that is being freed, so that the block no longer
     * vouches for the value it holds (issue 27: a slot pointed, by damage, at its own key's older
     * block passed its checksum and returned the old value). No item refers to the block by then.
     */
    public void revoke(MemorySegment pool, long block) {
        pool.set(INT, at(block), ~pool.get(INT, at(block)));
    }

    /** The checksum stored for the block at {@code block}. */
    public int stored(MemorySegment pool, long block) {
        return pool.get(INT, at(block));
    }
}
