package org.gphash.index;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

import org.gphash.PoolFormatException;
import org.gphash.PoolFormatException.Reason;
import org.gphash.persistence.PoolFile;

/**
 * Reads and commits the two header copies at the start of the pool.
 *
 * <p>A commit writes the new state to the copy that does not hold the current one, persists it
 * (this is the atomic commit point: a torn write leaves a bad checksum and the other copy still
 * valid), then writes the same state to the other copy and persists that. So whenever the engine
 * acts on a committed state, both copies hold it, and falling back to the older copy after a torn
 * or damaged newest copy is always safe.
 */
final class HeaderStore {

    private final PoolFile file;
    private final CrashHook crashHook;
    private PoolHeader current;

    HeaderStore(PoolFile file, PoolHeader current, CrashHook crashHook) {
        this.file = file;
        this.current = current;
        this.crashHook = crashHook;
    }

    PoolHeader current() {
        return current;
    }

    /** Writes a brand-new header to both copies of a freshly created file. */
    static HeaderStore initialize(PoolFile file, PoolHeader header, CrashHook crashHook) {
        HeaderStore store = new HeaderStore(file, header.withSequence(0), crashHook);
        store.commit(header);
        return store;
    }

    /** Makes {@code next} the committed header (its sequence number is assigned here). */
    void commit(PoolHeader next) {
        MemorySegment segment = file.segment();
        long first = current.sequence() + 1;
        PoolHeader a = next.withSequence(first);
        long baseA = copyBase(first);
        a.writeTo(segment, baseA);
        file.persister().persist(segment, baseA, PoolHeader.COPY_BYTES);
        crashHook.reached(CrashPoint.HEADER_FIRST_COPY_WRITTEN);
        PoolHeader b = next.withSequence(first + 1);
        long baseB = copyBase(first + 1);
        b.writeTo(segment, baseB);
        file.persister().persist(segment, baseB, PoolHeader.COPY_BYTES);
        current = b;
    }

    private static long copyBase(long sequence) {
        return (sequence & 1) * PoolHeader.COPY_BYTES;
    }

    /** What {@link #read} found: the header, and whether one copy had to be ignored. */
    record ReadResult(PoolHeader header, boolean copyRepairNeeded) {
    }

    /**
     * Validates and decodes the header of an open file without writing anything.
     *
     * @throws PoolFormatException naming the reason when the file is not a usable pool
     */
    static ReadResult read(PoolFile file) {
        Path path = file.path();
        long size = file.fileSize();
        if (size < 8) {
            throw new PoolFormatException(Reason.NOT_A_POOL, path, "file is " + size + " bytes long");
        }
        MemorySegment segment = file.segment();
        if (size < PoolHeader.REGION_BYTES) {
            if (segment.get(PoolHeader.LONG, 0) == PoolHeader.MAGIC) {
                throw new PoolFormatException(Reason.TRUNCATED, path,
                        "file is " + size + " bytes, shorter than the " + PoolHeader.REGION_BYTES + "-byte header");
            }
            throw new PoolFormatException(Reason.NOT_A_POOL, path, "no pool magic number at the start of the file");
        }
        PoolHeader.CopyState a = PoolHeader.inspect(segment, 0);
        PoolHeader.CopyState b = PoolHeader.inspect(segment, PoolHeader.COPY_BYTES);
        if (a == PoolHeader.CopyState.NO_MAGIC && b == PoolHeader.CopyState.NO_MAGIC) {
            throw new PoolFormatException(Reason.NOT_A_POOL, path, "no pool magic number in either header copy");
        }
        if (a == PoolHeader.CopyState.WRONG_VERSION || b == PoolHeader.CopyState.WRONG_VERSION) {
            long base = a == PoolHeader.CopyState.WRONG_VERSION ? 0 : PoolHeader.COPY_BYTES;
            throw new PoolFormatException(Reason.WRONG_VERSION, path, "format version "
                    + PoolHeader.versionOf(segment, base) + ", this build reads version " + PoolHeader.FORMAT_VERSION);
        }
        PoolHeader ha = a == PoolHeader.CopyState.VALID ? PoolHeader.readFrom(segment, 0, path) : null;
        PoolHeader hb = b == PoolHeader.CopyState.VALID ? PoolHeader.readFrom(segment, PoolHeader.COPY_BYTES, path) : null;
        if (ha == null && hb == null) {
            throw new PoolFormatException(Reason.CHECKSUM_MISMATCH, path, "neither header copy has a valid CRC32C");
        }
        PoolHeader chosen = ha == null ? hb : hb == null ? ha : ha.sequence() >= hb.sequence() ? ha : hb;
        boolean repair = ha == null || hb == null || !ha.withSequence(0).equals(hb.withSequence(0));
        validateExtents(chosen, size, path);
        return new ReadResult(chosen, repair);
    }

    private static void validateExtents(PoolHeader h, long fileSize, Path path) {
        if (h.fileLength() > fileSize) {
            throw new PoolFormatException(Reason.TRUNCATED, path,
                    "header says the pool is " + h.fileLength() + " bytes but the file has " + fileSize);
        }
        Geometry g = h.geometry();
        long[] levels = h.levelOffsets();
        for (int i = 0; i < levels.length; i++) {
            long bytes = h.bucketsInLevel(i) * g.bucketSize();
            checkExtent("level " + i, levels[i], bytes, h.fileLength(), path);
        }
        for (HeapChunk chunk : h.heapChunks()) {
            checkExtent("value heap chunk", chunk.offset(), chunk.length(), h.fileLength(), path);
        }
    }

    private static void checkExtent(String what, long offset, long length, long fileLength, Path path) {
        if (offset < PoolHeader.REGION_BYTES || offset + length > fileLength || offset % 8 != 0) {
            throw new PoolFormatException(Reason.CORRUPT, path,
                    what + " at " + offset + "+" + length + " lies outside the pool's " + fileLength + " bytes");
        }
    }
}
