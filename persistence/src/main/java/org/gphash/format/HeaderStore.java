package org.gphash.format;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Arrays;

import org.gphash.Geometry;
import org.gphash.error.PoolFormatException.Reason;
import org.gphash.error.PoolFormatException;
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
public final class HeaderStore {

    private final PoolFile file;
    /** Told after the first copy of each commit is persisted (the crash tests stop there). */
    private final Runnable firstCopyWritten;
    private volatile PoolHeader current;
    /**
     * Whether this store has committed (both copies written by it): before, the copies in the file are
     * what open found (one may be damaged, which the first commit repairs), so there is nothing to check.
     */
    private boolean written;

    /**
     * The store of an open pool whose committed header is {@code current}.
     *
     * @param file             the pool file
     * @param current          the committed header, as {@link #read} found it
     * @param firstCopyWritten run after the first copy of each commit is persisted (a crash point)
     */
    public HeaderStore(PoolFile file, PoolHeader current, Runnable firstCopyWritten) {
        this.file = file;
        this.current = current;
        this.firstCopyWritten = firstCopyWritten;
    }

    public PoolHeader current() {
        return current;
    }

    /** Writes a brand-new header to both copies of a freshly created file. */
    public static HeaderStore initialize(PoolFile file, PoolHeader header, Runnable firstCopyWritten) {
        HeaderStore store = new HeaderStore(file, header.withSequence(0), firstCopyWritten);
        store.commit(header);
        return store;
    }

    /**
     * Makes {@code next} the committed header (its sequence number is assigned here). Commits are
     * serialised, and the in-flight bound never falls: a commit derived from a header read before
     * another thread raised the bound ({@link #admitOpsInFlight}) keeps the raised one.
     */
    public synchronized void commit(PoolHeader next) {
        if (written) {
            checkOnFile();
        }
        MemorySegment segment = file.segment();
        long first = current.sequence() + 1;
        if (next.opsInFlightLimit() < current.opsInFlightLimit()) {
            next = next.withOpsInFlightLimit(current.opsInFlightLimit());
        }
        PoolHeader a = next.withSequence(first);
        long baseA = copyBase(first);
        a.writeTo(segment, baseA);
        file.persister().persist(segment, baseA, PoolHeader.COPY_BYTES);
        firstCopyWritten.run();
        PoolHeader b = next.withSequence(first + 1);
        long baseB = copyBase(first + 1);
        b.writeTo(segment, baseB);
        file.persister().persist(segment, baseB, PoolHeader.COPY_BYTES);
        current = b;
        written = true;
    }

    /**
     * Checks that both copies in the file still hold the committed header (the newest copy the
     * current state, the other the same with the previous sequence number), so that a pool changed
     * behind the open engine's back (zeroed in place, overwritten by a copy) is not closed "cleanly"
     * over it (issue 27). Commits call it first; so do sync and close.
     *
     * @throws PoolFormatException naming the pool when a copy changed
     */
    public synchronized void checkOnFile() {
        if (!written) {
            return;
        }
        MemorySegment segment = file.segment();
        PoolHeader c = current;
        for (long sequence : new long[] {c.sequence(), c.sequence() - 1}) {
            long base = copyBase(sequence);
            PoolHeader found = PoolHeader.inspect(segment, base) == PoolHeader.CopyState.VALID
                    ? PoolHeader.readFrom(segment, base, file.path()) : null;
            if (found == null || !found.equals(c.withSequence(sequence))) {
                throw new PoolFormatException(Reason.CORRUPT, file.path(), "header copy " + (base == 0 ? "A" : "B")
                        + (found == null ? " is no longer a valid header" : " no longer holds the committed header")
                        + " while the pool is open: something other than this engine wrote to the pool file (zeroed "
                        + "it, or copied another file over it); nothing more is written to it, and it is not marked "
                        + "cleanly closed: run `gphash check` on it");
            }
        }
    }

    /**
     * Makes sure the header admits {@code ops} operations in flight before they start, so that
     * recovery after a crash knows how much damage the crash can explain. Raises the bound to the
     * next power of two (a commit) only when it grows, so engines may call this on every batch.
     */
    public void admitOpsInFlight(long ops) {
        if (current.opsInFlightLimit() >= ops) {
            return;
        }
        synchronized (this) {
            if (current.opsInFlightLimit() < ops) {
                commit(current.withOpsInFlightLimit(roundedLimit(ops)));
            }
        }
    }

    /** {@return the in-flight bound a header records to admit {@code ops}: the next power of two above it, so that it rises rarely} */
    public static long roundedLimit(long ops) {
        return Math.max(Long.highestOneBit(Math.max(1, ops - 1)) << 1, ops);
    }

    private static long copyBase(long sequence) {
        return (sequence & 1) * PoolHeader.COPY_BYTES;
    }

    /**
     * What {@link #read} found: the header, whether one copy had to be ignored, and, when the two
     * valid copies disagree on what no commit ever changes (geometry, hash seeds, pool identity,
     * creation time), the other copy: no crash explains that, so which one is right is for the
     * table to say ({@code org.gphash.table.HeaderChoice}), and neither is written over until it has.
     */
    public record ReadResult(PoolHeader header, boolean copyRepairNeeded, PoolHeader rival) {
        public ReadResult {
            if (rival != null && !copyRepairNeeded) {
                throw new IllegalArgumentException("a rival copy means the copies disagree");
            }
        }

        /** The same result with {@code chosen} as the header and no rival left. */
        public ReadResult choose(PoolHeader chosen) {
            return new ReadResult(chosen, copyRepairNeeded, null);
        }
    }

    /** Whether two copies agree on every field no commit changes after create. */
    static boolean sameIdentity(PoolHeader a, PoolHeader b) {
        return a.geometry().equals(b.geometry()) && Arrays.equals(a.seeds(), b.seeds())
                && a.poolId() == b.poolId() && a.createdMillis() == b.createdMillis();
    }

    /**
     * Validates and decodes the header of an open file without writing anything.
     *
     * @throws PoolFormatException naming the reason when the file is not a usable pool
     */
    public static ReadResult read(PoolFile file) {
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
            // A copy whose checksum verifies was written by a build of another format: never mix formats.
            throw wrongVersion(segment, a == PoolHeader.CopyState.WRONG_VERSION ? 0 : PoolHeader.COPY_BYTES, path);
        }
        PoolHeader ha = a == PoolHeader.CopyState.VALID ? PoolHeader.readFrom(segment, 0, path) : null;
        PoolHeader hb = b == PoolHeader.CopyState.VALID ? PoolHeader.readFrom(segment, PoolHeader.COPY_BYTES, path) : null;
        if (ha == null && hb == null) {
            if (a == PoolHeader.CopyState.OTHER_VERSION_UNVERIFIED || b == PoolHeader.CopyState.OTHER_VERSION_UNVERIFIED) {
                throw wrongVersion(segment, a == PoolHeader.CopyState.OTHER_VERSION_UNVERIFIED ? 0 : PoolHeader.COPY_BYTES,
                        path);
            }
            throw new PoolFormatException(Reason.CHECKSUM_MISMATCH, path, "neither header copy has a valid CRC32C");
        }
        PoolHeader newer = ha == null ? hb : hb == null ? ha : ha.sequence() >= hb.sequence() ? ha : hb;
        PoolHeader older = newer == ha ? hb : ha;
        // The newest copy whose extents all carry this pool's tags; a copy that names foreign or
        // misplaced extents is damage to that copy, like a bad checksum.
        RuntimeException newerProblem = extentProblem(newer, segment, size, path);
        PoolHeader chosen = newer;
        if (newerProblem != null) {
            if (older == null || extentProblem(older, segment, size, path) != null) {
                throw newerProblem;
            }
            chosen = older;
        }
        boolean repair = ha == null || hb == null || !ha.withSequence(0).equals(hb.withSequence(0));
        PoolHeader other = chosen == ha ? hb : ha;
        PoolHeader rival = other != null && !sameIdentity(chosen, other) && extentProblem(other, segment, size, path) == null
                ? other : null;
        return new ReadResult(chosen, repair, rival);
    }

    private static PoolFormatException wrongVersion(MemorySegment segment, long base, Path path) {
        int version = PoolHeader.versionOf(segment, base);
        String hint = version < PoolHeader.FORMAT_VERSION
                ? "; export it with `gphash dump` of the build that wrote it, then `gphash import` into a new pool"
                : "; open it with a newer build";
        return new PoolFormatException(Reason.WRONG_VERSION, path, "format version " + version
                + ", this build reads versions " + PoolHeader.FORMAT_VERSION + " and " + PoolHeader.FORMAT_3 + hint);
    }

    /** Why {@code h} cannot describe this file's body, or null when its extents check out. */
    private static RuntimeException extentProblem(PoolHeader h, MemorySegment segment, long fileSize, Path path) {
        try {
            validateExtents(h, fileSize, path);
            Geometry g = h.geometry();
            long[] levels = h.levelOffsets();
            for (int i = 0; i < levels.length; i++) {
                checkTag(segment, h, "level " + i, levels[i], h.bucketsInLevel(i) * g.bucketSize(), path);
            }
            for (HeapChunk chunk : h.heapChunks()) {
                checkTag(segment, h, "value heap chunk", chunk.offset(), chunk.length(), path);
            }
            checkLevelsAreCurrent(h, segment, fileSize, path);
            return null;
        } catch (PoolFormatException e) {
            return e;
        }
    }

    private static void checkTag(MemorySegment segment, PoolHeader h, String what, long offset, long length, Path path) {
        switch (ExtentTag.check(segment, offset, length, h.poolId())) {
            case MATCHES -> {
            }
            case DAMAGED -> throw new PoolFormatException(Reason.CORRUPT, path,
                    "the tag in front of " + what + " at offset " + offset + " is damaged or missing");
            case OTHER_POOL -> throw new PoolFormatException(Reason.FOREIGN_HEADER, path,
                    "the header belongs to pool " + Long.toHexString(h.poolId()) + " but " + what + " at offset "
                            + offset + " belongs to pool " + Long.toHexString(ExtentTag.poolIdOf(segment, offset))
                            + "; nothing was changed");
            case OTHER_EXTENT -> throw new PoolFormatException(Reason.FOREIGN_HEADER, path,
                    "the header's " + what + " at offset " + offset + "+" + length
                            + " is not an extent of this pool as it was written (a stale or misplaced header)"
                            + "; nothing was changed");
        }
    }

    /**
     * Refuses a header older than the table (issue 52: an old header written over both copies made
     * the scan drop the items of the newest level and free their value blocks): one that names a level
     * a later resize dropped, or whose committed length leaves out a level that holds items (a level
     * beyond it that a crash left is still empty: it is zeroed before its tag is written).
     */
    private static void checkLevelsAreCurrent(PoolHeader h, MemorySegment segment, long fileSize, Path path) {
        long[] levels = h.levelOffsets();
        for (int i = 0; i < levels.length; i++) {
            ExtentTag.LevelStamp stamp = ExtentTag.levelStamp(segment, levels[i]);
            if (stamp != null && stamp.droppedBy() != 0) {
                throw new PoolFormatException(Reason.FOREIGN_HEADER, path, "the header is older than the table: "
                        + "its level " + i + " at offset " + levels[i] + " was emptied and given to the value heap by "
                        + "resize " + stamp.droppedBy() + ", and the header has seen " + h.resizes() + " resizes "
                        + "(a header copy restored from an older state?); nothing was changed");
            }
        }
        long limit = Math.min(fileSize, segment.byteSize());
        for (long at = Geometry.alignUp(h.fileLength() + ExtentTag.BYTES, ExtentTag.ALIGNMENT);
             at + 8 <= limit; ) {
            long length = ExtentTag.lengthOf(segment, at);
            if (length <= 0 || at + length > limit
                    || ExtentTag.check(segment, at, length, h.poolId()) != ExtentTag.Verdict.MATCHES) {
                return;  // no extent of this pool starts here: the rest is not the table's
            }
            ExtentTag.LevelStamp stamp = ExtentTag.levelStamp(segment, at);
            if (stamp != null && stamp.droppedBy() == 0 && holdsAnything(segment, at, length)) {
                throw new PoolFormatException(Reason.FOREIGN_HEADER, path, "the header is older than the table: "
                        + "past its committed length " + h.fileLength() + " lies level " + stamp.serial() + " of this "
                        + "pool at offset " + at + ", and it holds items (a header copy restored from an older state?); "
                        + "nothing was changed");
            }
            at = Geometry.alignUp(at + length + ExtentTag.BYTES, ExtentTag.ALIGNMENT);
        }
    }

    private static boolean holdsAnything(MemorySegment segment, long offset, long length) {
        for (long o = offset; o + 8 <= offset + length; o += 8) {
            if (segment.get(PoolHeader.LONG, o) != 0) {
                return true;
            }
        }
        return false;
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
        if (offset < PoolHeader.REGION_BYTES + ExtentTag.BYTES || offset + length > fileLength || offset % 8 != 0) {
            throw new PoolFormatException(Reason.CORRUPT, path,
                    what + " at " + offset + "+" + length + " lies outside the pool's " + fileLength + " bytes");
        }
    }
}
