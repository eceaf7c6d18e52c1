package org.gphash.table;

import java.lang.foreign.MemorySegment;

import org.gphash.ItemChecksumException;
import org.gphash.error.PoolFormatException;
import org.gphash.format.ItemChecksum;

/**
 * The table's read path, written once for every reader of the pool: a key's probe scanned to its
 * valid item, the item's value block checked (inside the heap, and against its checksum where the
 * pool keeps them), the value copied out. The CPU engine reads and compares through it; the GPU
 * engine's host operations run the CPU engine's code on it ({@code CpuOperations}).
 */
public final class TableReader {

    private final Table table;
    private final ThreadLocal<Probe> probes;

    public TableReader(Table table) {
        this.table = table;
        this.probes = ThreadLocal.withInitial(table::newProbe);
    }

    /** {@return the table read} */
    public Table table() {
        return table;
    }

    /** {@return each thread's probe of this table} */
    public ThreadLocal<Probe> probes() {
        return probes;
    }

    /**
     * Reads {@code key}'s value into {@code out}, with the key hashed into {@code probe}, while nothing
     * frees the blocks it may read: inside an epoch the caller holds. Returns FOUND or NOT_FOUND ({@link OpStatus}).
     */
    public int read(MemorySegment pool, TableLayout t, Probe probe, MemorySegment key, long keyOffset,
                    MemorySegment out, long outOffset) {
        probe.scanToValid(pool, t, key, keyOffset);  // a read needs no duplicates and no free slots
        long block = validItemBlock(pool, probe, key, keyOffset);
        if (block < 0) {
            return OpStatus.NOT_FOUND;
        }
        probe.readLength = table.values.read(pool, block, table.meta.valueClass(probe.matchMeta[0]), out, outOffset);
        return OpStatus.FOUND;
    }

    /**
     * The value block of the key's valid item as the probe just scanned found it, checked (inside the
     * heap, and against its checksum where the pool keeps them); -1 when the key is absent.
     */
    public long validItemBlock(MemorySegment pool, Probe probe, MemorySegment key, long keyOffset) {
        if (probe.matchCount == 0) {
            return -1;
        }
        long meta = probe.matchMeta[0];
        long block = table.meta.valueOffset(meta);
        int valueClass = table.meta.valueClass(meta);
        checkBlock(probe.matchSlot[0], block, valueClass);
        checkFrame(pool, probe.matchSlot[0], block, valueClass);
        checkItem(pool, probe, probe.matchSlot[0], block, key, keyOffset);
        return block;
    }

    /**
     * Refuses an item whose value offset (a block of class {@code valueClass}) is no block of the heap
     * (its meta word was changed behind the engine's back after open: a region checked at open is not
     * checked again), naming the slot, instead of reading outside the heap.
     */
    public void checkBlock(long slot, long block, int valueClass) {
        // Two compares on the hot path (an exact block check cost reads a third of their speed); free()
        // checks the exact block before it gives one back.
        if (!table.blocks.spans(block, table.values.spanOf(valueClass))) {
            throw outsideHeap(slot, block);
        }
    }

    /** {@link #checkBlock(long, long, int)} of the block the item's word {@code meta} names. */
    public void checkBlockOf(long slot, long meta) {
        checkBlock(slot, table.meta.valueOffset(meta), table.meta.valueClass(meta));
    }

    /**
     * Refuses a value whose frame is not whole (format 3: its header torn, or of another class than
     * the word's, or longer than the pool's values; format 2 has no frame), naming the slot, instead of returning bytes
     * that are not the item's value. A value is framed and persisted before any word names it, so a
     * crash leaves none such; recovery does not look at frames yet (issue 53).
     */
    public void checkFrame(MemorySegment pool, long slot, long block, int valueClass) {
        if (!table.values.frameWhole(pool, block, valueClass)) {
            throw new PoolFormatException(PoolFormatException.Reason.CORRUPT, table.file.path(), "the value of the item "
                    + "in slot " + slot + " (block at " + block + ") has no whole header for the pool's values: something other "
                    + "than the engine changed the pool; the value is not returned");
        }
    }

    private RuntimeException outsideHeap(long slot, long block) {
        return new PoolFormatException(PoolFormatException.Reason.CORRUPT,
                table.file.path(), "the item in slot " + slot + " refers to value offset " + block + ", which is outside "
                + "the value heap: something other than the engine changed the pool while it was open; the value is not "
                + "returned. Close the pool and run `gphash check`");
    }

    /**
     * With item checksums, refuses to return a value whose checksum does not match its key and
     * value (the pool's bytes were changed by something other than the engine).
     */
    public void checkItem(MemorySegment pool, Probe probe, long slot, long block, MemorySegment key, long keyOffset) {
        ItemChecksum c = probe.checksum;
        if (c == null) {
            return;
        }
        int stored = c.stored(pool, block);
        int computed = c.ofStored(key, keyOffset, pool, block);
        if (stored != computed) {
            throw new ItemChecksumException("pool " + table.file.path() + ": the item in slot " + slot + " (value block at "
                    + block + ") fails its checksum (stored " + Integer.toHexString(stored) + ", computed "
                    + Integer.toHexString(computed) + "): something other than the engine changed the pool; the value "
                    + "is not returned. `gphash check --deep` lists every such item");
        }
    }
}
