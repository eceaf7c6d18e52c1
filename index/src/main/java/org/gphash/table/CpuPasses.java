package org.gphash.table;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.LongStream;

import org.gphash.Durability;
import org.gphash.Geometry;
import org.gphash.error.PoolFormatException.Reason;
import org.gphash.error.PoolFormatException;
import org.gphash.format.MetaFormat;
import org.gphash.format.PoolHeader;
import org.gphash.format.SlotMeta;
import org.gphash.persistence.PoolFile;
import org.gphash.spi.CrashPoint;

/**
 * The whole-table passes as Java loops over the mapped pool (the CPU engine's): recovery's judge
 * over slot ranges in parallel, and resize's rehash of the bottom level.
 */
final class CpuPasses implements TablePasses {

    /** Slots per parallel task: big enough to amortise a task, small enough to balance. */
    private static final long SLOTS_PER_TASK = 1 << 16;
    /** Offsets of broken slots named in a refusal's message. */
    private static final int NAMED = 5;

    @Override
    public void attach(PoolFile file, Geometry geometry, long[] seeds, int formatVersion) {
        // Java threads read the mapping directly: nothing to set up.
    }

    @Override
    public boolean supportsItemChecksums() {
        return true;
    }

    /** Formats 2 and 3 (format 3 for pools of one value size: issue 53, step 3). */
    @Override
    public boolean supportsFormat(int version) {
        return PoolHeader.readable(version);
    }

    @Override
    public Durability durability(Durability asked) {
        return asked;
    }

    @Override
    public Recovered recover(Table table, TableLayout t, long allowance, boolean repairBeyondCrash) {
        Findings f = new Findings(repairBeyondCrash ? Long.MAX_VALUE : allowance);
        forEachRange(table, t, (first, end) -> judgeRange(table, t, first, end, f));
        if (!f.corrupt.isEmpty()) {
            throw new PoolFormatException(Reason.CORRUPT, table.file.path(), f.corrupt.peek()
                    + (f.corrupt.size() > 1 ? " (and " + (f.corrupt.size() - 1) + " more problems)" : "")
                    + "; nothing was changed");
        }
        long insert = f.insert.sum();
        long torn = f.torn.sum();
        long duplicates = f.duplicates.sum();
        Recovery.judge(table, insert, torn, duplicates, allowance, repairBeyondCrash, named(f));
        clearBroken(table, f);
        return new Recovered(insert, torn, duplicates, f.items.sum());
    }

    @Override
    public void rebuildHeap(Table table) {
        throw new UnsupportedOperationException("the CPU engine keeps its free space exact: nothing to rebuild");
    }

    @Override
    public long emptyBottomLevel(Table table) {
        TableLayout layout = table.layout();
        Geometry geometry = table.geometry;
        Resizer resizer = table.resizer;
        int bottomDepth = layout.levelCount() - 1;
        long bottom = layout.levelOffset(bottomDepth);
        long buckets = layout.bucketsAtDepth(bottomDepth);
        Probe probe = table.newProbe();
        int slotSize = geometry.slotSize();
        int slots = geometry.slotsPerBucket();
        long moved = 0;
        TableLayout upper = layout.withoutBottom();
        final int batchBuckets = 1024;
        long[] copied = new long[batchBuckets * slots];
        long[] cleared = new long[batchBuckets * slots];
        for (long first = 0; first < buckets; first += batchBuckets) {
            long last = Math.min(buckets, first + batchBuckets);
            int nCopied = 0;
            int nCleared = 0;
            MemorySegment pool = table.file.segment();
            for (long b = first; b < last; b++) {
                for (int s = 0; s < slots; s++) {
                    long slot = bottom + b * geometry.bucketSize() + (long) s * slotSize;
                    long meta = Slots.getMeta(pool, slot);
                    if (!SlotMeta.isItem(meta)) {
                        continue;
                    }
                    long keyAt = slot + SlotMeta.BYTES;
                    probe.hash(pool, keyAt);
                    probe.scan(pool, upper, pool, keyAt);
                    if (probe.matchCount > 0) {
                        // Already above (copied before a crash, or an older duplicate): the upper item is valid.
                        if (!MetaFormat.sameBlock(probe.matchMeta[0], meta)) {
                            table.blocks.free(table.meta.valueOffset(meta));
                        }
                        table.size.decrement();
                    } else {
                        long target = probe.leastLoadedEmptySlot();
                        while (target < 0) {
                            resizer.addTopLevel();
                            upper = table.layout().withoutBottom();
                            pool = table.file.segment(); // the file grew: a new mapping
                            probe.scan(pool, upper, pool, keyAt);
                            target = probe.leastLoadedEmptySlot();
                        }
                        SlotProtocol.copyExclusive(pool, target, pool, keyAt, geometry.keySize(), meta);
                        copied[nCopied++] = target;
                        moved++;
                    }
                    cleared[nCleared++] = slot;
                }
            }
            resizer.persistSlots(pool, copied, nCopied, slotSize);
            if (nCopied > 0) {
                table.hook.reached(CrashPoint.RESIZE_ITEM_COPIED);
            }
            for (int i = 0; i < nCleared; i++) {
                SlotProtocol.clearExclusive(pool, cleared[i]);
            }
            resizer.persistSlots(pool, cleared, nCleared, SlotMeta.BYTES);
            if (nCleared > 0) {
                table.hook.reached(CrashPoint.RESIZE_ITEM_MOVED);
            }
        }
        return moved;
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
    private static void forEachRange(Table table, TableLayout t, RangeTask task) {
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
    private static void judgeRange(Table table, TableLayout t, long first, long end, Findings f) {
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
                    markValue(table, slot, table.meta.valueOffset(meta), table.meta.valueClass(meta), f);
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

    private static void markValue(Table table, long slot, long valueOffset, int valueClass, Findings f) {
        if (!table.blocks.isBlock(valueOffset, valueClass)) {
            f.corrupt.add("the item in slot " + slot + " refers to value offset " + valueOffset
                    + ", which is not a block of the value heap");
        } else if (!table.blocks.markUsed(valueOffset, valueClass)) {
            f.corrupt.add("two items refer to the value block at offset " + valueOffset);
        }
    }

    /** Repair: every slot judged broken becomes EMPTY (persisted in as few calls as possible). */
    private static void clearBroken(Table table, Findings f) {
        MemorySegment pool = table.file.segment();
        long[] all = f.toClear.stream().flatMapToLong(Arrays::stream).sorted().toArray();
        for (long slot : all) {
            SlotProtocol.clearExclusive(pool, slot);
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
