package org.gphash;

/**
 * The shape of a table: levels, hash functions, slots per bucket, key and value sizes, and the
 * byte layout derived from them.
 *
 * <p>Slot layout: an 8-byte meta word (the pool format's {@code SlotMeta}: fingerprint and value offset) followed by
 * the key, padded to a multiple of 8 bytes. A bucket is {@code slotsPerBucket} slots back to back,
 * so one bucket is one contiguous block (128 B for 8-byte keys, 8 slots): one pool transaction on
 * the GPU.
 *
 * <p>With {@code itemChecksums}, every value block ends with a CRC32C of the item's key and value
 * (the pool format's {@code ItemChecksum}): written with the value, before the slot that publishes it, and checked on
 * every read.
 *
 * @param levels         levels of buckets, each half the size of the one above (1 to {@link #MAX_LEVELS})
 * @param hashes         hash functions, each giving a key a candidate bucket per level (1 to {@link #MAX_HASHES})
 * @param slotsPerBucket slots in a bucket (levels x hashes x slots at most {@link #WARP_SIZE})
 * @param keySize        bytes per key (1 to {@link #MAX_KEY_SIZE})
 * @param valueSize      bytes per value (1 to {@link #MAX_VALUE_SIZE})
 * @param itemChecksums  whether every value block ends with a CRC32C of its key and value
 */
public record Geometry(int levels, int hashes, int slotsPerBucket, int keySize, int valueSize, boolean itemChecksums) {

    /** One warp: the candidate slots of a key must fit in 32 lanes. */
    public static final int WARP_SIZE = 32;
    /** The most levels a table has. */
    public static final int MAX_LEVELS = 8;
    /** The most hash functions a table has. */
    public static final int MAX_HASHES = 4;
    /** The largest key, in bytes. */
    public static final int MAX_KEY_SIZE = 256;
    /** The largest value, in bytes. */
    public static final int MAX_VALUE_SIZE = 1 << 20;

    /** Bytes of a slot's meta word (the pool format's {@code SlotMeta}). */
    public static final int SLOT_META_BYTES = 8;
    /** Bytes of an item checksum, a CRC32C (the pool format's {@code ItemChecksum}). */
    public static final int ITEM_CHECKSUM_BYTES = 4;

    /** What a new pool gets where nothing is asked: 2 levels, 2 hashes, 8 slots, 8-byte keys, 128-byte values. */
    public static final Geometry DEFAULT = new Geometry(2, 2, 8, 8, 128);

    /**
     * A geometry without item checksums.
     *
     * @param levels         levels of buckets
     * @param hashes         hash functions
     * @param slotsPerBucket slots in a bucket
     * @param keySize        bytes per key
     * @param valueSize      bytes per value
     */
    public Geometry(int levels, int hashes, int slotsPerBucket, int keySize, int valueSize) {
        this(levels, hashes, slotsPerBucket, keySize, valueSize, false);
    }

    /**
     * {@return the same geometry with item checksums on or off}
     *
     * @param on whether value blocks carry item checksums
     */
    public Geometry withItemChecksums(boolean on) {
        return new Geometry(levels, hashes, slotsPerBucket, keySize, valueSize, on);
    }

    /** Checks every field against its limits; a geometry out of them is refused with the reason. */
    public Geometry {
        require(levels >= 1 && levels <= MAX_LEVELS, "levels must be 1.." + MAX_LEVELS + ", got " + levels);
        require(hashes >= 1 && hashes <= MAX_HASHES, "hashes must be 1.." + MAX_HASHES + ", got " + hashes);
        require(slotsPerBucket >= 1 && slotsPerBucket <= WARP_SIZE,
                "slotsPerBucket must be 1.." + WARP_SIZE + ", got " + slotsPerBucket);
        require((long) levels * hashes * slotsPerBucket <= WARP_SIZE,
                "levels x hashes x slotsPerBucket must be at most " + WARP_SIZE + " (one warp reads all candidate slots), got "
                        + levels + " x " + hashes + " x " + slotsPerBucket + " = " + (levels * hashes * slotsPerBucket));
        require(keySize >= 1 && keySize <= MAX_KEY_SIZE, "keySize must be 1.." + MAX_KEY_SIZE + " bytes, got " + keySize);
        require(valueSize >= 1 && valueSize <= MAX_VALUE_SIZE,
                "valueSize must be 1.." + MAX_VALUE_SIZE + " bytes, got " + valueSize);
    }

    private static void require(boolean ok, String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }

    /** {@return key bytes in a slot, padded to 8} */
    public int keyStride() {
        return align8(keySize);
    }

    /** {@return bytes per slot: meta word plus padded key} */
    public int slotSize() {
        return SLOT_META_BYTES + keyStride();
    }

    /** {@return bytes per bucket: its slots back to back} */
    public int bucketSize() {
        return slotsPerBucket * slotSize();
    }

    /** {@return bytes per value block in the heap: the value (and its item checksum, if on) padded to 8} */
    public int valueStride() {
        return align8(valueSize + (itemChecksums ? ITEM_CHECKSUM_BYTES : 0));
    }

    /** {@return candidate slots per key: levels x hashes x slots} */
    public int candidateSlots() {
        return levels * hashes * slotsPerBucket;
    }

    /**
     * {@return buckets in all levels when the top level has 2^topLog2 buckets}
     *
     * @param topLog2 log2 of the top level's bucket count
     */
    public long totalBuckets(int topLog2) {
        long total = 0;
        for (int d = 0; d < levels; d++) {
            total += 1L << (topLog2 - d);
        }
        return total;
    }

    /**
     * {@return slots in all levels when the top level has 2^topLog2 buckets}
     *
     * @param topLog2 log2 of the top level's bucket count
     */
    public long totalSlots(int topLog2) {
        return totalBuckets(topLog2) * slotsPerBucket;
    }

    /** {@return the smallest top level (log2 of its buckets) that still gives every level at least one bucket} */
    public int minTopLog2() {
        return levels - 1;
    }

    /**
     * {@return {@code n} rounded up to a multiple of 8}
     *
     * @param n a non-negative size
     */
    public static int align8(int n) {
        return (n + 7) & ~7;
    }

    /**
     * {@return {@code n} rounded up to a multiple of {@code alignment}}
     *
     * @param n         a non-negative size
     * @param alignment a positive alignment
     */
    public static long alignUp(long n, long alignment) {
        return (n + alignment - 1) / alignment * alignment;
    }
}
