package org.gphash.table;

import java.lang.foreign.MemorySegment;
import java.util.BitSet;
import java.util.concurrent.atomic.AtomicLongArray;

import org.gphash.error.PoolFormatException.Reason;
import org.gphash.error.PoolFormatException;
import org.gphash.format.CloseRecord;
import org.gphash.format.PoolHeader;
import org.gphash.format.TableDigest;
import org.gphash.persistence.PoolFile;

/**
 * The table regions of a cleanly closed pool that no operation has reached yet, each with the CRC32C
 * its close recorded (issue 27). Open trusts the close record and reads none of the table; an
 * operation that reaches a region for the first time checks it here, and a region whose bytes no
 * longer match is refused for good: every operation that reaches it throws a {@link
 * PoolFormatException} naming it, nothing in it is read or changed, and its items keep their value
 * blocks (so no block is handed out twice). Other regions go on being served.
 *
 * <p>Once every region is checked the table drops this object ({@link Table#regions}), and operations
 * pay nothing. Whole-table work (resize, cursors, verification, an engine that mirrors the table)
 * checks every region first ({@link #checkAll}).
 *
 * <p>Where the close record is kept across a crash ({@link #keepTouchedAt}), a region is also marked
 * touched there, persisted, the moment it is checked: before anything can write to it. The scan after
 * a crash then still checks every region this process never reached ({@link CloseRecord#readOpened}).
 */
final class RegionCheck {

    private final PoolFile file;
    private final TableDigest digest;
    private final int[] expected;
    /** Per depth (0 = top), the header index of that level. */
    private final int levels;
    private final AtomicLongArray checked;
    private final boolean[] damaged;
    private final Runnable whenComplete;
    private int left;
    /** Where the opened close record keeps its touched bits; -1 while none is kept. */
    private long touchedAt = -1;

    /** Regions of {@code header}'s levels expected to hold {@code expected}; {@code whenComplete} runs once all are checked. */
    RegionCheck(PoolFile file, PoolHeader header, int[] expected, Runnable whenComplete) {
        this.whenComplete = whenComplete;
        this.file = file;
        this.digest = new TableDigest(header);
        this.expected = expected.clone();
        this.levels = header.levelOffsets().length;
        this.checked = new AtomicLongArray((digest.regions() + 63) >>> 6);
        this.damaged = new boolean[digest.regions()];
        this.left = digest.regions();
    }

    TableDigest digest() {
        return digest;
    }

    /** The CRCs the close recorded (a region never checked is unchanged since). */
    int[] expected() {
        return expected;
    }

    /** Whether region {@code r} was checked and found as recorded. */
    boolean checked(int r) {
        return (checked.get(r >>> 6) & (1L << r)) != 0;
    }

    /**
     * Makes sure the bucket {@code bucket} of the level at {@code depth} (0 = top) was checked.
     *
     * @throws PoolFormatException if its region changed after the close
     */
    void ensure(int depth, long bucket) {
        int r = digest.regionOf(levels - 1 - depth, bucket);
        if (!checked(r)) {
            check(r);
        }
    }

    private synchronized void check(int r) {
        if (checked(r)) {
            return;
        }
        if (damaged[r] || digest.crc(file.segment(), r) != expected[r]) {
            damaged[r] = true;
            throw changed(r);
        }
        markChecked(r);
    }

    /**
     * From now on marks each region touched at {@code offset} (see the class comment) as it is
     * checked, and marks there the regions checked so far; the caller persists those bits before the
     * header commit that names the record.
     */
    synchronized void keepTouchedAt(long offset) {
        MemorySegment pool = file.segment();
        for (int r = 0; r < damaged.length; r++) {
            if (checked(r)) {
                CloseRecord.markTouched(pool, offset, r);
            }
        }
        touchedAt = offset;
    }

    private void markChecked(int r) {
        if (touchedAt >= 0) {
            // Durable before the region can be written: a crash after this leaves it for the scan to trust.
            long word = CloseRecord.markTouched(file.segment(), touchedAt, r);
            file.persister().persist(file.segment(), word, 8);
        }
        setChecked(r);
    }

    private void setChecked(int r) {
        checked.getAndUpdate(r >>> 6, w -> w | (1L << r));
        if (--left == 0) {
            whenComplete.run();
        }
    }

    /**
     * Checks every region not checked yet (in parallel).
     *
     * @throws PoolFormatException naming the first region that changed after the close
     */
    synchronized void checkAll() {
        MemorySegment pool = file.segment();
        int[] now = digest.crcs(pool, expected, this::checked);
        int firstBad = -1;
        BitSet sound = new BitSet(now.length);
        for (int r = 0; r < now.length; r++) {
            if (checked(r)) {
                continue;
            }
            if (damaged[r] || now[r] != expected[r]) {
                damaged[r] = true;
                firstBad = firstBad < 0 ? r : firstBad;
            } else {
                sound.set(r);
            }
        }
        if (touchedAt >= 0 && !sound.isEmpty()) {
            // All their touched bits durable in one persist, before any of them counts as checked.
            sound.stream().forEach(r -> CloseRecord.markTouched(pool, touchedAt, r));
            file.persister().persist(pool, touchedAt, CloseRecord.touchedBytes(damaged.length));
        }
        sound.stream().forEach(this::setChecked);
        if (firstBad >= 0) {
            throw changed(firstBad);
        }
    }

    private PoolFormatException changed(int r) {
        int level = digest.levelOf(r);
        long first = digest.firstBucket(r);
        long offset = digest.offsetOf(r);
        return new PoolFormatException(Reason.DAMAGE_BEYOND_CRASH, file.path(), "buckets " + first + " to "
                + (first + digest.bucketsIn(r) - 1) + " of table level " + level + " (pool bytes " + offset + " to "
                + (offset + digest.bytesOf(r)) + ") changed after the pool was closed cleanly: their checksum does not match "
                + "the close record, so something other than gphash wrote to the pool. Nothing in them is served or "
                + "changed; the rest of the table is. Close the pool, then run `gphash check` on it, or open it with "
                + "verifyOnOpen(true), a full scan that accepts changes that harm no item and refuses the others");
    }
}
