package org.gphash.table;

import java.lang.foreign.MemorySegment;

import org.gphash.Geometry;
import org.gphash.PoolFullException;
import org.gphash.error.PoolIoException;
import org.gphash.format.CloseRecord;
import org.gphash.format.ExtentTag;
import org.gphash.format.HeaderStore;
import org.gphash.format.PoolHeader;
import org.gphash.format.TableDigest;
import org.gphash.persistence.PoolFile;

/**
 * The close record's life on the pool ({@link CloseRecord}): written by a clean close, kept as an
 * opened record by an open that trusted it, or retired by one that did not.
 */
final class CloseRecords {

    private CloseRecords() {
    }

    /**
     * The commit that marks the pool in use (the clean flag cleared), once recovery is done: it names
     * the record kept as an opened one where open trusted it and a region is left unchecked; else the
     * record is retired.
     */
    static void markInUse(Table table, boolean fromCloseRecord) {
        HeaderStore headers = table.headers;
        PoolHeader.CloseRecordRef kept = fromCloseRecord ? keep(table) : null;
        if (kept != null) {
            PoolHeader h = headers.current();
            headers.commit(h.withCleanShutdown(false).withCloseRecord(kept, h.fileLength()));
        } else {
            headers.commit(headers.current().withCleanShutdown(false));
            retire(table.file, headers.current());
        }
    }

    /**
     * After an open that trusted the close record, keeps it as an opened record ({@link CloseRecord}:
     * what the close knew of each region, and which regions this process reached), so that a crash of
     * this process does not make the next open's scan accept changes made behind its back (issue 52).
     * Persisted here; the caller commits the returned reference with the header that clears the clean
     * flag. Null where nothing is left to protect (every region already checked): then it is retired.
     */
    private static PoolHeader.CloseRecordRef keep(Table table) {
        RegionCheck regions = table.regions;
        if (regions == null) {
            return null;
        }
        PoolFile file = table.file;
        PoolHeader h = table.headers.current();
        int n = regions.digest().regions();
        PoolHeader.CloseRecordRef opened = CloseRecord.reopen(file.segment(), h, n);
        regions.keepTouchedAt(CloseRecord.touchedOffset(opened, n));
        file.persister().persist(file.segment(), opened.offset(), opened.length());
        return opened;
    }

    /**
     * Once open has cleared the clean-shutdown flag, a close record not kept as an opened one
     * describes a state that will be gone: its magic is erased, so that no header naming it (an old
     * copy restored by hand) can make a later open trust it. The next clean close writes a new one.
     */
    private static void retire(PoolFile file, PoolHeader h) {
        PoolHeader.CloseRecordRef ref = h.closeRecord();
        if (ref.present() && ref.offset() + 8 <= file.mappedSize()) {
            file.segment().set(PoolHeader.LONG, ref.offset(), 0L);
            file.persister().persist(file.segment(), ref.offset(), 8);
        }
    }

    /**
     * Writes the close record (free space and item count, for a fast next open) into its extent,
     * reusing the last one where it fits, else a new one at the end of the pool; persisted before
     * the commit that names it. Operations are drained. If the record cannot be written (no room),
     * the pool closes without one, and the next open scans.
     */
    static PoolHeader write(Table table, PoolHeader h) {
        PoolFile file = table.file;
        try {
            long[] bits = table.blocks.usedBits();
            byte[] classes = table.blocks.segmentClasses();
            int[] regionCrcs = regionCrcs(table, h);
            long bytes = CloseRecord.bytesFor(bits.length, regionCrcs.length, classes.length);
            PoolHeader.CloseRecordRef old = h.closeRecord();
            long offset;
            long end = h.fileLength();
            long capacity = old.present() ? Geometry.alignUp(old.length(), PoolSpace.EXTENT_ALIGNMENT) : 0;
            if (old.present() && bytes <= capacity && old.offset() + capacity <= end) {
                offset = old.offset();
            } else {
                offset = PoolSpace.nextExtent(h);
                end = offset + Geometry.alignUp(bytes, PoolSpace.EXTENT_ALIGNMENT);
                PoolSpace.ensureLength(file, end, h.fileLength(), table.maxPoolBytes, "the close record");
                ExtentTag.write(file.segment(), offset, end - offset, h.poolId());
                file.persister().persist(file.segment(), ExtentTag.tagOffset(offset), ExtentTag.BYTES);
            }
            MemorySegment pool = file.segment();
            int crc = CloseRecord.write(pool, offset, h, table.size.sum(), table.blocks.bitmapBlocks(), bits,
                    regionCrcs, classes);
            file.persister().persist(pool, offset, bytes);
            return h.withCloseRecord(new PoolHeader.CloseRecordRef(offset, (int) bytes, crc), end);
        } catch (PoolFullException | PoolIoException e) {
            return h.withCloseRecord(PoolHeader.NO_CLOSE_RECORD, h.fileLength());
        }
    }

    /**
     * The table's region CRCs for the close record: computed afresh where operations may have changed
     * a region; a region never reached since a clean open (or refused as changed) keeps the CRC it was
     * opened with, so that a change made behind the engine's back is still found by the next open.
     */
    private static int[] regionCrcs(Table table, PoolHeader h) {
        PoolFile file = table.file;
        TableDigest digest = new TableDigest(h);
        RegionCheck r = table.regions;
        if (r == null || r.digest().regions() != digest.regions()) {
            return digest.crcs(file.segment(), null, null);
        }
        return digest.crcs(file.segment(), r.expected(), i -> !r.checked(i));
    }
}
