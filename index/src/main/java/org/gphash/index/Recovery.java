package org.gphash.index;

import java.lang.foreign.MemorySegment;
import java.time.Duration;

import org.gphash.PoolFormatException;
import org.gphash.RecoveryReport;

/**
 * Recovery on open (GPHash §3.2.3), single-threaded before any operation runs:
 * <ol>
 *   <li>every level, including a level being filled by an interrupted resize, is scanned: INSERT
 *       slots are cleared, items whose fingerprint does not match their key are cleared, and every
 *       copy of a key other than its valid item is removed (this also finishes an interrupted
 *       resize step whose bottom copy was not yet cleared);</li>
 *   <li>the free-space bitmap is rebuilt from the value offsets of the remaining items (a block
 *       is free exactly when no item refers to it), and the item count is taken;</li>
 *   <li>an interrupted resize is resumed.</li>
 * </ol>
 * The paper's own artifact scans only the bottom level; this scans all of them.
 */
final class Recovery {

    private Recovery() {
    }

    static RecoveryReport run(CpuTable table, boolean previousShutdownClean, boolean headerRepairNeeded) {
        long start = System.nanoTime();
        MemorySegment pool = table.file.segment();
        Geometry g = table.geometry;
        TableLayout t = table.layout();
        Probe probe = table.newProbe();
        ValueHeap heap = table.heap;
        heap.startRebuild();
        long insertCleared = 0;
        long tornCleared = 0;
        long duplicates = 0;
        int slotSize = g.slotSize();
        for (int d = 0; d < t.levelCount(); d++) {
            long level = t.levelOffset(d);
            long slots = t.bucketsAtDepth(d) * g.slotsPerBucket();
            for (long i = 0; i < slots; i++) {
                long slot = level + i * slotSize;
                long meta = Slots.getMeta(pool, slot);
                if (meta == SlotMeta.EMPTY) {
                    continue;
                }
                if (!SlotMeta.isItem(meta)) {
                    clear(table, pool, slot);
                    insertCleared++;
                    continue;
                }
                long keyAt = slot + SlotMeta.BYTES;
                probe.hash(pool, keyAt);
                if (probe.fingerprint != SlotMeta.fingerprint(meta)) {
                    clear(table, pool, slot);
                    tornCleared++;
                    continue;
                }
                if (!heap.isBlock(SlotMeta.valueOffset(meta))) {
                    throw new PoolFormatException(PoolFormatException.Reason.CORRUPT, table.file.path(),
                            "slot at offset " + slot + " refers to value offset " + SlotMeta.valueOffset(meta)
                                    + ", which is not a block of the value heap");
                }
                probe.scan(pool, t, pool, keyAt);
                if (probe.matchCount > 0 && probe.matchSlot[0] != slot) {
                    clear(table, pool, slot);
                    duplicates++;
                }
            }
        }
        long items = 0;
        for (int d = 0; d < t.levelCount(); d++) {
            long level = t.levelOffset(d);
            long slots = t.bucketsAtDepth(d) * g.slotsPerBucket();
            for (long i = 0; i < slots; i++) {
                long slot = level + i * slotSize;
                long meta = Slots.getMeta(pool, slot);
                if (SlotMeta.isItem(meta)) {
                    if (!heap.markUsed(SlotMeta.valueOffset(meta))) {
                        throw new PoolFormatException(PoolFormatException.Reason.CORRUPT, table.file.path(),
                                "two items refer to the value block at offset " + SlotMeta.valueOffset(meta));
                    }
                    items++;
                }
            }
        }
        heap.finishRebuild();
        table.size.reset();
        table.size.add(items);
        PoolHeader header = table.headers.current();
        boolean resumed = header.resizing();
        long rehashed = 0;
        if (resumed) {
            rehashed = table.finishResize();
        }
        long trailing = Math.max(0, table.file.fileSize() - table.headers.current().fileLength());
        long used = heap.totalBlocks() - heap.freeBlocks();
        return new RecoveryReport(previousShutdownClean, headerRepairNeeded, insertCleared, tornCleared, duplicates,
                resumed, rehashed, table.size.sum(), used, heap.freeBlocks(), trailing,
                Duration.ofNanos(System.nanoTime() - start));
    }

    private static void clear(CpuTable table, MemorySegment pool, long slot) {
        Slots.setMeta(pool, slot, SlotMeta.EMPTY);
        table.file.persister().persist(pool, slot, SlotMeta.BYTES);
    }
}
