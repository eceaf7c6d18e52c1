package org.gphash.format;

/**
 * How a pool's format lays out the value field of a slot's meta word, chosen once per pool by its
 * header's format version: format 2's byte offset ({@link SlotMeta}), or format 3's size class and
 * offset in 16-byte units ({@link SlotMetaV3}, issue 53). The fingerprint and the slot states (EMPTY,
 * INSERT) are the same bits in both ({@link SlotMeta#fingerprint}), and so is what names a block: the
 * word's low 48 bits ({@link #sameBlock}).
 *
 * <p>The engines decode and encode the words they read and publish through the pool's format, so that
 * format 3 can join without a second copy of the table's code (docs/lab/2026-11-29-format-3-plan.md,
 * "The CPU engine's port"). Pools are format 2 unless made in format 3 ({@link PoolHeader#FORMAT_3}), which
 * only the CPU engine runs yet.
 */
public final class MetaFormat {

    /** Format 2: the value's byte offset in the word's low 48 bits; one block size per pool. */
    public static final MetaFormat V2 = new MetaFormat(2);
    /** Format 3: the value block's size class and its offset in 16-byte units ({@link SlotMetaV3}). */
    public static final MetaFormat V3 = new MetaFormat(3);

    private final int version;

    private MetaFormat(int version) {
        this.version = version;
    }

    /**
     * {@return the words of pools of format version {@code version}}
     *
     * @throws IllegalArgumentException for a version this build cannot read
     */
    public static MetaFormat of(int version) {
        if (!PoolHeader.readable(version)) {
            throw new IllegalArgumentException("pool format " + version + " is not one this build reads (it reads "
                    + PoolHeader.FORMAT_VERSION + " and " + PoolHeader.FORMAT_3 + ")");
        }
        return version == PoolHeader.FORMAT_3 ? V3 : V2;
    }

    /** {@return the pool format version whose words these are} */
    public int version() {
        return version;
    }

    /** {@return the largest pool offset a word can name: the pool's length at most (format 2: 256 TiB, format 3: 32 TiB)} */
    public long maxOffset() {
        return version == 3 ? SlotMetaV3.MAX_OFFSET : SlotMeta.OFFSET_MASK;
    }

    /** {@return the pool offset of the value block the item's word {@code meta} names} */
    public long valueOffset(long meta) {
        return version == 3 ? SlotMetaV3.valueOffset(meta) : SlotMeta.valueOffset(meta);
    }

    /** {@return the size class of the value block the item's word {@code meta} names} (format 2: -1, one block size) */
    public int valueClass(long meta) {
        return version == 3 ? SlotMetaV3.valueClass(meta) : -1;
    }

    /**
     * {@return the word of an item with {@code fingerprint} whose value is in the block of class
     * {@code valueClass} at {@code valueOffset}} (format 2 has no class: it is ignored)
     */
    public long make(int fingerprint, int valueClass, long valueOffset) {
        return version == 3 ? SlotMetaV3.make(fingerprint, valueClass, valueOffset) : SlotMeta.make(fingerprint, valueOffset);
    }

    /** {@return whether two items' words name the same value block} (the same in every format: the low 48 bits) */
    public static boolean sameBlock(long a, long b) {
        return ((a ^ b) & SlotMeta.OFFSET_MASK) == 0;
    }

    @Override
    public String toString() {
        return "format " + version + " meta words";
    }
}
