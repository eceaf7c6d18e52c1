package org.gphash.table;


/**
 * What a full read-only scan of a pool found (see {@code CpuEngine.verify()}). A sound pool has
 * every count but {@code items} at zero.
 *
 * @param items              published items
 * @param insertSlots        slots in the INSERT state
 * @param tornSlots          items whose fingerprint does not match their key
 * @param duplicates         items that are not the valid item of their key
 * @param badValueOffsets    items whose value offset is not a block of the value heap
 * @param sharedValueBlocks  value blocks referenced by more than one item
 * @param leakedValueBlocks  blocks counted as in use although no item refers to them
 *                           (negative: blocks referenced by items but counted as free)
 * @param staleMirrorSlots   slots whose copy in the GPU engine's HBM index mirror (its meta word,
 *                           its key under a non-EMPTY word, or its tag) differs from the pool's;
 *                           0 where there is no mirror
 */
public record VerifyReport(long items, long insertSlots, long tornSlots, long duplicates, long badValueOffsets,
                           long sharedValueBlocks, long leakedValueBlocks, long staleMirrorSlots) {

    /** This report with the mirror's comparison added. */
    public VerifyReport withStaleMirrorSlots(long stale) {
        return new VerifyReport(items, insertSlots, tornSlots, duplicates, badValueOffsets, sharedValueBlocks,
                leakedValueBlocks, stale);
    }

    public boolean sound() {
        return insertSlots == 0 && tornSlots == 0 && duplicates == 0 && badValueOffsets == 0 && sharedValueBlocks == 0
                && leakedValueBlocks == 0 && staleMirrorSlots == 0;
    }
}
