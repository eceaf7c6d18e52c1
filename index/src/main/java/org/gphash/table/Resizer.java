package org.gphash.table;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

import org.gphash.Geometry;
import org.gphash.PoolFullException;
import org.gphash.format.ExtentTag;
import org.gphash.format.HeapChunk;
import org.gphash.format.PoolHeader;
import org.gphash.spi.CrashPoint;

/**
 * Resizing (GPHash §3.2.3), the same for both engines: a new top level twice the size of the current
 * one is added and committed, the bottom level is emptied into the levels above it (by the engine's
 * {@link TablePasses}), and the level table without it is committed, its space joining the value
 * heap. Safe to repeat after a crash at any point, so recovery finishes an interrupted resize with
 * {@link #finishResize()}.
 */
public final class Resizer {

    private final Table table;

    Resizer(Table table) {
        this.table = table;
    }

    /** Adds a top level and empties the bottom one, unless another thread already resized. */
    public void resize(TableLayout observed) {
        table.checkAllRegions();  // a resize moves items between regions: all must be as the close left them
        Table t = table;
        t.gate.runExclusive(() -> {
            if (t.layout().equals(observed)) {
                long start = System.nanoTime();
                if (t.persistOnSyncOnly) {
                    // A resize persists the items it moves; the values they refer to must be durable first.
                    t.persistEverything();
                }
                addTopLevel();
                t.hook.reached(CrashPoint.RESIZE_STARTED);
                finishResize();
                TableLayout now = t.layout();
                PoolEvents.resized(t.file.path(), now.topLog2(), t.size.sum(), System.nanoTime() - start);
                if (PoolLog.LOG.isLoggable(System.Logger.Level.DEBUG)) {
                    PoolLog.LOG.log(System.Logger.Level.DEBUG, "gphash: resized pool {0}: top level 2^{1} buckets, {2} "
                            + "levels, {3} items, in {4} ms", t.file.path(), now.topLog2(), now.levelCount(),
                            t.size.sum(), (System.nanoTime() - start) / 1_000_000);
                }
            }
        });
    }

    /** Allocates, zeroes and commits a top level twice the size of the current one. */
    void addTopLevel() {
        Table t = table;
        Geometry geometry = t.geometry;
        PoolHeader h = t.headers.current();
        if (h.levelOffsets().length >= geometry.levels() + PoolHeader.MAX_EXTRA_LEVELS) {
            throw new IllegalStateException("pool " + t.file.path() + ": a resize would need more than "
                    + PoolHeader.MAX_EXTRA_LEVELS + " extra levels");
        }
        int newLog2 = h.topLog2() + 1;
        long bytes = (1L << newLog2) * geometry.bucketSize();
        long offset = PoolSpace.nextExtent(h);
        long end = offset + bytes;
        long oldFileSize = t.file.fileSize();
        PoolSpace.ensureLength(t.file, end, h.fileLength(), t.maxPoolBytes, "a new top level of 2^" + newLog2 + " buckets");
        if (oldFileSize > offset) {
            // Part of the range held bytes of an earlier growth that was never committed: zero it.
            t.file.zeroRange(offset, Math.min(oldFileSize, end) - offset);
        }
        MemorySegment pool = t.file.segment();
        ExtentTag.write(pool, offset, bytes, h.poolId());
        long[] levels = h.levelOffsets();
        ExtentTag.LevelStamp top = ExtentTag.levelStamp(pool, levels[levels.length - 1]);
        // The next serial; a pool made before stamps gets one past any its levels can have had.
        long serial = top != null ? top.serial() + 1 : h.resizes() + levels.length + PoolHeader.MAX_EXTRA_LEVELS + 1;
        ExtentTag.stampLevel(pool, offset, serial, 0);
        t.persist(pool, ExtentTag.tagOffset(offset), bytes + ExtentTag.BYTES);
        t.hook.reached(CrashPoint.RESIZE_LEVEL_ALLOCATED);
        t.headers.commit(h.withTopLevelAdded(offset, end));
        t.refreshLayout();
    }

    /**
     * Empties bottom levels into the levels above them until the table has the geometry's number
     * of levels again, committing the smaller level table after each and giving the emptied level's
     * space to the value heap. Runs with operations drained (or during recovery). Returns the
     * number of items moved. Safe to repeat after a crash at any point: an item already copied up is
     * found there and its bottom copy is simply cleared.
     *
     * <p>The paper says rehashing cannot fail. It can: an item's candidate buckets above the bottom
     * level may all be full (likeliest with one level and small buckets, where the new level is the
     * only one above). Then the passes add another top level ({@link #addTopLevel()}) and go on; the
     * extra bottom level is emptied next.
     */
    long finishResize() {
        long moved = 0;
        while (table.layout().levelCount() > table.geometry.levels()) {
            long m = table.passes.emptyBottomLevel(table);
            moved += commitBottomDropped(m);
        }
        return moved;
    }

    /** Resize step 4: commits the level table without the (now empty) bottom level, whose space joins the heap. */
    private long commitBottomDropped(long moved) {
        Table t = table;
        t.hook.reached(CrashPoint.RESIZE_REHASHED);
        TableLayout layout = t.layout();
        int bottomDepth = layout.levelCount() - 1;
        long bottom = layout.levelOffset(bottomDepth);
        long buckets = layout.bucketsAtDepth(bottomDepth);
        HeapChunk reclaimed = new HeapChunk(bottom, buckets * t.geometry.bucketSize());
        PoolHeader h = t.headers.current();
        if (h.heapChunks().size() >= h.maxHeapChunks()) {
            throw new PoolFullException("pool " + t.file.path() + ": the value heap has " + h.maxHeapChunks()
                    + " chunks, the most the header holds");
        }
        t.headers.commit(h.withBottomLevelDropped(reclaimed));
        // Only now, with no header copy naming it as a level: an older header that does is refused (issue 52).
        MemorySegment pool = t.file.segment();
        ExtentTag.LevelStamp was = ExtentTag.levelStamp(pool, bottom);
        ExtentTag.stampLevel(pool, bottom, was == null ? 0 : was.serial(), h.resizes() + 1);
        t.file.persister().persist(pool, ExtentTag.tagOffset(bottom), ExtentTag.BYTES);
        t.refreshLayout();
        t.blocks.addRegion(reclaimed.offset(), reclaimed.length());
        t.hook.reached(CrashPoint.RESIZE_COMMITTED);
        return moved;
    }

    /**
     * Persists many scattered slots with as few persist calls as possible: sorted, and merged where
     * they share a page (one msync per run of pages instead of one per slot).
     */
    void persistSlots(MemorySegment pool, long[] offsets, int count, int length) {
        if (count == 0) {
            return;
        }
        Arrays.sort(offsets, 0, count);
        long runStart = offsets[0];
        long runEnd = offsets[0] + length;
        for (int i = 1; i < count; i++) {
            long o = offsets[i];
            if (o <= runEnd + PoolSpace.EXTENT_ALIGNMENT) {
                runEnd = Math.max(runEnd, o + length);
            } else {
                table.persist(pool, runStart, runEnd - runStart);
                runStart = o;
                runEnd = o + length;
            }
        }
        table.persist(pool, runStart, runEnd - runStart);
    }
}
