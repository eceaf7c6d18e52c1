package org.gphash.recovery;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

import org.gphash.Geometry;
import org.gphash.cli.Progress;
import org.gphash.error.PoolFormatException;
import org.gphash.format.CloseRecord;
import org.gphash.format.HeapChunk;
import org.gphash.format.MetaFormat;
import org.gphash.format.PoolHeader;
import org.gphash.format.SlotMeta;
import org.gphash.format.ValueFormat;
import org.gphash.table.PoolInspector;
import org.gphash.table.TableLayout;

/**
 * One read-only pass over a pool: the header copies, the extents, every slot of every level (its
 * state, its fingerprint against its key, its position against the key's candidate order, its value
 * offset against the heap), and the occupancy figures. The pool is opened through
 * {@link PoolInspector}, so it is mapped read-only and locked against writers while this runs.
 */
public final class PoolScanner {

    /** How the pool's meta words name value blocks: its header was read as this build's format. */

    /** Meta words are read with the engine's access width and byte order (native, 8-aligned). */
    private static final ValueLayout.OfLong META = ValueLayout.JAVA_LONG;

    private PoolScanner() {
    }

    /**
     * Scans the pool at {@code path}. A header that cannot be used at all is a finding, not an
     * exception; a missing or locked file is an exception (there is nothing to judge).
     */
    public static PoolReport scan(Path path, Progress progress) {
        return scan(path, progress, false);
    }

    /** As {@link #scan(Path, Progress)}; {@code deep} also checks every item against its checksum. */
    public static PoolReport scan(Path path, Progress progress, boolean deep) {
        PoolInspector pool;
        try {
            pool = PoolInspector.open(path);
        } catch (PoolFormatException e) {
            Findings f = new Findings();
            boolean notAPool = e.reason() == PoolFormatException.Reason.NOT_A_POOL
                    || e.reason() == PoolFormatException.Reason.WRONG_VERSION;
            f.add(notAPool ? Problem.NOT_A_POOL : Problem.UNREADABLE_HEADER, e.reason() + ": " + e.getMessage());
            return new PoolReport(path.toAbsolutePath(), sizeOf(path), null, new PoolInspector.HeaderCopy[0], f,
                    List.of(), 0, 0, 0, 0);
        }
        try (pool) {
            return scan(pool, progress, deep);
        }
    }

    private static long sizeOf(Path path) {
        try {
            return Files.size(path);
        } catch (IOException e) {
            return -1;
        }
    }

    static PoolReport scan(PoolInspector pool, Progress progress, boolean deep) {
        Findings f = new Findings();
        if (deep && !pool.itemChecksums()) {
            f.add(Problem.NO_ITEM_CHECKSUMS, "check --deep verified no values");
        }
        PoolHeader h = pool.header();
        Geometry g = h.geometry();
        checkHeader(pool, f);
        TableLayout t = pool.layout();
        checkExtents(h, t, g, f);
        HeapMap heap = HeapMap.of(h);
        MetaFormat meta = MetaFormat.of(h.formatVersion());
        ValueFormat values = ValueFormat.of(h.formatVersion(), g.valueSize(), g.itemChecksums());
        MemorySegment seg = pool.segment();
        long totalSlots = t.totalBuckets() * g.slotsPerBucket();
        progress.start("scanning " + totalSlots + " slots", totalSlots);
        List<LevelStats> levels = new ArrayList<>();
        long items = 0;
        for (int d = 0; d < t.levelCount(); d++) {
            long base = t.levelOffset(d);
            long buckets = t.bucketsAtDepth(d);
            long[] histogram = new long[g.slotsPerBucket() + 1];
            long levelItems = 0;
            for (long b = 0; b < buckets; b++) {
                int load = 0;
                for (int s = 0; s < g.slotsPerBucket(); s++) {
                    long slot = base + b * g.bucketSize() + (long) s * g.slotSize();
                    if (checkSlot(pool, seg, heap, meta, values, slot, d, f, deep)) {
                        load++;
                    }
                }
                histogram[load]++;
                levelItems += load;
                progress.advance(g.slotsPerBucket());
            }
            items += levelItems;
            levels.add(new LevelStats(d, base, buckets, buckets * g.slotsPerBucket(), levelItems, histogram));
        }
        progress.finish();
        CloseRecord.Loaded record = pool.trustedCloseRecord();
        if (record != null) {
            if (record.items() != items || record.items() != heap.usedBlocks()) {
                f.add(Problem.CLOSE_RECORD_MISMATCH, "it says " + record.items() + " items (and as many value blocks "
                        + "in use); the table holds " + items + " items using " + heap.usedBlocks());
            }
            long block = heap.firstDifference(record.usedBits());
            if (block >= 0) {
                f.add(Problem.CLOSE_RECORD_MISMATCH, "value block " + block + (heap.used(block)
                        ? " is referred to by an item but was free" : " was in use but no item refers to it")
                        + " at the clean close");
            }
        }
        for (String region : pool.changedRegions()) {
            f.add(Problem.TABLE_CHANGED_AFTER_CLOSE, region);
        }
        return new PoolReport(pool.path(), pool.fileSize(), h, new PoolInspector.HeaderCopy[] {pool.headerCopy(0),
                pool.headerCopy(1)}, f, levels, items, heap.totalBlocks(), heap.usedBlocks(), heap.blockBytes());
    }

    private static void checkHeader(PoolInspector pool, Findings f) {
        PoolHeader h = pool.header();
        for (int i = 0; i < 2; i++) {
            PoolInspector.HeaderCopy c = pool.headerCopy(i);
            if (!c.valid()) {
                f.add(Problem.HEADER_COPY_DAMAGED, "header copy " + (i == 0 ? "A (offset 0)" : "B (offset 2048)")
                        + ": " + (c.state().equals("BAD_CHECKSUM") ? "bad CRC32C checksum" : c.state()));
            }
        }
        if (pool.headerCopy(0).valid() && pool.headerCopy(1).valid() && pool.headerCopiesDisagree()) {
            f.add(Problem.HEADER_COPIES_DIFFER, "copy A has sequence " + pool.headerCopy(0).sequence() + ", copy B "
                    + pool.headerCopy(1).sequence() + ", and they describe different states"
                    + (pool.headerCopiesDisagreeOnIdentity() ? "; they disagree on the geometry or hash seeds, which no "
                    + "crash changes: the table's items confirm the copy with sequence " + pool.header().sequence()
                    + ", which open uses and writes to both places" : ""));
        }
        if (h.resizing()) {
            f.add(Problem.RESIZE_IN_PROGRESS, (h.levelOffsets().length - h.geometry().levels())
                    + " extra level(s) still listed");
        }
        if (!h.cleanShutdown()) {
            f.add(Problem.NOT_CLEANLY_SHUT_DOWN, "clean-shutdown flag is not set");
        }
        long trailing = pool.fileSize() - h.fileLength();
        if (trailing > 0) {
            f.add(Problem.TRAILING_BYTES, trailing + " bytes past the committed length " + h.fileLength());
        }
    }

    /** Levels and heap chunks must not overlap each other or the header region. */
    private static void checkExtents(PoolHeader h, TableLayout t, Geometry g, Findings f) {
        record Extent(String name, long offset, long length) {
        }
        List<Extent> extents = new ArrayList<>();
        extents.add(new Extent("header region", 0, PoolHeader.REGION_BYTES));
        for (int d = 0; d < t.levelCount(); d++) {
            extents.add(new Extent("level at depth " + d, t.levelOffset(d), t.bucketsAtDepth(d) * g.bucketSize()));
        }
        for (HeapChunk c : h.heapChunks()) {
            extents.add(new Extent("value heap chunk", c.offset(), c.length()));
        }
        if (h.closeRecord().present()) {
            extents.add(new Extent("close record", h.closeRecord().offset(), h.closeRecord().length()));
        }
        extents.sort(Comparator.comparingLong(Extent::offset));
        for (int i = 1; i < extents.size(); i++) {
            Extent a = extents.get(i - 1);
            Extent b = extents.get(i);
            if (a.offset() + a.length() > b.offset()) {
                f.add(Problem.EXTENTS_OVERLAP, a.name() + " at " + a.offset() + "+" + a.length() + " overlaps "
                        + b.name() + " at " + b.offset() + "+" + b.length());
            }
        }
    }

    /** Judges one slot; returns whether it holds a published item (for occupancy). */
    private static boolean checkSlot(PoolInspector pool, MemorySegment seg, HeapMap heap, MetaFormat format,
                                     ValueFormat values, long slot, int depth, Findings f, boolean deep) {
        long meta = seg.get(META, slot);
        if (meta == SlotMeta.EMPTY) {
            return false;
        }
        if (!SlotMeta.isItem(meta)) {
            f.add(Problem.INSERT_SLOT, "slot at offset " + slot + " (depth " + depth + ") reads INSERT (meta 0x"
                    + Long.toHexString(meta) + ")");
            return false;
        }
        long keyAt = slot + SlotMeta.BYTES;
        int expected = pool.fingerprintOfKeyAt(keyAt);
        int actual = SlotMeta.fingerprint(meta);
        if (expected != actual) {
            f.add(Problem.TORN_FINGERPRINT, "slot at offset " + slot + " has fingerprint 0x" + Integer.toHexString(actual)
                    + " but its key hashes to 0x" + Integer.toHexString(expected));
            return true;
        }
        long valid = pool.validSlotOfKeyAt(keyAt);
        if (valid < 0) {
            f.add(Problem.MISPLACED_ITEM, "slot at offset " + slot + " (depth " + depth
                    + ") holds a key none of whose candidate slots is this one");
        } else if (valid != slot) {
            f.add(Problem.DUPLICATE_KEY, "slot at offset " + slot + " (depth " + depth
                    + ") holds a key whose valid item is at offset " + valid);
        }
        long offset = format.valueOffset(meta);
        int valueClass = format.valueClass(meta);
        long block = heap.blockOf(offset, valueClass);
        if (block < 0) {
            f.add(Problem.BAD_VALUE_OFFSET, "slot at offset " + slot + " refers to value offset " + offset
                    + ", which is not a block of the value heap (" + heap.describe() + ")");
        } else if (!heap.claim(block)) {
            f.add(Problem.SHARED_VALUE_BLOCK, "slot at offset " + slot + " refers to the value block at " + offset
                    + ", which an earlier slot also refers to");
        } else if (!values.frameWhole(seg, offset, valueClass)) {
            f.add(Problem.TORN_VALUE_FRAME, "the item in slot at offset " + slot + " has no whole value header in its "
                    + "block at " + offset + " for the pool's values");
        } else if (deep && valid == slot && !pool.itemChecksumMatches(slot, offset)) {
            f.add(Problem.ITEM_CHECKSUM, "the item in slot at offset " + slot + " (value block at " + offset
                    + ") does not match its checksum");
        }
        return true;
    }
}
