package org.gphash.table;

import org.gphash.Durability;
import org.gphash.Geometry;
import org.gphash.error.PoolFormatException;
import org.gphash.persistence.PoolFile;
import org.gphash.spi.CrashPoint;

/** The whole-table passes run by an engine's {@link TableKernels} (the GPU engine's kernels). */
final class KernelPasses implements TablePasses {

    private final TableKernels kernels;

    KernelPasses(TableKernels kernels) {
        this.kernels = kernels;
    }

    @Override
    public void attach(PoolFile file, Geometry geometry, long[] seeds, int formatVersion) {
        kernels.attach(file, geometry, seeds, formatVersion);
    }

    @Override
    public void beforeWrites() {
        kernels.beforeWrites();
    }

    @Override
    public boolean checksRegionsOnTouch() {
        return false;
    }

    @Override
    public boolean supportsItemChecksums() {
        return kernels.supportsItemChecksums();
    }

    @Override
    public boolean supportsFormat(int version) {
        return kernels.supportsFormat(version);
    }

    /**
     * PER_OPERATION: an engine with kernels persists through the CPU paths it uses (resize, heap
     * growth, recovery) at once, and runs its own operations' persistence whatever the mode.
     */
    @Override
    public Durability durability(Durability asked) {
        return Durability.PER_OPERATION;
    }

    @Override
    public Recovered recover(Table table, TableLayout t, long allowance, boolean repairBeyondCrash) {
        TableKernels.RecoveryCounts judged = kernels.countBrokenAndDuplicates(t);
        Recovery.judge(table, judged.insertSlots(), judged.tornSlots(), judged.duplicates(), allowance, repairBeyondCrash,
                "");
        // Marks only valid items when some items are to go (a resize's copy shares its block). The heap
        // is rebuilt before the pass that clears them, so that marks it refuses leave the pool unwritten.
        long items = rebuildHeap(table, t, judged.tornSlots() + judged.duplicates() > 0);
        TableKernels.RecoveryCounts done = judged.total() == 0 ? judged : kernels.clearBrokenAndDuplicates(t);
        return new Recovered(done.insertSlots(), done.tornSlots(), done.duplicates(), items);
    }

    /**
     * Rebuilds the heap's free space from the blocks the items of {@code t} name (only their keys' valid
     * items where {@code validItemsOnly}): format 3's by class, in the form a clean close records
     * ({@link PoolHeap#restore}, which checks every mark against its segment's class), format 2's as one
     * bitmap. Writes nothing to the pool. Returns the items marked.
     */
    private long rebuildHeap(Table table, TableLayout t, boolean validItemsOnly) {
        TableKernels.HeapSegments segments = table.blocks.segments();
        if (segments == null) {
            TableKernels.MarkedBlocks marked = kernels.markValueBlocks(t, table.blocks.oneSizeLayout(), validItemsOnly);
            table.blocks.restoreOneSize(marked.usedBits());
            return marked.items();
        }
        TableKernels.MarkedSegments marked = kernels.markValueSegments(t, segments.offsets(), validItemsOnly);
        try {
            table.blocks.restore(marked.unitBits(), marked.items(), marked.classes());
        } catch (IllegalStateException e) {
            throw new PoolFormatException(PoolFormatException.Reason.CORRUPT, table.file.path(),
                    "items name value blocks their segments cannot hold (" + e.getMessage() + "); nothing was changed");
        }
        return marked.items();
    }

    /** Pass after pass until nothing is left below. */
    @Override
    public long emptyBottomLevel(Table table) {
        long moved = 0;
        for (;;) {
            TableKernels.RehashResult r = kernels.rehashBottom(table.layout());
            moved += r.moved();
            table.size.add(-r.dropped());
            for (long block : r.retiredBlocks()) {
                table.blocks.free(block);
            }
            if (r.moved() + r.dropped() > 0) {
                table.hook.reached(CrashPoint.RESIZE_ITEM_MOVED);
            }
            if (r.unplaced() == 0) {
                return moved;
            }
            table.resizer.addTopLevel();
        }
    }

    @Override
    public void rebuildHeap(Table table) {
        rebuildHeap(table, table.layout(), false);
    }
}
