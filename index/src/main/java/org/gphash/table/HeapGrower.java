package org.gphash.table;

import java.lang.foreign.MemorySegment;
import java.util.Locale;
import java.util.concurrent.atomic.LongAdder;

import org.gphash.PoolFullException;
import org.gphash.format.ExtentTag;
import org.gphash.format.HeapChunk;
import org.gphash.format.PoolHeader;
import org.gphash.spi.CrashPoint;

/**
 * Value heap growth, the same for both engines: a new chunk at the end of the pool, tagged and
 * persisted, then committed in the header, then handed to the free-space bitmap. A crash before the
 * commit leaves trailing bytes that the next open ignores.
 */
public final class HeapGrower {

    private final Table table;
    private final LongAdder growths = new LongAdder();

    HeapGrower(Table table) {
        this.table = table;
    }

    /**
     * Adds a heap chunk, unless another thread already did or reclaiming retired blocks (which
     * draining operations allows) freed more than {@code keep} blocks.
     */
    public void growHeap(long observedTotalBlocks, int valueClass, long keep) {
        Table t = table;
        boolean debug = PoolLog.LOG.isLoggable(System.Logger.Level.DEBUG);
        long asked = debug ? System.nanoTime() : 0;
        long pending = debug ? t.gate.pendingReclamation() : 0;  // a pass over every thread's limbo: for the log only
        // Another thread's drain or growth since this one found the heap short may have made the room:
        // asked again when its turn comes, before it drains anything.
        t.gate.runExclusiveIf(() -> stillShort(observedTotalBlocks, valueClass, keep), () -> {
            boolean grown = stillShort(observedTotalBlocks, valueClass, keep);
            if (grown) {
                addHeapChunk(0);
            }
            if (debug) {
                // Every drain for a growth, with or without a chunk: each keeps every operation out.
                PoolLog.LOG.log(System.Logger.Level.DEBUG, "gphash: value heap growth asked for (class {0}): {1}; about {2} "
                        + "retired blocks were pending, {3} free now; drained and done in {4} ms", valueClass,
                        grown ? "a chunk added" : "none needed", pending, t.blocks.freeBlocks(),
                        String.format(Locale.ROOT, "%.2f", (System.nanoTime() - asked) / 1e6));
            }
        });
    }

    /** Whether a take of {@code valueClass} leaving {@code keep} still fails and no chunk came since {@code observedTotalBlocks}. */
    private boolean stillShort(long observedTotalBlocks, int valueClass, long keep) {
        return table.blocks.totalBlocks() == observedTotalBlocks && !table.blocks.canTake(valueClass, keep);
    }

    /**
     * Grows the heap until at least {@code blocks} blocks are free (an engine that allocates a whole
     * batch's blocks at once sizes the heap first). Operations must be drained or exclusive.
     */
    void ensureFreeBlocks(long blocks) {
        table.gate.runExclusive(() -> {
            while (table.blocks.freeBlocks() < blocks) {
                addHeapChunk(blocks - table.blocks.freeBlocks());
            }
        });
    }

    /**
     * Where the file would end after the next growth by the usual amount ({@link #addHeapChunk}
     * without a minimum), as of now: what {@link #prepareAhead()} extends the file to.
     */
    long nextGrowthEnd() {
        return PoolSpace.nextExtent(table.headers.current()) + chunkBytes(0);
    }

    /**
     * Extends the file to {@link #nextGrowthEnd()} where that moves nothing (the file grows in place),
     * so that the growth itself later only tags, commits and hands the chunk to the bitmap. Runs
     * beside operations, on any thread. False where nothing was done: the file would be remapped, or
     * the growth would pass the pool's maximum size (the growth itself then reports that).
     */
    boolean prepareAhead() {
        long end = nextGrowthEnd();
        return end <= table.maxPoolBytes && table.file.growAhead(end);
    }

    private long chunkBytes(long minBlocks) {
        return table.blocks.regionBytes(Math.max(table.blocks.totalBytes() / 4, 1L << 20), minBlocks);
    }

    /**
     * Adds a heap chunk of a quarter of the heap so far, and at least {@code minBlocks} blocks and 1 MiB:
     * the heap grows with the data, geometrically enough that growths stay few (the header holds 96
     * chunks) and finely enough that the pool stays within about 1.25x of what it holds.
     */
    private void addHeapChunk(long minBlocks) {
        Table t = table;
        PoolHeap heap = t.blocks;
        PoolHeader h = t.headers.current();
        if (h.heapChunks().size() >= h.maxHeapChunks()) {
            throw new PoolFullException("pool " + t.file.path() + ": the value heap has " + h.maxHeapChunks()
                    + " chunks, the most the header holds");
        }
        long started = System.nanoTime();
        long bytes = chunkBytes(minBlocks);
        long offset = PoolSpace.nextExtent(h);
        long end = offset + bytes;
        PoolSpace.ensureLength(t.file, end, h.fileLength(), t.maxPoolBytes, "value heap growth by " + bytes + " bytes");
        MemorySegment pool = t.file.segment();
        ExtentTag.write(pool, offset, bytes, h.poolId());
        t.persist(pool, ExtentTag.tagOffset(offset), ExtentTag.BYTES);
        t.hook.reached(CrashPoint.HEAP_GROWN);
        HeapChunk chunk = new HeapChunk(offset, bytes);
        t.headers.commit(h.withHeapChunk(chunk, end));
        heap.addRegion(offset, bytes);
        growths.increment();
        PoolEvents.heapGrown(t.file.path(), bytes, heap.totalBlocks());
        if (PoolLog.LOG.isLoggable(System.Logger.Level.DEBUG)) {
            PoolLog.LOG.log(System.Logger.Level.DEBUG, "gphash: grew the value heap of {0} by {1} bytes to {2} blocks "
                    + "({3} free) in {5} ms; the file is {4} bytes", t.file.path(), bytes, heap.totalBlocks(),
                    heap.freeBlocks(), end, String.format(Locale.ROOT, "%.2f", (System.nanoTime() - started) / 1e6));
        }
    }

    /** {@return heap chunks added since open} */
    long growths() {
        return growths.sum();
    }
}
