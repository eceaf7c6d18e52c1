package org.gphash.index;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.LongStream;

import org.gphash.PoolFormatException;
import org.gphash.RecoveryReport;

/**
 * Recovery on open (GPHash §3.2.3), before any operation runs:
 * <ol>
 *   <li>every level, including a level being filled by an interrupted resize, is scanned: INSERT
 *       slots are cleared, items whose fingerprint does not match their key are cleared, and every
 *       copy of a key other than its valid item is removed (this also finishes an interrupted
 *       resize step whose bottom copy was not yet cleared);</li>
 *   <li>the free-space bitmap is rebuilt from the value offsets of the remaining items (a block
 *       is free exactly when no item refers to it), and the item count is taken;</li>
 *   <li>an interrupted resize is resumed.</li>
 * </ol>
 * The paper's own artifact scans only the bottom level; this scans all of them. Passes 1 and 2 run
 * over slot ranges in parallel (as the GPU does with thousands of threads): each range only ever
 * clears slots that are not the valid item of their key, which no other range's decision depends
 * on, so the ranges need no coordination.
 */
final class Recovery {

    /** Slots per parallel task: big enough to amortise a task, small enough to balance. */
    private static final long SLOTS_PER_TASK = 1 << 16;

    private Recovery() {
    }

    /** Counts of what pass 1 cleared. */
    private static final class Counts {
        final LongAdder insert = new LongAdder();
        final LongAdder torn = new LongAdder();
        final LongAdder duplicates = new LongAdder();
        final LongAdder items = new LongAdder();
    }

    static RecoveryReport run(CpuTable table, boolean previousShutdownClean, boolean headerRepairNeeded) {
        long start = System.nanoTime();
        TableLayout t = table.layout();
        table.heap.startRebuild();
        Counts counts = new Counts();
        if (table.kernels != null) {
            TableKernels.RecoveryCounts c = table.kernels.clearBrokenAndDuplicates(t);
            counts.insert.add(c.insertSlots());
            counts.torn.add(c.tornSlots());
            counts.duplicates.add(c.duplicates());
            TableKernels.MarkedBlocks marked = table.kernels.markValueBlocks(t, table.heap.exportLayout());
            table.heap.markUsedBits(marked.usedBits());
            counts.items.add(marked.items());
        } else {
            forEachRange(table, t, (first, end) -> clearBrokenAndDuplicates(table, t, first, end, counts));
            forEachRange(table, t, (first, end) -> markValueBlocks(table, first, end, counts));
        }
        table.heap.finishRebuild();
        table.size.reset();
        table.size.add(counts.items.sum());
        boolean resumed = table.headers.current().resizing();
        long rehashed = resumed ? table.finishResize() : 0;
        long trailing = Math.max(0, table.file.fileSize() - table.headers.current().fileLength());
        ValueHeap heap = table.heap;
        long used = heap.totalBlocks() - heap.freeBlocks();
        return new RecoveryReport(previousShutdownClean, headerRepairNeeded, counts.insert.sum(), counts.torn.sum(),
                counts.duplicates.sum(), resumed, rehashed, table.size.sum(), used, heap.freeBlocks(), trailing,
                Duration.ofNanos(System.nanoTime() - start));
    }

    private interface RangeTask {
        void run(long firstSlot, long endSlot);
    }

    /** Runs {@code task} over every level's slots, as ranges of slot offsets, in parallel. */
    private static void forEachRange(CpuTable table, TableLayout t, RangeTask task) {
        int slotSize = table.geometry.slotSize();
        for (int d = 0; d < t.levelCount(); d++) {
            long level = t.levelOffset(d);
            long slots = t.bucketsAtDepth(d) * table.geometry.slotsPerBucket();
            long tasks = (slots + SLOTS_PER_TASK - 1) / SLOTS_PER_TASK;
            LongStream.range(0, tasks).parallel().forEach(i -> {
                long first = i * SLOTS_PER_TASK;
                long end = Math.min(slots, first + SLOTS_PER_TASK);
                task.run(level + first * slotSize, level + end * slotSize);
            });
        }
    }

    /** Pass 1 over slots at offsets [first, end). */
    private static void clearBrokenAndDuplicates(CpuTable table, TableLayout t, long first, long end, Counts counts) {
        MemorySegment pool = table.file.segment();
        Probe probe = table.newProbe();
        int slotSize = table.geometry.slotSize();
        for (long slot = first; slot < end; slot += slotSize) {
            long meta = Slots.getMeta(pool, slot);
            if (meta == SlotMeta.EMPTY) {
                continue;
            }
            if (!SlotMeta.isItem(meta)) {
                clear(table, pool, slot);
                counts.insert.increment();
                continue;
            }
            long keyAt = slot + SlotMeta.BYTES;
            probe.hash(pool, keyAt);
            if (probe.fingerprint != SlotMeta.fingerprint(meta)) {
                // A torn slot never matches any key's probe, so clearing it changes no other decision.
                clear(table, pool, slot);
                counts.torn.increment();
                continue;
            }
            if (!table.heap.isBlock(SlotMeta.valueOffset(meta))) {
                throw new PoolFormatException(PoolFormatException.Reason.CORRUPT, table.file.path(),
                        "slot at offset " + slot + " refers to value offset " + SlotMeta.valueOffset(meta)
                                + ", which is not a block of the value heap");
            }
            probe.scan(pool, t, pool, keyAt);
            if (probe.matchCount > 0 && probe.matchSlot[0] != slot) {
                clear(table, pool, slot);
                counts.duplicates.increment();
            }
        }
    }

    /** Pass 2 over slots at offsets [first, end): every remaining item owns its value block. */
    private static void markValueBlocks(CpuTable table, long first, long end, Counts counts) {
        MemorySegment pool = table.file.segment();
        int slotSize = table.geometry.slotSize();
        long items = 0;
        for (long slot = first; slot < end; slot += slotSize) {
            long meta = Slots.getMeta(pool, slot);
            if (SlotMeta.isItem(meta)) {
                if (!table.heap.markUsed(SlotMeta.valueOffset(meta))) {
                    throw new PoolFormatException(PoolFormatException.Reason.CORRUPT, table.file.path(),
                            "two items refer to the value block at offset " + SlotMeta.valueOffset(meta));
                }
                items++;
            }
        }
        counts.items.add(items);
    }

    private static void clear(CpuTable table, MemorySegment pool, long slot) {
        Slots.setMeta(pool, slot, SlotMeta.EMPTY);
        table.file.persister().persist(pool, slot, SlotMeta.BYTES);
    }
}
