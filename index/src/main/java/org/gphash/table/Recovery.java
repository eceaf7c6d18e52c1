package org.gphash.table;

import java.lang.foreign.MemorySegment;
import java.time.Duration;

import org.gphash.RecoveryReport;
import org.gphash.error.PoolFormatException.Reason;
import org.gphash.error.PoolFormatException;
import org.gphash.format.CloseRecord;
import org.gphash.format.PoolHeader;
import org.gphash.format.TableDigest;

/**
 * Recovery on open (GPHash §3.2.3), before any operation runs. It judges first and writes after,
 * so a pool it refuses is left exactly as it was:
 * <ol>
 *   <li><b>Judge</b> (reads only): every level, including a level being filled by an interrupted
 *       resize, is scanned. Each slot is EMPTY, half-inserted (INSERT: a claim never published), a
 *       torn item (its fingerprint is not its key's, or its bucket is not one of its key's
 *       candidates), a duplicate (a copy of a key other than its valid item), or a valid item, whose
 *       value block is marked in the rebuilt free-space bitmap (an offset that is no block, or a block
 *       two valid items share, is corruption).</li>
 *   <li><b>Bound</b>: a crash leaves at most one half-done operation per operation in flight (the
 *       header's {@linkplain PoolHeader#opsInFlightLimit() in-flight bound}, which engines raise
 *       before they run more), plus, during a resize, one per slot of the level being emptied; and
 *       it never tears an item (the key is persisted before the meta word that publishes it). More
 *       damage than that means something other than a crash changed the file: open refuses with
 *       {@link Reason#DAMAGE_BEYOND_CRASH} unless asked to repair.</li>
 *   <li><b>Repair</b> (writes): the slots judged broken are set EMPTY, and an interrupted resize is
 *       resumed.</li>
 * </ol>
 * The paper's own artifact scans only the bottom level; this scans all of them, over slot ranges in
 * parallel (as the GPU does with thousands of threads): the scan is the engine's {@link TablePasses#recover}. Judging needs no coordination between
 * ranges: a slot that is not its key's valid item is never any key's first match, so the decisions
 * do not depend on the order of the repairs.
 */
final class Recovery {

    private Recovery() {
    }

    /**
     * Open of a cleanly closed pool: free space and item count from its {@link CloseRecord}, no scan.
     * Null when the record cannot be trusted (then {@link #run} scans).
     */
    static RecoveryReport fromCloseRecord(Table table, boolean headerRepairNeeded) {
        long start = System.nanoTime();
        PoolHeap heap = table.blocks;
        CloseRecord.Loaded r = CloseRecord.read(table.file.segment(), table.headers.current(), heap.bitmapBlocks(),
                heap.bitmapWords());
        if (r == null || table.values.variableLengths() && r.segmentClasses() == null) {
            return null;  // format 3's record of the layout before segment classes: a bare block names no class
        }
        heap.restore(r.usedBits(), r.usedBlocks(), r.segmentClasses());
        table.regions = new RegionCheck(table.file, table.headers.current(), r.regionCrcs(), () -> table.regions = null);
        table.size.reset();
        table.size.add(r.items());
        long trailing = Math.max(0, table.file.fileSize() - table.headers.current().fileLength());
        long used = heap.usedBlocks();
        return new RecoveryReport(true, headerRepairNeeded, 0, 0, 0, false, 0, r.items(), used, heap.freeBlocks(),
                trailing, Duration.ofNanos(System.nanoTime() - start), true);
    }

    /**
     * Create: a table of zeros needs no scan (issue 55: {@code lastRecovery()} after {@code create()}
     * reported a scan of the empty table, 1.3 s for a large initial capacity). Every block is free.
     */
    static RecoveryReport fresh(Table table) {
        long start = System.nanoTime();
        PoolHeap heap = table.blocks;
        heap.startRebuild();
        heap.finishRebuild();
        table.size.reset();
        return new RecoveryReport(true, false, 0, 0, 0, false, 0, 0, 0, heap.freeBlocks(), 0,
                Duration.ofNanos(System.nanoTime() - start));
    }

    static RecoveryReport run(Table table, boolean previousShutdownClean, boolean headerRepairNeeded,
                              boolean repairBeyondCrash) {
        long start = System.nanoTime();
        TableLayout t = table.layout();
        PoolHeader header = table.headers.current();
        // A pool closed cleanly, whose close record is intact, had no operation in flight: the scan
        // must find exactly the state the record describes, and anything else is damage (issue 27:
        // a value offset flipped onto a free block passed the scan, and the block was handed out again).
        CloseRecord.Loaded closed = repairBeyondCrash ? null
                : CloseRecord.read(table.file.segment(), header, table.blocks.bitmapBlocks(), table.blocks.bitmapWords());
        long allowance = closed != null ? 0 : header.crashAllowance();
        if (!previousShutdownClean && !repairBeyondCrash) {
            CloseRecord.Opened opened = CloseRecord.readOpened(table.file.segment(), header);
            if (opened != null) {
                judgeUntouchedRegions(table, header, opened);
            }
        }
        table.blocks.startRebuild();
        TablePasses.Recovered found = table.passes.recover(table, t, allowance, repairBeyondCrash);
        table.blocks.finishRebuild();
        if (closed != null) {
            judgeAgainstCloseRecord(table, closed, found.items());
        }
        table.size.reset();
        table.size.add(found.items());
        boolean resumed = table.headers.current().resizing();
        long rehashed = resumed ? table.resizer.finishResize() : 0;
        long trailing = Math.max(0, table.file.fileSize() - table.headers.current().fileLength());
        PoolHeap heap = table.blocks;
        long used = heap.usedBlocks();
        return new RecoveryReport(previousShutdownClean, headerRepairNeeded, found.insertSlots(), found.tornSlots(),
                found.duplicates(), resumed, rehashed,
                table.size.sum(), used, heap.freeBlocks(), trailing, Duration.ofNanos(System.nanoTime() - start));
    }

    /**
     * After a crash of a process that opened the pool from its close record: every region that
     * process never reached must still be as the close recorded it (issue 52: else the scan, which
     * cannot tell an edit from a crash, accepted a moved value offset or a zeroed meta word).
     */
    private static void judgeUntouchedRegions(Table table, PoolHeader header, CloseRecord.Opened opened) {
        TableDigest digest = new TableDigest(header);
        int[] now = digest.crcs(table.file.segment(), opened.regionCrcs(), opened::touched);
        int changed = 0;
        int first = -1;
        for (int r = 0; r < now.length; r++) {
            if (now[r] != opened.regionCrcs()[r]) {
                changed++;
                first = first < 0 ? r : first;
            }
        }
        if (changed > 0) {
            long offset = digest.offsetOf(first);
            throw new PoolFormatException(Reason.DAMAGE_BEYOND_CRASH, table.file.path(), changed + " table region(s) "
                    + "changed that no operation reached since the pool was last closed cleanly, the first: buckets "
                    + digest.firstBucket(first) + " to " + (digest.firstBucket(first) + digest.bucketsIn(first) - 1)
                    + " of table level " + digest.levelOf(first) + " (pool bytes " + offset + " to "
                    + (offset + digest.bytesOf(first)) + "); a crash never changes such a region, so something other "
                    + "than gphash wrote to the pool; nothing was changed: `gphash check` shows the damage, `gphash "
                    + "recover --force` accepts the table as it is");
        }
    }

    /** Refuses a scan of a cleanly closed pool that does not find the state its close record describes. */
    private static void judgeAgainstCloseRecord(Table table, CloseRecord.Loaded closed, long items) {
        long[] scanned = table.blocks.usedBits();
        long[] recorded = closed.usedBits();
        for (int w = 0; w < scanned.length; w++) {
            long differ = scanned[w] ^ recorded[w];
            if (differ != 0) {
                long block = 64L * w + Long.numberOfTrailingZeros(differ);
                boolean itemHasIt = (scanned[w] & Long.lowestOneBit(differ)) != 0;
                throw new PoolFormatException(Reason.DAMAGE_BEYOND_CRASH, table.file.path(), "value block " + block
                        + (itemHasIt ? " is referred to by an item but was free" : " was in use but no item refers to it")
                        + " when the pool was closed cleanly (" + items + " items found, " + closed.items()
                        + " recorded); a crash never leaves that, so the table was changed by something else (a flipped "
                        + "bit, a copy or a tool); nothing was changed: `gphash check` shows the damage");
            }
        }
        if (items != closed.items()) {
            throw new PoolFormatException(Reason.DAMAGE_BEYOND_CRASH, table.file.path(), items + " items found but "
                    + closed.items() + " recorded when the pool was closed cleanly; nothing was changed: `gphash check` "
                    + "shows the damage");
        }
    }

    /** Refuses damage no crash explains, unless asked to repair it. */
    static void judge(Table table, long insert, long torn, long duplicates, long allowance, boolean repairBeyondCrash,
                      String named) {
        if (repairBeyondCrash) {
            return;
        }
        if (torn > 0) {
            throw new PoolFormatException(Reason.DAMAGE_BEYOND_CRASH, table.file.path(), torn
                    + " items do not match their key (fingerprint or bucket)" + named
                    + "; a crash never leaves such an item, so the pool was changed by something else (a flipped bit, "
                    + "a copy or a tool); nothing was changed: `gphash check` shows the damage, `gphash recover --force` "
                    + "clears those items");
        }
        if (insert + duplicates > allowance) {
            throw new PoolFormatException(Reason.DAMAGE_BEYOND_CRASH, table.file.path(), insert
                    + " half-inserted slots and " + duplicates + " duplicate items, more than the " + allowance
                    + " operations that can have been in flight at a crash; nothing was changed: `gphash check` shows "
                    + "the damage, `gphash recover --force` clears it");
        }
    }
}
