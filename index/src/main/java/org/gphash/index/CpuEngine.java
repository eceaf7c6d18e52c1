package org.gphash.index;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;

import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.Durability;
import org.gphash.GPHashConfig;
import org.gphash.Geometry;
import org.gphash.IndexStats;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.PoolFullException;
import org.gphash.RecoveryReport;
import org.gphash.format.PoolHeader;
import org.gphash.spi.Engine;
import org.gphash.spi.ScanState;
import org.gphash.table.EntryScan;
import org.gphash.table.OpStatus;
import org.gphash.table.PoolTable;
import org.gphash.table.VerifyReport;

/**
 * The CPU engine: creates and opens pools, runs recovery, and executes operations with
 * {@link CpuTable}. The reference implementation the GPU engine is checked against.
 */
public final class CpuEngine implements Engine {

    private final PoolTable pool;
    private final CpuTable table;
    private final Durability durability;
    private final ThreadLocal<PhasedBatch> phased;
    private volatile boolean closed;

    private CpuEngine(PoolTable pool, Durability durability) {
        this.pool = pool;
        this.table = new CpuTable(pool.reader(), true);
        this.durability = durability;
        this.phased = ThreadLocal.withInitial(() -> new PhasedBatch(table));
    }

    /** Creates a new pool sized for {@code config.initialCapacity()} items. */
    public static CpuEngine create(GPHashConfig config) {
        return new CpuEngine(PoolTable.create(config, null), config.durability());
    }

    /**
     * Opens an existing pool: validates the header and the requested geometry without writing,
     * then runs recovery and marks the pool in use (not cleanly shut down) until {@link #close()}.
     */
    public static CpuEngine open(GPHashConfig config) {
        return new CpuEngine(PoolTable.open(config, null), config.durability());
    }

    /**
     * An engine over a pool another engine's open made ready, running on it as over a pool of its own
     * (the GPU backend serves calls with it while its GPU starts); closing it closes the pool. Its
     * resizes run the pool's table passes, the opener's kernels where it gave some.
     */
    public static CpuEngine over(PoolTable pool, Durability durability) {
        return new CpuEngine(pool, durability);
    }

    /** The table, for tests in this package that need to reach below the API. */
    CpuTable table() {
        return table;
    }

    @Override
    public Geometry geometry() {
        return table.table.geometry;
    }

    @Override
    public Outcome get(MemorySegment key, MemorySegment valueOut) {
        try {
            return Outcome.ofCode(table.get(key, 0, valueOut, 0));
        } catch (InternalError e) {
            throw pool.mappingFault(e);
        }
    }

    /** Format 3's values have their own lengths: {@link #read} gives each one's. */
    @Override
    public boolean valueLengths() {
        return table.table.values.variableLengths();
    }

    @Override
    public int read(MemorySegment key, MemorySegment valueOut) {
        try {
            return table.get(key, 0, valueOut, 0) == OpStatus.FOUND ? table.lastReadLength() : -1;
        } catch (InternalError e) {
            throw pool.mappingFault(e);
        }
    }

    @Override
    public Outcome put(MemorySegment key, MemorySegment value) {
        try {
            return Outcome.ofCode(table.upsert(key, 0, value, 0, (int) value.byteSize()));
        } catch (InternalError e) {
            throw pool.mappingFault(e);
        }
    }

    @Override
    public Outcome insert(MemorySegment key, MemorySegment value) {
        try {
            return Outcome.ofCode(table.insert(key, 0, value, 0, (int) value.byteSize()));
        } catch (InternalError e) {
            throw pool.mappingFault(e);
        }
    }

    @Override
    public Outcome update(MemorySegment key, MemorySegment value) {
        try {
            return Outcome.ofCode(table.update(key, 0, value, 0, (int) value.byteSize()));
        } catch (InternalError e) {
            throw pool.mappingFault(e);
        }
    }

    @Override
    public Outcome delete(MemorySegment key) {
        try {
            return Outcome.ofCode(table.delete(key, 0));
        } catch (InternalError e) {
            throw pool.mappingFault(e);
        }
    }

    /** Gets are lock-free and run beside anything: a coalescer in front runs them at once. */
    @Override
    public Outcome getAlongside(MemorySegment key, MemorySegment valueOut) {
        return get(key, valueOut);
    }

    @Override
    public Outcome compareAndSet(MemorySegment key, MemorySegment expected, MemorySegment value) {
        try {
            return Outcome.ofCode(table.compareAndSet(key, 0, expected, 0, (int) expected.byteSize(), value, 0,
                    (int) value.byteSize()));
        } catch (InternalError e) {
            throw pool.mappingFault(e);
        }
    }

    @Override
    public Outcome compareAndDelete(MemorySegment key, MemorySegment expected) {
        try {
            return Outcome.ofCode(table.compareAndDelete(key, 0, expected, 0, (int) expected.byteSize()));
        } catch (InternalError e) {
            throw pool.mappingFault(e);
        }
    }

    @Override
    public void execute(Batch batch, BatchResult result) {
        result.reset(batch);
        MemorySegment keys = batch.keys();
        MemorySegment values = batch.values();
        MemorySegment codes = result.outcomeCodes();
        MemorySegment kinds = batch.kinds();
        // Read only by conditional operations; a batch without one has no such column to make.
        MemorySegment expected = batch.hasConditionalOperations() ? batch.expectedValues() : null;
        long k = batch.keySize();
        long v = batch.valueSize();
        int i = 0;
        PhasedBatch phases = durability == Durability.PER_BATCH ? phased.get() : null;
        try {
            if (phases != null) {
                phases.run(batch, result, null);
            } else {
                for (; i < batch.size(); i++) {
                    if ((i & (PhasedBatch.TOUCH_AHEAD - 1)) == 0) {
                        table.touch(keys, i, Math.min(batch.size(), i + PhasedBatch.TOUCH_AHEAD), k);
                    }
                    runOne(batch, kinds, keys, values, expected, codes, i, k, v, result);
                }
            }
        } catch (InternalError e) {
            throw pool.mappingFault(e);
        } catch (PoolFullException e) {
            if (phases != null) {
                i = phases.next();
            }
            // Operations before i ran; i and those after it did not (reset left them NOT_APPLIED).
            throw new PoolFullException(e.getMessage() + "; the batch stopped at operation " + i + " of " + batch.size()
                    + ": the operations before it were applied (their outcomes are in the result), it and the rest were "
                    + "not (NOT_APPLIED)", result, e);
        }
    }

    private void runOne(Batch batch, MemorySegment kinds, MemorySegment keys, MemorySegment values, MemorySegment expected,
                        MemorySegment codes, int i, long k, long v, BatchResult result) {
        OpKind kind = OpKind.ofOrdinal(kinds.get(ValueLayout.JAVA_BYTE, i));
        boolean readsOut = kind == OpKind.GET || kind == OpKind.READ_MODIFY_WRITE;
        boolean packedOut = result.valuesPacked();
        // A value read goes to its place of the value size, or, in packed results, after those read so far.
        long oo = readsOut && packedOut ? result.reserveValue((int) v) : i * v;
        MemorySegment out = result.valueBlock();
        boolean conditional = kind.isConditional();
        int code = table.run(kind, keys, i * k, values, batch.valueOffset(i), batch.valueLength(i),
                readsOut ? out : expected, readsOut ? oo : conditional ? batch.expectedOffset(i) : 0,
                conditional ? batch.expectedLength(i) : (int) v);
        if (code == OpStatus.FOUND || code == OpStatus.REPLACED) {
            PhasedBatch.keepRead(result, packedOut, out, i, v, table.lastReadLength());
        }
        codes.set(ValueLayout.JAVA_BYTE, i, (byte) code);
    }

    @Override
    public ScanState startScan() {
        return new EntryScan.State();
    }

    @Override
    public void readEntries(ScanState state, org.gphash.EntryChunk chunk) {
        pool.readEntries(EntryScan.State.of(state), chunk);
    }

    @Override
    public void snapshot(Path target) {
        pool.snapshot(target);
    }

    @Override
    public IndexStats stats() {
        return pool.stats(Backend.CPU);
    }

    @Override
    public long poolIdentity() {
        return pool.poolIdentity();
    }

    @Override
    public void commitShardMembership(long indexId, long seed, int shard, int shards, long epoch) {
        pool.commitShardMembership(new PoolHeader.ShardMembership(indexId, seed, shard, shards, epoch));
    }

    @Override
    public void sync() {
        pool.sync();
    }

    /** {@return the heap bytes the values in use take now} ({@link PoolTable#valueBytesHeld}) */
    public long valueBytesHeld() {
        return pool.valueBytesHeld();
    }

    /** Scans the whole pool with operations drained and reports what is inconsistent; writes nothing. */
    public VerifyReport verify() {
        return pool.verify();
    }

    @Override
    public RecoveryReport lastRecovery() {
        return pool.recovery();
    }

    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            pool.close();
        }
    }

    @Override
    public synchronized void abandon() {
        if (!closed) {
            closed = true;
            pool.abandon();
        }
    }
}
