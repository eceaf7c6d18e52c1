package org.gphash.format;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

import org.gphash.Geometry;

/**
 * The optional per-item checksum: CRC32C of the key and the value, stored in the 4 bytes after the
 * value in its block (little-endian). It is written with the value and persisted before the slot
 * that publishes the item, so a published item always has a matching checksum unless something
 * other than the engine changed the pool (a flipped bit, a bad sector, a stray write): then the read
 * fails with {@link org.gphash.ItemChecksumException} instead of returning the wrong value.
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

    public ItemChecksum(Geometry g) {
        this.keySize = g.keySize();
        this.valueSize = g.valueSize();
        this.scratch = new byte[keySize + valueSize];
    }

    /** CRC32C of the key at {@code key[keyOffset]} and the value at {@code value[valueOffset]}. */
    public int of(MemorySegment key, long keyOffset, MemorySegment value, long valueOffset) {
        MemorySegment.copy(key, ValueLayout.JAVA_BYTE, keyOffset, scratch, 0, keySize);
        MemorySegment.copy(value, ValueLayout.JAVA_BYTE, valueOffset, scratch, keySize, valueSize);
        crc.reset();
        crc.update(scratch, 0, scratch.length);
        return (int) crc.getValue();
    }

    /** Stores the checksum after the value of the block at {@code block}. */
    public void store(MemorySegment pool, long block, int checksum) {
        pool.set(INT, block + valueSize, checksum);
    }

    /**
     * Inverts the checksum stored in a block that is being freed, so that the block no longer
     * vouches for the value it holds (issue 27: a slot pointed, by damage, at its own key's older
     * block passed its checksum and returned the old value). No item refers to the block by then.
     */
    public void revoke(MemorySegment pool, long block) {
        pool.set(INT, block + valueSize, ~pool.get(INT, block + valueSize));
    }

    /** The checksum stored after the value of the block at {@code block}. */
    public int stored(MemorySegment pool, long block) {
        return pool.get(INT, block + valueSize);
    }
}
