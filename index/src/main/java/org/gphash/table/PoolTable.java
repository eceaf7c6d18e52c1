package org.gphash.table;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.List;

import org.gphash.Backend;
import org.gphash.BackendUnavailableException;
import org.gphash.GPHashConfig;
import org.gphash.Geometry;
import org.gphash.IndexStats;
import org.gphash.PoolConfigMismatchException;
import org.gphash.PoolFullException;
import org.gphash.RecoveryReport;
import org.gphash.bktcache.BktCacheStats;
import org.gphash.error.PoolIoException;
import org.gphash.format.ExtentTag;
import org.gphash.format.HeaderStore;
import org.gphash.format.HeapChunk;
import org.gphash.format.MetaFormat;
import org.gphash.format.PoolHeader;
import org.gphash.format.ValueClasses;
import org.gphash.persistence.PoolFile;
import org.gphash.spi.CrashHook;
import org.gphash.spi.CrashPoint;

/**
 * One open pool with its table state: the file, the header, the value heap, the layout, and the
 * resize and heap-growth machinery. Both engines are built on it, so they create, open, recover,
 * resize and close pools by the same code; an engine that runs the whole-table passes elsewhere
 * (the GPU) hands in its {@link TableKernels}.
 *
 * <p>Why this class is long: it is the pool's life for both engines (create, open with recovery,
 * resize, grow, verify, snapshot, close), each a short sequence over the parts that do the work
 * ({@code Table}, {@code Recovery}, {@code Resizer}, {@code HeapGrower}, {@code PoolVerifier}).
 */
public final class PoolTable {

    /** The largest top level a header accepts. */
    static final int MAX_TOP_LOG2 = 40;

    /** Items per slot a new pool is sized for before its first resize. */
    private static final double CREATE_FILL_TARGET = 0.85;

    private final PoolFile file;
    private final Table table;
    private final RecoveryReport recovery;
    /** The table's read path, which the CPU engine and the GPU engine's host reads share. */
    private final TableReader reader;

    private PoolTable(PoolFile file, Table table, RecoveryReport recovery) {
        this.file = file;
        this.table = table;
        this.recovery = recovery;
        this.reader = new TableReader(table);
    }

    /** Creates a new pool sized for {@code config.initialCapacity()} items. */
    public static PoolTable create(GPHashConfig config, TableKernels kernels) {
        Geometry g = config.geometryForCreate();
        int format = config.poolFormat() == 0 ? PoolHeader.FORMAT_VERSION : config.poolFormat();
        if (kernels != null && !kernels.supportsFormat(format)) {
            throw new BackendUnavailableException("pool format " + format + " runs on the CPU backend only "
                    + "for now (issue 53): create " + config.path() + " with backend(Backend.CPU), or in format "
                    + PoolHeader.FORMAT_VERSION + "; nothing was created");
        }
        if (g.hashes() * g.slotsPerBucket() < GPHashConfig.FEW_CANDIDATES) {
            PoolLog.LOG.log(System.Logger.Level.WARNING, "gphash: pool " + config.path() + " gives each key only "
                    + g.hashes() * g.slotsPerBucket() + " candidate slots per level (hashes " + g.hashes() + " x slotsPerBucket "
                    + g.slotsPerBucket() + "): such a table resizes long before it fills, and its file grows far beyond "
                    + "its items; the default is 2 hashes x 8 slots");
        }
        long capacity = config.initialCapacity();
        int topLog2 = g.minTopLog2();
        while (g.totalSlots(topLog2) * CREATE_FILL_TARGET < capacity) {
            if (topLog2 >= MAX_TOP_LOG2) {
                throw new IllegalArgumentException("initialCapacity " + capacity + " is more than a pool can hold (about "
                        + (long) (g.totalSlots(MAX_TOP_LOG2) * CREATE_FILL_TARGET) + " items of this geometry); "
                        + "nothing was created");
            }
            topLog2++;
        }
        long[] levelOffsets = new long[g.levels()];
        long fileLength;
        long heapOffset;
        long heapBytes;
        try {
            long next = PoolHeader.REGION_BYTES;
            for (int i = 0; i < g.levels(); i++) {
                next = PoolSpace.extentAfter(next);
                levelOffsets[i] = next;
                next = Math.addExact(next, Math.multiplyExact(1L << (topLog2 - (g.levels() - 1 - i)), g.bucketSize()));
            }
            heapOffset = PoolSpace.extentAfter(next);
            // The heap holds the items asked for (initialCapacity) from the start, plus an eighth for the
            // new values of updates whose old ones are not yet reclaimed and the update reserve, at least
            // 64 KiB; it grows by a quarter as more arrive (HeapGrower). Sized from the capacity, not the
            // table's slots, so the pool stays near the data it was made for; the file is sparse on
            // tmpfs and ext4, so blocks not yet written take no memory or disk. Sizing it smaller (an
            // eighth of the capacity, before) made a load of initialCapacity items grow it ten times,
            // each growth an exclusive phase that waits for every thread's batch in flight (issue 25).
            // Format 3's values have any length up to the value size: the heap starts as if each took at
            // most FORMAT_3_INITIAL_VALUE_BYTES (a pool of 4 KiB values of 130 bytes on average began at
            // 2.3 GB for 53 MB of values), and grows by a quarter where they are longer.
            long blocks = capacity + capacity / 8 + ValueHeap.UPDATE_RESERVE + 1;
            heapBytes = format == PoolHeader.FORMAT_3
                    ? new SegmentHeap(Math.min(g.valueSize(), FORMAT_3_INITIAL_VALUE_BYTES), !g.itemChecksums()).regionBytes(1L << 16, blocks)
                    : Math.max(1L << 16, Math.multiplyExact(blocks, g.valueStride()));
            fileLength = Math.addExact(heapOffset, heapBytes);
        } catch (ArithmeticException e) {
            fileLength = Long.MAX_VALUE;
            heapOffset = 0;
            heapBytes = 0;
        }
        long maxPoolBytes = MetaFormat.of(format).maxOffset();
        if (fileLength > maxPoolBytes) {
            throw new IllegalArgumentException("initialCapacity " + capacity + " needs a pool of "
                    + (fileLength == Long.MAX_VALUE ? "more than 2^63" : Long.toString(fileLength)) + " bytes, more than the "
                    + maxPoolBytes + " a value offset can address; nothing was created");
        }
        if (fileLength > config.maxPoolBytes()) {
            throw new PoolFullException("a pool for " + capacity + " items needs " + fileLength
                    + " bytes, more than maxPoolBytes " + config.maxPoolBytes() + "; nothing was created");
        }
        long[] seeds = seeds(config);
        PoolHeader header = new PoolHeader(0, g, false, seeds, topLog2, levelOffsets, false,
                List.of(new HeapChunk(heapOffset, heapBytes)), 0, fileLength, System.currentTimeMillis(), newPoolId(), 0,
                PoolHeader.NO_CLOSE_RECORD, null, format);
        PoolFile file = PoolFile.create(config.path(), fileLength, config.jdkPersistence());
        try {
            MemorySegment pool = file.segment();
            for (int i = 0; i < levelOffsets.length; i++) {
                ExtentTag.write(pool, levelOffsets[i], header.bucketsInLevel(i) * g.bucketSize(), header.poolId());
                ExtentTag.stampLevel(pool, levelOffsets[i], i + 1, 0);  // serials bottom first, from 1
            }
            ExtentTag.write(pool, heapOffset, heapBytes, header.poolId());
            file.syncAll();
            TablePasses passes = TablePasses.of(kernels);
            passes.attach(file, g, seeds, format);
            // Kernels still starting finish here; a refusal discards the file made so far (below).
            passes.beforeWrites();
            HeaderStore headers = HeaderStore.initialize(file, header, firstCopyWritten(config));
            Table table = new Table(file, headers, config.crashHook(), config.maxPoolBytes(), passes,
                    passes.durability(config.durability()));
            RecoveryReport report = Recovery.fresh(table);
            file.publish();
            PoolLog.opened("created", file.path(), report, report.duration().toNanos());
            PoolEvents.opened(file.path(), true, report);
            return new PoolTable(file, table, report);
        } catch (RuntimeException | Error e) {
            file.discardCreated();
            throw e;
        }
    }

    /** The crash point of a header commit's first copy, for the configuration's crash hook. */
    private static Runnable firstCopyWritten(GPHashConfig config) {
        CrashHook hook = config.crashHook();
        return () -> hook.reached(CrashPoint.HEADER_FIRST_COPY_WRITTEN);
    }

    /** Makes every acknowledged operation durable (operations wait meanwhile). */
    public void sync() {
        table.sync();
    }

    /** A random, non-zero pool identity (not derived from the seed: two pools made alike still differ). */
    private static long newPoolId() {
        SecureRandom random = new SecureRandom();
        long id;
        do {
            id = random.nextLong();
        } while (id == 0);
        return id;
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
    public static PoolTable open(GPHashConfig config, TableKernels kernels) {
        PoolFile file = PoolFile.open(config.path(), config.jdkPersistence(), config.followSymlinks());
        try {
            HeaderStore.ReadResult read = HeaderChoice.confirm(file, HeaderStore.read(file));
            PoolHeader header = read.header();
            List<String> mismatches = config.mismatches(header.geometry(), header.formatVersion());
            if (!mismatches.isEmpty()) {
                throw new PoolConfigMismatchException("pool " + file.path() + " does not match the configuration: "
                        + String.join("; ", mismatches));
            }
            TablePasses passes = TablePasses.of(kernels);
            if (!passes.supportsFormat(header.formatVersion())) {
                throw new BackendUnavailableException("pool " + file.path() + " is in format "
                        + header.formatVersion() + ", which this engine does not run yet (issue 53); open it with the "
                        + "CPU backend (nothing was changed)");
            }
            if (header.geometry().itemChecksums() && !passes.supportsItemChecksums()) {
                throw new BackendUnavailableException("pool " + file.path() + " keeps item checksums, which "
                        + "this engine does not check; open it with the CPU backend (nothing was changed)");
            }
            passes.attach(file, header.geometry(), header.seeds(), header.formatVersion());
            HeaderStore headers = new HeaderStore(file, header, firstCopyWritten(config));
            Table table = new Table(file, headers, config.crashHook(), config.maxPoolBytes(), passes,
                    passes.durability(config.durability()));
            RecoveryReport report = config.verifyOnOpen() || config.repairBeyondCrash() ? null
                    : Recovery.fromCloseRecord(table, read.copyRepairNeeded());
            if (report != null && !passes.checksRegionsOnTouch()) {
                table.checkAllRegions();  // the engine's kernels read the table without the CPU's probe
            }
            passes.beforeWrites();
            if (report == null) {
                report = Recovery.run(table, header.cleanShutdown(), read.copyRepairNeeded(), config.repairBeyondCrash());
            }
            CloseRecords.markInUse(table, report.fromCloseRecord());
            PoolLog.opened("opened", file.path(), report, report.duration().toNanos());
            PoolEvents.opened(file.path(), false, report);
            return new PoolTable(file, table, report);
        } catch (RuntimeException | Error e) {
            file.close();
            throw e;
        }
    }

    /**
     * Records, before they start, that up to {@code ops} operations may be in flight at once (an
     * engine that runs a batch's operations concurrently calls this with the batch's size). Recovery
     * after a crash accepts as many half-done operations as this admitted and refuses more.
     */
    public void admitOpsInFlight(long ops) {
        table.headers.admitOpsInFlight(ops);
    }

    /** {@return the table's read path} */
    public TableReader reader() {
        return reader;
    }

    public PoolFile file() {
        return file;
    }

    public MemorySegment mapping() {
        return file.segment();
    }

    public Geometry geometry() {
        return table.geometry;
    }

    public TableLayout layout() {
        return table.layout();
    }

    /**
     * Commits {@code m} as the pool's shard membership ({@link PoolHeader.ShardMembership}), with
     * operations drained.
     *
     * @throws org.gphash.PoolFullException when the heap has more chunks than a shard's header can name
     */
    public void commitShardMembership(PoolHeader.ShardMembership m) {
        table.exclusive(() -> {
            PoolHeader h = table.headers.current();
            if (h.heapChunks().size() > PoolHeader.MAX_SHARD_HEAP_CHUNKS) {
                throw new org.gphash.PoolFullException("pool " + file.path() + " has " + h.heapChunks().size()
                        + " heap chunks; a shard's header names at most " + PoolHeader.MAX_SHARD_HEAP_CHUNKS
                        + " beside its shard membership; nothing was changed");
            }
            if (!m.equals(h.membership())) {
                table.headers.commit(h.withMembership(m));
            }
        });
    }

    /** {@return the pool's identity, from its header (random at create, never 0)} */
    public long poolIdentity() {
        return table.headers.current().poolId();
    }

    /** {@return the pool's format version (2 or 3)} */
    public int formatVersion() {
        return table.headers.current().formatVersion();
    }

    /** The hash seeds (four; hash j uses seed j). */
    public long[] seeds() {
        return table.headers.current().seeds();
    }

    public RecoveryReport recovery() {
        return recovery;
    }

    /**
     * Reserves {@code n} free value blocks into {@code out}, growing the heap as needed (so call it
     * only with operations drained: growth remaps the file).
     */
    public void reserveBlocks(long[] out, int n) {
        int got = 0;
        while (got < n) {
            long[] part = got == 0 ? out : new long[n - got];
            // Format 2 takes whole bitmap words, lowest first (the GPU's pool path asks for thousands).
            int k = table.heap != null ? table.heap.allocateMany(part, n - got) : table.blocks.allocateNear(part, n - got, table.fullClass, 0);
            if (part != out) {
                System.arraycopy(part, 0, out, got, k);
            }
            got += k;
            if (got < n) {
                table.grower.growHeap(table.blocks.totalBlocks(), table.fullClass, 0);
            }
        }
    }

    /**
     * The value length a new format 3 pool's first heap region is sized for, per item of its initial
     * capacity, where the value size is longer: values of any length up to the value size are mostly
     * shorter, and the heap grows where they are not.
     */
    static final int FORMAT_3_INITIAL_VALUE_BYTES = 248;

    public long freeBlocks() {
        return table.blocks.freeBlocks();
    }

    public long totalBlocks() {
        return table.blocks.totalBlocks();
    }

    /**
     * {@return the heap bytes the values in use take now}: format 3's segments that classes hold (blocks
     * in use and the room beside them in their segments), format 2's blocks in use. For issue 53's space
     * figure (bench {@code ValueLengthsBench}), not a hot path.
     */
    public long valueBytesHeld() {
        return table.blocks instanceof SegmentHeap s ? s.heldBytes()
                : table.blocks.usedBlocks() * table.geometry.valueStride();
    }

    /**
     * Grows the value heap until {@code blocks} blocks are free. Growth remaps the file: call it only
     * with operations drained.
     */
    public void ensureFreeBlocks(long blocks) {
        table.grower.ensureFreeBlocks(blocks);
    }

    /**
     * Extends the file by what the next heap growth will add, where the file grows in place (a pool on
     * tmpfs), so that the growth itself does not wait for the file system and the mapping listener
     * (the GPU engine registers the new pages with CUDA). Safe beside running operations: nothing
     * moves, and the bytes past the committed pool are ignored by the next open.
     *
     * @return whether the file is now long enough for the next growth
     */
    public boolean prepareHeapGrowth() {
        return table.grower.prepareAhead();
    }

    /**
     * The heap's block numbering (chunks sorted by offset), for an engine that keeps the bitmap
     * elsewhere ({@link PoolHeap#oneSizeLayout}: format 3's free segments go to the pool's full class).
     */
    public TableKernels.HeapLayout heapLayout() {
        return table.blocks.oneSizeLayout();
    }

    /** A copy of the heap's bitmap (1 = in use), numbered as {@link #heapLayout()} says. */
    public long[] heapUsedBits() {
        return table.blocks.oneSizeUsedBits();
    }

    /**
     * Replaces the heap's bitmap with one kept elsewhere while operations ran (the GPU engine's),
     * numbered as {@link #heapLayout()} says; the free count follows. Operations must be drained.
     */
    public void replaceHeapUsedBits(long[] usedBits) {
        table.exclusive(() -> table.blocks.restoreOneSize(usedBits));
    }

    /**
     * {@return format 3's heap as segments, for an engine that keeps it elsewhere while it runs, or null
     * for format 2 (whose form is {@link #heapLayout()})}
     */
    public TableKernels.HeapSegments heapSegments() {
        return table.blocks.segments();
    }

    /**
     * Replaces format 3's heap with the one an engine kept while operations ran, in
     * {@link #heapSegments()}'s form: {@code usedBlocks} blocks marked in {@code unitBits}, each
     * segment's class in {@code classes}. Every mark is checked against its segment's class.
     * Operations must be drained.
     *
     * @throws IllegalStateException naming the first mark that is no block of its segment's class
     */
    public void replaceHeapSegments(long[] unitBits, long usedBlocks, byte[] classes) {
        table.exclusive(() -> table.blocks.restore(unitBits, usedBlocks, classes));
    }

    /**
     * Frees every block that operations on the host retired and reclamation still holds (their
     * readers are gone once operations are drained), so that the heap's bitmap is whole before it
     * is handed to an engine that keeps it elsewhere. Operations must not run meanwhile.
     */
    public void reclaimRetired() {
        table.exclusive(() -> { });
    }

    /**
     * Rebuilds free space from a scan of the table through the kernels (after a pass lost track of
     * blocks it unlinked); the caller has drained all operations.
     */
    public void rebuildFreeSpace() {
        table.checkAllRegions();
        table.exclusive(() -> table.passes.rebuildHeap(table));
    }

    /**
     * Frees a block that an item referred to until an operation unlinked it, once nothing can still
     * read it: the CPU engine's reclamation step, crash point {@code VALUE_RECLAIMED} included.
     */
    public void reclaimBlock(long valueOffset) {
        table.hook.reached(CrashPoint.VALUE_RECLAIMED);
        table.revokeChecksum(valueOffset);
        table.blocks.free(valueOffset);
    }

    /** Frees a block nothing refers to and nothing can still read. */
    public void freeBlock(long valueOffset) {
        table.blocks.free(valueOffset);
    }

    /** Adds {@code delta} to the item count (operations run elsewhere report what they changed). */
    public void addToSize(long delta) {
        table.size.add(delta);
    }

    public long size() {
        return table.size.sum();
    }

    /** Adds a top level and empties the bottom one, unless the layout moved on from {@code observed}. */
    public void resize(TableLayout observed) {
        table.resizer.resize(observed);
    }

    /** A whole-table verification by the CPU, with nothing else running. */
    public VerifyReport verify() {
        table.checkAllRegions();
        VerifyReport[] out = new VerifyReport[1];
        table.exclusive(() -> out[0] = PoolVerifier.verify(table));
        return out[0];
    }

    public IndexStats stats(Backend backend) {
        PoolHeader h = table.headers.current();
        TableLayout t = table.layout();
        long capacity = t.totalBuckets() * table.geometry.slotsPerBucket();
        long size = table.size.sum();
        return new IndexStats(size, capacity, capacity == 0 ? 0 : (double) size / capacity, t.levelCount(), t.topLog2(),
                h.resizes(), table.grower.growths(), table.blocks.totalBlocks(), table.blocks.freeBlocks(),
                table.gate.pendingReclamation(), file.fileSize(), file.persister().mode(), backend, recovery,
                BktCacheStats.disabled(), "pool");
    }

    /** Marks the pool cleanly shut down, syncs and closes it. */
    public void close() {
        long committed = table.headers.current().fileLength();
        long size = file.fileSize();
        if (size < committed) {
            // Not marked clean: the next open refuses the pool as truncated, which it is.
            file.close();
            throw PoolSpace.truncated(file, size, committed);
        }
        try {
            table.exclusive(() -> {
                // Everything the record describes durable before the commit that makes it trusted
                // (ON_CLOSE_OR_SYNC persisted nothing since the last sync; the other modes, nothing is left).
                table.gate.shutDown(file.path());  // whatever happens next, no operation starts on this pool again
                table.headers.checkOnFile();  // a pool changed behind our back is not marked clean
                table.persistEverything();
                PoolHeader closed = CloseRecords.write(table, table.headers.current());
                table.headers.commit(closed.withCleanShutdown(true));
            });
            file.syncAll();
        } finally {
            file.close();
        }
    }

    /**
     * Appends the next live entries to {@code chunk} (see {@link EntryScan}), inside an epoch so
     * that no value block is reused under the copy. With item checksums, an item that fails its
     * checksum throws {@link org.gphash.ItemChecksumException}.
     */
    public void readEntries(EntryScan.State state, org.gphash.EntryChunk chunk) {
        chunk.clear();
        table.checkAllRegions();
        Probe probe = table.newProbe();
        EpochGate.Participant p = table.gate.enter();
        try {
            EntryScan.fill(file.segment(), table.layout(), table.geometry, table.meta, table.values, probe, state, chunk, false, null,
                    file.path());
        } catch (InternalError e) {
            throw mappingFault(e);
        } finally {
            table.gate.exit(p);
        }
    }

    /**
     * A consistent copy of the pool at {@code target} (which must not exist), made while
     * operations are drained: they wait for the copy, then go on. The copy is fsynced before it
     * gets its name; it opens like the original (recovery runs, as after a crash: nothing to repair).
     */
    public void snapshot(Path target) {
        table.exclusive(() -> file.copyTo(target, table.headers.current().fileLength()));
    }

    /**
     * The engine's error for a fault while reading or writing the pool's mapping (the JVM's
     * {@link InternalError} for a page that is no longer backed by the file).
     */
    public PoolIoException mappingFault(InternalError e) {
        long committed = table.headers.current().fileLength();
        long size = file.fileSize();
        if (size < committed) {
            PoolIoException io = PoolSpace.truncated(file, size, committed);
            io.initCause(e);
            return io;
        }
        return new PoolIoException("pool " + file.path() + ": a read or write of the pool's memory mapping failed ("
                + e.getMessage() + "); the pool must not be used further", e);
    }

    /** Closes the file without marking a clean shutdown (what a crash leaves). */
    public void abandon() {
        table.gate.shutDown(file.path());
        file.close();
    }
}
