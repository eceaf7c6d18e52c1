package org.gphash.index;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.LongStream;

import org.gphash.PoolFormatException;
import org.gphash.PoolFormatException.Reason;
import org.gphash.RecoveryReport;

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
 * parallel (as the GPU does with thousands of threads). Judging needs no coordination between
 * ranges: a slot that is not its key's valid item is never any key's first match, so the decisions
 * do not depend on the order of the repairs.
 */
final class Recovery {

    /** Slots per parallel task: big enough to amortise a task, small enough to balance. */
    private static final long SLOTS_PER_TASK = 1 << 16;
    /** Offsets of broken slots named in a refusal's message. */
    private static final int NAMED = 5;

    private Recovery() {
    }

    /** What judging found. Slots to clear are kept only while there may be a repair to make. */
    private static final class Findings {
        final LongAdder insert = new LongAdder();
        final LongAdder torn = new LongAdder();
        final LongAdder duplicates = new LongAdder();
        final LongAdder items = new LongAdder();
        final ConcurrentLinkedQueue<long[]> toClear = new ConcurrentLinkedQueue<>();
        final AtomicLong kept = new AtomicLong();
        final ConcurrentLinkedQueue<Long> tornNamed = new ConcurrentLinkedQueue<>();
        final ConcurrentLinkedQueue<String> corrupt = new ConcurrentLinkedQueue<>();
        final long keepAtMost;

        Findings(long keepAtMost) {
            this.keepAtMost = keepAtMost;
        }
    }

    /**
     * Open of a cleanly closed pool: free space and item count from its {@link CloseRecord}, no scan.
     * Null when the record cannot be trusted (then {@link #run} scans).
     */
    static RecoveryReport fromCloseRecord(CpuTable table, boolean headerRepairNeeded) {
        long start = System.nanoTime();
        ValueHeap heap = table.heap;
        TableKernels.HeapLayout layout = heap.exportLayout();
        CloseRecord.Loaded r = CloseRecord.read(table.file.segment(), table.headers.current(), heap.totalBlocks(),
                layout.words());
        if (r == null) {
            return null;
        }
        heap.restore(r.usedBits(), r.usedBlocks());
        table.size.reset();
        table.size.add(r.items());
        long trailing = Math.max(0, table.file.fileSize() - table.headers.current().fileLength());
        long used = heap.totalBlocks() - heap.freeBlocks();
        return new RecoveryReport(true, headerRepairNeeded, 0, 0, 0, false, 0, r.items(), used, heap.freeBlocks(),
                trailing, Duration.ofNanos(System.nanoTime() - start), true);
    }

    static RecoveryReport run(CpuTable table, boolean previousShutdownClean, boolean headerRepairNeeded,
                              boolean repairBeyondCrash) {
        long start = System.nanoTime();
        TableLayout t = table.layout();
        PoolHeader header = table.headers.current();
        long allowance = header.crashAllowance();
        table.heap.startRebuild();
        long insert;
        long torn;
        long duplicates;
        long items;
        if (table.kernels != null) {
            TableKernels.RecoveryCounts judged = table.kernels.countBrokenAndDuplicates(t);
            judge(table, judged.insertSlots(), judged.tornSlots(), judged.duplicates(), allowance, repairBeyondCrash,
                    "");
            // Marks only valid items when some items are to go (a resize's copy shares its block).
            TableKernels.MarkedBlocks marked = table.kernels.markValueBlocks(t, table.heap.exportLayout(),
                    judged.tornSlots() + judged.duplicates() > 0);
            TableKernels.RecoveryCounts done = judged.total() == 0 ? judged : table.kernels.clearBrokenAndDuplicates(t);
            table.heap.markUsedBits(marked.usedBits());
            insert = done.insertSlots();
            torn = done.tornSlots();
            duplicates = done.duplicates();
            items = marked.items();
        } else {
            Findings f = new Findings(repairBeyondCrash ? Long.MAX_VALUE : allowance);
            forEachRange(table, t, (first, end) -> judgeRange(table, t, first, end, f));
            if (!f.corrupt.isEmpty()) {
                throw new PoolFormatException(Reason.CORRUPT, table.file.path(), f.corrupt.peek()
                        + (f.corrupt.size() > 1 ? " (and " + (f.corrupt.size() - 1) + " more problems)" : "")
                        + "; nothing was changed");
            }
            insert = f.insert.sum();
            torn = f.torn.sum();
            duplicates = f.duplicates.sum();
            judge(table, insert, torn, duplicates, allowance, repairBeyondCrash, named(f));
            clearAll(table, f);
            items = f.items.sum();
        }
        table.heap.finishRebuild();
        table.size.reset();
        table.size.add(items);
        boolean resumed = table.headers.current().resizing();
        long rehashed = resumed ? table.finishResize() : 0;
        long trailing = Math.max(0, table.file.fileSize() - table.headers.current().fileLength());
        ValueHeap heap = table.heap;
        long used = heap.totalBlocks() - heap.freeBlocks();
        return new RecoveryReport(previousShutdownClean, headerRepairNeeded, insert, torn, duplicates, resumed, rehashed,
                table.size.sum(), used, heap.freeBlocks(), trailing, Duration.ofNanos(System.nanoTime() - start));
    }

    /** Refuses damage no crash explains, unless asked to repair it. */
    private static void judge(CpuTable table, long insert, long torn, long duplicates, long allowance,
                              boolean repairBeyondCrash, String named) {
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

    private static String named(Findings f) {
        if (f.tornNamed.isEmpty()) {
            return "";
        }
        long[] slots = f.tornNamed.stream().mapToLong(Long::longValue).sorted().limit(NAMED).toArray();
        return " (slots at offsets " + Arrays.toString(slots).replaceAll("[\\[\\]]", "") + (f.torn.sum() > NAMED ? ", ..." : "")
                + ")";
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

    /** Judges the slots at offsets [first, end): reads only; the bitmap it marks is in memory. */
    private static void judgeRange(CpuTable table, TableLayout t, long first, long end, Findings f) {
        MemorySegment pool = table.file.segment();
        Probe probe = table.newProbe();
        int slotSize = table.geometry.slotSize();
        long[] clear = new long[16];
        int nClear = 0;
        long items = 0;
        for (long slot = first; slot < end; slot += slotSize) {
            long meta = Slots.getMeta(pool, slot);
            if (meta == SlotMeta.EMPTY) {
                continue;
            }
            boolean broken;
            if (!SlotMeta.isItem(meta)) {
                f.insert.increment();
                broken = true;
            } else {
                long keyAt = slot + SlotMeta.BYTES;
                probe.hash(pool, keyAt);
                boolean torn = probe.fingerprint != SlotMeta.fingerprint(meta);
                if (!torn) {
                    probe.scan(pool, t, pool, keyAt);
                    // No match at all: the item sits in a bucket its key never probes.
                    torn = probe.matchCount == 0;
                }
                if (torn) {
                    f.torn.increment();
                    if (f.tornNamed.size() < NAMED) {
                        f.tornNamed.add(slot);
                    }
                    broken = true;
                } else if (probe.matchSlot[0] != slot) {
                    f.duplicates.increment();
                    broken = true;
                } else {
                    broken = false;
                    markValue(table, slot, SlotMeta.valueOffset(meta), f);
                    items++;
                }
            }
            if (broken && f.kept.incrementAndGet() <= f.keepAtMost) {
                if (nClear == clear.length) {
                    clear = Arrays.copyOf(clear, nClear * 2);
                }
                clear[nClear++] = slot;
            }
        }
        f.items.add(items);
        if (nClear > 0) {
            f.toClear.add(Arrays.copyOf(clear, nClear));
        }
    }

    private static void markValue(CpuTable table, long slot, long valueOffset, Findings f) {
        if (!table.heap.isBlock(valueOffset)) {
            f.corrupt.add("the item in slot " + slot + " refers to value offset " + valueOffset
                    + ", which is not a block of the value heap");
        } else if (!table.heap.markUsed(valueOffset)) {
            f.corrupt.add("two items refer to the value block at offset " + valueOffset);
        }
    }

    /** Repair: every slot judged broken becomes EMPTY (persisted in as few calls as possible). */
    private static void clearAll(CpuTable table, Findings f) {
        MemorySegment pool = table.file.segment();
        long[] all = f.toClear.stream().flatMapToLong(Arrays::stream).sorted().toArray();
        for (long slot : all) {
            Slots.setMeta(pool, slot, SlotMeta.EMPTY);
        }
        int i = 0;
        while (i < all.length) {
            long runStart = all[i];
            long runEnd = all[i] + SlotMeta.BYTES;
            int j = i + 1;
            while (j < all.length && all[j] <= runEnd + PoolSpace.EXTENT_ALIGNMENT) {
                runEnd = all[j] + SlotMeta.BYTES;
                j++;
            }
            table.file.persister().persist(pool, runStart, runEnd - runStart);
            i = j;
        }
    }
}
