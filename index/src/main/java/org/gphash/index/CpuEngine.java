package org.gphash.index;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.security.SecureRandom;
import java.util.List;

import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.Engine;
import org.gphash.EngineFactory;
import org.gphash.GPHashConfig;
import org.gphash.IndexStats;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.PoolConfigMismatchException;
import org.gphash.PoolFullException;
import org.gphash.RecoveryReport;
import org.gphash.persistence.PoolFile;

/**
 * The CPU engine: creates and opens pools, runs recovery, and executes operations with
 * {@link CpuTable}. The reference implementation the GPU engine is checked against.
 */
public final class CpuEngine implements Engine {

    /** Builds CPU engines; used directly by {@link org.gphash.GPHashIndex}. */
    public static final EngineFactory FACTORY = new EngineFactory() {
        @Override
        public Backend backend() {
            return Backend.CPU;
        }

        @Override
        public Engine create(GPHashConfig config) {
            return CpuEngine.create(config);
        }

        @Override
        public Engine open(GPHashConfig config) {
            return CpuEngine.open(config);
        }
    };

    /** Items per slot a new pool is sized for before its first resize. */
    private static final double CREATE_FILL_TARGET = 0.85;

    private final PoolFile file;
    private final CpuTable table;
    private final RecoveryReport recovery;
    private volatile boolean closed;

    private CpuEngine(PoolFile file, CpuTable table, RecoveryReport recovery) {
        this.file = file;
        this.table = table;
        this.recovery = recovery;
    }

    /** Creates a new pool sized for {@code config.initialCapacity()} items. */
    public static CpuEngine create(GPHashConfig config) {
        Geometry g = config.geometryForCreate();
        int topLog2 = g.minTopLog2();
        while (g.totalSlots(topLog2) * CREATE_FILL_TARGET < config.initialCapacity()) {
            topLog2++;
        }
        long[] levelOffsets = new long[g.levels()];
        long next = PoolHeader.REGION_BYTES;
        for (int i = 0; i < g.levels(); i++) {
            next = Geometry.alignUp(next, PoolSpace.EXTENT_ALIGNMENT);
            levelOffsets[i] = next;
            next += (1L << (topLog2 - (g.levels() - 1 - i))) * g.bucketSize();
        }
        long heapOffset = Geometry.alignUp(next, PoolSpace.EXTENT_ALIGNMENT);
        // One block per slot: room for every item the table holds before its first resize, plus the
        // spare blocks updates write into before the old ones are reclaimed.
        long heapBytes = Math.max(1L << 16, g.totalSlots(topLog2) * g.valueStride());
        long fileLength = heapOffset + heapBytes;
        if (fileLength > config.maxPoolBytes()) {
            throw new PoolFullException("a pool for " + config.initialCapacity() + " items needs "
                    + fileLength + " bytes, more than maxPoolBytes " + config.maxPoolBytes());
        }
        long[] seeds = seeds(config);
        PoolHeader header = new PoolHeader(0, g, false, seeds, topLog2, levelOffsets, false,
                List.of(new HeapChunk(heapOffset, heapBytes)), 0, fileLength, System.currentTimeMillis());
        PoolFile file = PoolFile.create(config.path(), fileLength, config.jdkPersistence());
        try {
            file.syncAll();
            HeaderStore headers = HeaderStore.initialize(file, header, config.crashHook());
            CpuTable table = new CpuTable(file, headers, config.crashHook(), config.maxPoolBytes());
            RecoveryReport report = Recovery.run(table, true, false);
            return new CpuEngine(file, table, report);
        } catch (RuntimeException | Error e) {
            file.close();
            throw e;
        }
    }

    private static long[] seeds(GPHashConfig config) {
        long[] seeds = new long[Geometry.MAX_HASHES];
        if (config.seed().isPresent()) {
            long s = config.seed().getAsLong();
            for (int i = 0; i < seeds.length; i++) {
                s += 0x9E3779B97F4A7C15L;
                seeds[i] = KeyHasher.avalanche(s);
            }
        } else {
            SecureRandom random = new SecureRandom();
            for (int i = 0; i < seeds.length; i++) {
                seeds[i] = random.nextLong();
            }
        }
        return seeds;
    }

    /**
     * Opens an existing pool: validates the header and the requested geometry without writing,
     * then runs recovery and marks the pool in use (not cleanly shut down) until {@link #close()}.
     */
    public static CpuEngine open(GPHashConfig config) {
        PoolFile file = PoolFile.open(config.path(), config.jdkPersistence());
        try {
            HeaderStore.ReadResult read = HeaderStore.read(file);
            PoolHeader header = read.header();
            List<String> mismatches = config.mismatches(header.geometry());
            if (!mismatches.isEmpty()) {
                throw new PoolConfigMismatchException("pool " + file.path() + " does not match the configuration: "
                        + String.join("; ", mismatches));
            }
            HeaderStore headers = new HeaderStore(file, header, config.crashHook());
            CpuTable table = new CpuTable(file, headers, config.crashHook(), config.maxPoolBytes());
            RecoveryReport report = Recovery.run(table, header.cleanShutdown(), read.copyRepairNeeded());
            headers.commit(headers.current().withCleanShutdown(false));
            return new CpuEngine(file, table, report);
        } catch (RuntimeException | Error e) {
            file.close();
            throw e;
        }
    }

    /** The table, for tests in this package that need to reach below the API. */
    CpuTable table() {
        return table;
    }

    @Override
    public Geometry geometry() {
        return table.geometry;
    }

    @Override
    public Outcome get(MemorySegment key, MemorySegment valueOut) {
        return Outcome.ofCode(table.get(key, 0, valueOut, 0));
    }

    @Override
    public Outcome put(MemorySegment key, MemorySegment value) {
        return Outcome.ofCode(table.upsert(key, 0, value, 0));
    }

    @Override
    public Outcome insert(MemorySegment key, MemorySegment value) {
        return Outcome.ofCode(table.insert(key, 0, value, 0));
    }

    @Override
    public Outcome update(MemorySegment key, MemorySegment value) {
        return Outcome.ofCode(table.update(key, 0, value, 0));
    }

    @Override
    public Outcome delete(MemorySegment key) {
        return Outcome.ofCode(table.delete(key, 0));
    }

    @Override
    public void execute(Batch batch, BatchResult result) {
        MemorySegment keys = batch.keys();
        MemorySegment values = batch.values();
        MemorySegment codes = result.outcomeCodes();
        MemorySegment out = result.values();
        MemorySegment kinds = batch.kinds();
        long k = batch.keySize();
        long v = batch.valueSize();
        for (int i = 0; i < batch.size(); i++) {
            OpKind kind = OpKind.ofOrdinal(kinds.get(ValueLayout.JAVA_BYTE, i));
            long ko = i * k;
            long vo = i * v;
            int code = switch (kind) {
                case GET -> table.get(keys, ko, out, vo);
                case PUT -> table.upsert(keys, ko, values, vo);
                case INSERT -> table.insert(keys, ko, values, vo);
                case UPDATE -> table.update(keys, ko, values, vo);
                case DELETE -> table.delete(keys, ko);
                case READ_MODIFY_WRITE -> table.readModifyWrite(keys, ko, values, vo, out, vo);
            };
            codes.set(ValueLayout.JAVA_BYTE, i, (byte) code);
        }
    }

    @Override
    public IndexStats stats() {
        PoolHeader h = table.headers.current();
        TableLayout t = table.layout();
        long capacity = t.totalBuckets() * table.geometry.slotsPerBucket();
        long size = table.size.sum();
        return new IndexStats(size, capacity, capacity == 0 ? 0 : (double) size / capacity, t.levelCount(), t.topLog2(),
                h.resizes(), table.heapGrowths(), table.heap.totalBlocks(), table.heap.freeBlocks(),
                table.gate.pendingReclamation(), file.fileSize(), file.persister().mode(), Backend.CPU, recovery);
    }

    /** Scans the whole pool with operations drained and reports what is inconsistent; writes nothing. */
    public VerifyReport verify() {
        VerifyReport[] out = new VerifyReport[1];
        table.exclusive(() -> out[0] = PoolVerifier.verify(table));
        return out[0];
    }

    @Override
    public RecoveryReport lastRecovery() {
        return recovery;
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            table.exclusive(() -> table.headers.commit(table.headers.current().withCleanShutdown(true)));
            file.syncAll();
        } finally {
            file.close();
        }
    }

    @Override
    public synchronized void abandon() {
        if (!closed) {
            closed = true;
            file.close();
        }
    }
}
