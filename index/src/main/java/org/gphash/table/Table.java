package org.gphash.table;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

import org.gphash.Durability;
import org.gphash.Geometry;
import org.gphash.format.HeaderStore;
import org.gphash.format.ItemChecksum;
import org.gphash.format.MetaFormat;
import org.gphash.format.PoolHeader;
import org.gphash.format.ValueFormat;
import org.gphash.persistence.PoolFile;
import org.gphash.spi.CrashHook;
import org.gphash.spi.CrashPoint;

/**
 * The pool's table as every engine shares it: the mapped file, the committed header, the level
 * layout, the value heap's free space, the epoch gate that drains operations, the item count and
 * the durability rule. What works on it, each in its own class: the CPU engine's single-key
 * operations ({@code CpuTable}), resizing ({@link Resizer}), heap growth ({@link HeapGrower}),
 * recovery ({@link Recovery}), and the whole-table passes of resize and recovery ({@link
 * TablePasses}: Java loops for the CPU engine, kernels for the GPU engine).
 */
public final class Table {

    public final PoolFile file;
    public final Geometry geometry;
    public final HeaderStore headers;
    /**
     * Format 2's heap, for what only its bitmap offers: the GPU's copy and imports' takes by whole
     * words; null in a format 3 pool (the GPU engine refuses it).
     */
    public final ValueHeap heap;
    /**
     * The heap as operations, recovery's rebuild, growth and resizing use it (format 2: {@link #heap}
     * itself; issue 53's format 3 its own, {@link OneClassHeap}).
     */
    public final PoolHeap blocks;
    /** How this pool's slot meta words name value blocks, by its format. */
    public final MetaFormat meta;
    /** How this pool's values lie in their blocks, by its format. */
    public final ValueFormat values;
    /** The class of a value of the pool's value size: what batches, imports and format 2 take (format 2: -1, one block size). */
    public final int fullClass;
    public final EpochGate gate;
    public final CrashHook hook;
    final long maxPoolBytes;
    public final LongAdder size = new LongAdder();
    /** How whole-table passes run: here, or on the GPU. */
    final TablePasses passes;
    /** ON_CLOSE_OR_SYNC: operations persist nothing ({@link #sync} and close do). */
    public final boolean persistOnSyncOnly;
    /** Operations of batches in their phases now (they may leave INSERT slots at a crash). */
    public final AtomicLong phasedOpsInFlight = new AtomicLong();
    public final Resizer resizer;
    public final HeapGrower grower;
    private final long[] seeds;
    public volatile TableLayout layout;

    Table(PoolFile file, HeaderStore headers, CrashHook hook, long maxPoolBytes, TablePasses passes,
          Durability durability) {
        this.file = file;
        this.headers = headers;
        this.hook = hook;
        this.passes = passes;
        this.persistOnSyncOnly = durability == Durability.ON_CLOSE_OR_SYNC;
        PoolHeader h = headers.current();
        this.geometry = h.geometry();
        this.meta = MetaFormat.of(h.formatVersion());
        this.maxPoolBytes = Math.min(maxPoolBytes, meta.maxOffset());  // growth stops where a word can no longer name a block
        this.values = ValueFormat.of(h.formatVersion(), geometry.valueSize(), geometry.itemChecksums());
        this.fullClass = values.classOf(geometry.valueSize());
        this.seeds = h.seeds();
        this.blocks = PoolHeap.of(h, file.path());
        this.heap = blocks instanceof ValueHeap v ? v : null;
        this.gate = new EpochGate(this::reclaim, headers::admitOpsInFlight);
        this.layout = TableLayout.of(h);
        this.revocations = geometry.itemChecksums() && !persistOnSyncOnly ? new ItemChecksum(geometry, h.formatVersion()) : null;
        this.resizer = new Resizer(this);
        this.grower = new HeapGrower(this);
    }

    /**
     * The regions of a cleanly closed pool's table that no operation has reached since open, to be
     * checked against the close record's CRCs on first touch; null once all are (or when open scanned).
     */
    volatile RegionCheck regions;

    public Probe newProbe() {
        return new Probe(geometry, seeds, this);
    }

    /**
     * Checks every region not checked yet (whole-table work reads them all: resize, cursors,
     * verification, an engine that mirrors the table).
     *
     * @throws org.gphash.error.PoolFormatException naming a region that changed after the clean close
     */
    void checkAllRegions() {
        RegionCheck r = regions;
        if (r != null) {
            r.checkAll();
        }
    }

    public TableLayout layout() {
        return layout;
    }

    /** Re-reads the layout from the header just committed. */
    void refreshLayout() {
        layout = TableLayout.of(headers.current());
    }

    private void reclaim(long[] valueOffsets, int from, int to) {
        for (int i = from; i < to; i++) {
            hook.reached(CrashPoint.VALUE_RECLAIMED);
            revokeChecksum(valueOffsets[i]);
        }
        blocks.freeAll(valueOffsets, from, to);
    }

    /**
     * With item checksums, a block that an operation unlinked stops vouching for its value before it
     * is freed (a damaged slot that points at it then fails its checksum). Not under
     * ON_CLOSE_OR_SYNC: there the unlinking meta word may not be durable yet, and a crash that brings
     * the old item back must find its checksum intact.
     */
    public void revokeChecksum(long valueOffset) {
        if (revocations != null && blocks.isBlock(valueOffset, fullClass)) {
            revocations.revoke(file.segment(), valueOffset);
        }
    }

    /** Revokes freed blocks' checksums (null: no item checksums, or ON_CLOSE_OR_SYNC). */
    private final ItemChecksum revocations;

    public void persist(MemorySegment pool, long offset, long length) {
        file.persister().persist(pool, offset, length);
    }

    /** Every acknowledged operation durable: operations drained, the committed pool persisted. */
    void sync() {
        gate.runExclusive(() -> {
            headers.checkOnFile();
            persistEverything();
        });
    }

    /** With operations drained: one persist of the whole committed pool. */
    void persistEverything() {
        persist(file.segment(), 0, Math.min(file.mappedSize(), headers.current().fileLength()));
    }

    /** Runs {@code action} with all operations drained (close, statistics scans). */
    void exclusive(Runnable action) {
        gate.runExclusive(action);
    }
}
