package org.gphash.table;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.OptionalLong;
import java.util.function.LongPredicate;

import org.gphash.Geometry;
import org.gphash.error.PoolFormatException;
import org.gphash.error.PoolIoException;
import org.gphash.error.PoolLockedException;
import org.gphash.format.CloseRecord;
import org.gphash.format.HeaderStore;
import org.gphash.format.ItemChecksum;
import org.gphash.format.MetaFormat;
import org.gphash.format.PoolHeader;
import org.gphash.format.SlotMeta;
import org.gphash.format.TableDigest;
import org.gphash.format.ValueFormat;
import org.gphash.persistence.PoolFile;

/**
 * A read-only view of a pool for offline tools (the recovery tool's {@code check}, {@code stats},
 * {@code dump}, {@code snapshot}): the file is opened without write access, mapped read-only and
 * locked against every writer, and the header is validated exactly as the engine's open validates
 * it. Nothing is ever written: a store into {@link #segment()} would throw.
 *
 * <p>It exposes the engine's own hashing and candidate order, so a tool judges every slot by the
 * reference rules of docs/DESIGN.md rather than by a second implementation of them.
 */
public final class PoolInspector implements AutoCloseable {

    /** What one of the two header copies holds. */
    public record HeaderCopy(String state, long sequence) {
        public boolean valid() {
            return "VALID".equals(state);
        }
    }

    private final PoolFile file;
    private final PoolHeader header;
    private final boolean copiesDisagree;
    private final HeaderCopy[] copies;
    private final TableLayout layout;
    private final Probe probe;
    private final ItemChecksum checksum;

    private final boolean identityDisagrees;

    private PoolInspector(PoolFile file, HeaderStore.ReadResult read, boolean identityDisagrees) {
        this.file = file;
        this.identityDisagrees = identityDisagrees;
        this.header = read.header();
        this.copiesDisagree = read.copyRepairNeeded();
        MemorySegment s = file.segment();
        this.copies = new HeaderCopy[2];
        for (int i = 0; i < 2; i++) {
            long base = (long) i * PoolHeader.COPY_BYTES;
            PoolHeader.CopyState state = PoolHeader.inspect(s, base);
            long seq = state == PoolHeader.CopyState.VALID ? s.get(PoolHeader.LONG, base + PoolHeader.OFF_SEQUENCE) : -1;
            copies[i] = new HeaderCopy(state.name(), seq);
        }
        this.layout = TableLayout.of(header);
        this.probe = new Probe(header.geometry(), header.seeds(), header.formatVersion());
        this.checksum = header.geometry().itemChecksums() ? new ItemChecksum(header.geometry(), header.formatVersion()) : null;
    }

    /**
     * The item count of the close record, if the next open would trust it (clean flag set, checksum
     * and sizes right; such a record marks exactly as many value blocks used as it counts items);
     * empty otherwise.
     */
    public OptionalLong trustedCloseRecordItems() {
        CloseRecord.Loaded r = trustedCloseRecord();
        return r == null ? OptionalLong.empty() : OptionalLong.of(r.items());
    }

    /**
     * The close record the next open would trust (items, the heap's bitmap numbered with chunks in
     * offset order, the table's region CRCs), or null when open would scan.
     */
    public CloseRecord.Loaded trustedCloseRecord() {
        PoolHeap heap = PoolHeap.of(header, file.path());
        return CloseRecord.read(file.segment(), header, heap.bitmapBlocks(), heap.bitmapWords());
    }

    /**
     * The table regions ({@link TableDigest}) whose bytes no longer match the CRC the
     * last clean close recorded for them: changed after it. With a trusted close record, every region;
     * after a crash of a process that opened the pool from its record ({@link CloseRecord#readOpened}),
     * the regions that process never reached. Empty when neither is known.
     */
    public List<String> changedRegions() {
        TableDigest digest = new TableDigest(header);
        List<String> changed = new ArrayList<>();
        changedRegionSet().stream().forEach(i -> changed.add("pool bytes " + digest.offsetOf(i) + " to "
                + (digest.offsetOf(i) + digest.bytesOf(i)) + " (buckets " + digest.firstBucket(i) + " to "
                + (digest.firstBucket(i) + digest.bytesOf(i) / header.geometry().bucketSize() - 1) + " of level "
                + digest.levelOf(i) + ")"));
        return changed;
    }

    /** The regions {@link #changedRegions()} describes, by number ({@link TableDigest}). */
    public BitSet changedRegionSet() {
        CloseRecord.Loaded r = trustedCloseRecord();
        CloseRecord.Opened o = r == null ? CloseRecord.readOpened(file.segment(), header) : null;
        BitSet changed = new BitSet();
        if (r == null && o == null) {
            return changed;
        }
        int[] recorded = r != null ? r.regionCrcs() : o.regionCrcs();
        TableDigest digest = new TableDigest(header);
        int[] now = digest.crcs(file.segment(), o == null ? null : recorded, o == null ? null : o::touched);
        for (int i = 0; i < now.length; i++) {
            if (now[i] != recorded[i]) {
                changed.set(i);
            }
        }
        return changed;
    }

    /** Whether the pool keeps a checksum of every item (see {@code GPHashIndex.Builder#itemChecksums}). */
    public boolean itemChecksums() {
        return checksum != null;
    }

    /**
     * Whether the item in {@code slot}, whose value block is at {@code valueOffset}, matches its
     * checksum (always true for a pool without item checksums).
     */
    public boolean itemChecksumMatches(long slot, long valueOffset) {
        if (checksum == null) {
            return true;
        }
        MemorySegment s = file.segment();
        return checksum.stored(s, valueOffset) == checksum.ofStored(s, slot + SlotMeta.BYTES, s, valueOffset);
    }

    /**
     * Opens {@code path} read-only and validates its header.
     *
     * @throws PoolFormatException                              the file is not a usable pool (its reason says why)
     * @throws PoolLockedException        the pool is open in an engine
     * @throws PoolIoException            no such file, or it cannot be read
     */
    public static PoolInspector open(Path path) {
        PoolFile file = PoolFile.openReadOnly(path);
        try {
            HeaderStore.ReadResult read = HeaderStore.read(file);
            return new PoolInspector(file, HeaderChoice.confirm(file, read), read.rival() != null);
        } catch (RuntimeException | Error e) {
            file.close();
            throw e;
        }
    }

    public Path path() {
        return file.path();
    }

    /** The header open would use (the valid copy with the highest sequence). */
    public PoolHeader header() {
        return header;
    }

    /** Header copy A (index 0, at offset 0) or B (index 1, at offset 2048). */
    public HeaderCopy headerCopy(int index) {
        return copies[index];
    }

    /** Whether the two copies do not hold the same state (one damaged, or a commit interrupted). */
    public boolean headerCopiesDisagree() {
        return copiesDisagree;
    }

    /**
     * Whether the two valid copies disagree on the geometry or hash seeds (no crash does that); the
     * {@link #header()} is then the one the table's items confirm, as open chooses it.
     */
    public boolean headerCopiesDisagreeOnIdentity() {
        return identityDisagrees;
    }

    public Geometry geometry() {
        return header.geometry();
    }

    /** The levels of the table, top level first, as the header describes them. */
    public TableLayout layout() {
        return layout;
    }

    /** The whole file, mapped read-only. */
    public MemorySegment segment() {
        return file.segment();
    }

    public long fileSize() {
        return file.fileSize();
    }

    /** The fingerprint a key stored at {@code keyOffset} of the pool must carry. */
    public int fingerprintOfKeyAt(long keyOffset) {
        probe.hash(file.segment(), keyOffset);
        return probe.fingerprint;
    }

    /**
     * The slot of the valid item (first match in candidate order) of the key stored at
     * {@code keyOffset} of the pool, or -1 if no candidate slot holds it.
     */
    public long validSlotOfKeyAt(long keyOffset) {
        MemorySegment pool = file.segment();
        probe.hash(pool, keyOffset);
        probe.scan(pool, layout, pool, keyOffset);
        return probe.matchCount == 0 ? -1 : probe.matchSlot[0];
    }

    /**
     * Every candidate slot offset of {@code key} (keySize bytes at {@code keyOffset}), in validity
     * order: top level first, then bucket number, then slot.
     */
    public long[] candidateSlots(MemorySegment key, long keyOffset) {
        MemorySegment pool = file.segment();
        probe.hash(key, keyOffset);
        probe.scan(pool, layout, key, keyOffset);
        Geometry g = header.geometry();
        long[] out = new long[probe.bucketCount * g.slotsPerBucket()];
        int n = 0;
        for (int b = 0; b < probe.bucketCount; b++) {
            for (int s = 0; s < g.slotsPerBucket(); s++) {
                out[n++] = probe.bucketOffset[b] + (long) s * g.slotSize();
            }
        }
        return out;
    }

    /**
     * Appends the next live entries to {@code chunk}, as the engines' cursors do; items that fail
     * their checksum, or whose value offset {@code isValueBlock} rejects, are counted in
     * {@code state} and left out.
     */
    public void readEntries(EntryScan.State state, org.gphash.EntryChunk chunk, LongPredicate isValueBlock) {
        chunk.clear();
        EntryScan.fill(file.segment(), layout, header.geometry(), MetaFormat.of(header.formatVersion()),
                ValueFormat.of(header.formatVersion(), header.geometry().valueSize(),
                        header.geometry().itemChecksums()), probe, state, chunk, true, isValueBlock,
                file.path());
    }

    /** A copy of the pool's committed bytes at {@code target}, fsynced before it gets its name. */
    public void copyTo(Path target) {
        file.copyTo(target, header.fileLength());
    }

    @Override
    public void close() {
        file.close();
    }
}
