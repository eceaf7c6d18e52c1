package org.gphash.table;

import org.gphash.Durability;
import org.gphash.Geometry;
import org.gphash.persistence.PoolFile;

/**
 * The whole-table passes of recovery and resize, behind one interface: {@link CpuPasses} runs them
 * as Java loops over the mapped pool, {@link KernelPasses} hands them to an engine's {@link
 * TableKernels} (the GPU engine's kernels). They run with operations drained, and each leaves the
 * pool exactly as the other would (docs/DESIGN.md, "Recovery" and "Resize").
 */
interface TablePasses {

    /** The passes for an engine with these kernels, or the CPU's where there are none. */
    static TablePasses of(TableKernels kernels) {
        return kernels == null ? new CpuPasses() : new KernelPasses(kernels);
    }

    /** The pool file is open and mapped; called before anything reads or writes the table. */
    void attach(PoolFile file, Geometry geometry, long[] seeds, int formatVersion);

    /** An open is about to write the pool, having read and checked it ({@link TableKernels#beforeWrites}). */
    default void beforeWrites() {
    }

    /**
     * Whether every read of the table goes through the CPU's probe, which checks a region on first
     * touch ({@link RegionCheck}); false for an engine whose kernels read it directly, for which open
     * checks every region.
     */
    default boolean checksRegionsOnTouch() {
        return true;
    }

    /** Whether the engine that runs these passes writes and checks item checksums. */
    boolean supportsItemChecksums();

    /** Whether the engine that runs these passes reads and writes pools of format {@code version}. */
    boolean supportsFormat(int version);

    /** The durability mode the engine runs, given the one asked for. */
    Durability durability(Durability asked);

    /**
     * Recovery's judge, bound and repair over every level of {@code layout} (see {@link Recovery}):
     * with the heap's rebuild started, marks the value block of every valid item, refuses damage
     * beyond {@code allowance} unless {@code repairBeyondCrash}, and clears the broken slots.
     *
     * @throws org.gphash.error.PoolFormatException for corruption or damage no crash explains, with nothing changed
     */
    Recovered recover(Table table, TableLayout layout, long allowance, boolean repairBeyondCrash);

    /**
     * Resize step 3: copies each valid item of the bottom level up and clears it below, adding top
     * levels ({@link Resizer#addTopLevel()}) while an item fits nowhere above. Returns the items moved.
     */
    long emptyBottomLevel(Table table);

    /**
     * Rebuilds the heap's free space from the value blocks the table's items refer to, writing nothing
     * to the pool: after an engine lost track of blocks it unlinked. Operations are drained.
     *
     * @throws UnsupportedOperationException where the engine never needs it (the CPU engine's free
     *                                       space is exact)
     */
    void rebuildHeap(Table table);

    /** What recovery found and cleared, and the items left. */
    record Recovered(long insertSlots, long tornSlots, long duplicates, long items) {
    }
}
