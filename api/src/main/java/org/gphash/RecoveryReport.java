package org.gphash;

import java.io.Serializable;
import java.time.Duration;
import java.util.Objects;

/**
 * What recovery on open found and did (GPHash §3.2.3 "Recovery"). Recovery runs on every open,
 * clean shutdown or not: it is also what rebuilds the volatile free-space state.
 *
 * @param previousShutdownClean  whether the pool was closed cleanly last time
 * @param headerCopyRepaired     one header copy was torn, damaged or stale and was rewritten
 * @param insertSlotsCleared     slots left in the INSERT state by an interrupted insert, set EMPTY
 * @param tornSlotsCleared       slots whose fingerprint did not match their key, set EMPTY
 * @param duplicatesRemoved      copies of a key that were not its valid item, removed
 * @param resizeResumed          a resize was in progress and was completed
 * @param itemsRehashed          items moved out of the bottom level by the resumed resize
 * @param items                  items in the pool after recovery
 * @param valueBlocksInUse       value blocks referenced by items
 * @param valueBlocksFree        value blocks free after rebuilding free space
 * @param trailingBytesIgnored   bytes past the committed end of the pool (an interrupted growth)
 * @param duration               how long recovery took
 * @param fromCloseRecord        the pool was closed cleanly and its close record was trusted: the
 *                               table was not scanned (nothing can need repair after a clean close)
 * @param journal                what the open did with the index's journal ({@link Journaling}), or
 *                               {@link JournalReplay#NONE}: for a rebuilt pool, the other components
 *                               describe the new pool's open
 */
public record RecoveryReport(boolean previousShutdownClean, boolean headerCopyRepaired, long insertSlotsCleared,
                             long tornSlotsCleared, long duplicatesRemoved, boolean resizeResumed, long itemsRehashed,
                             long items, long valueBlocksInUse, long valueBlocksFree, long trailingBytesIgnored,
                             Duration duration, boolean fromCloseRecord, JournalReplay journal)
        implements Serializable {

    /** Checks that the journal's part is given ({@link JournalReplay#NONE} for none). */
    public RecoveryReport {
        Objects.requireNonNull(journal, "journal");
    }

    /**
     * A report without a journal's part, as the engines make it.
     *
     * @param previousShutdownClean as the record's component
     * @param headerCopyRepaired    as the record's component
     * @param insertSlotsCleared    as the record's component
     * @param tornSlotsCleared      as the record's component
     * @param duplicatesRemoved     as the record's component
     * @param resizeResumed         as the record's component
     * @param itemsRehashed         as the record's component
     * @param items                 as the record's component
     * @param valueBlocksInUse      as the record's component
     * @param valueBlocksFree       as the record's component
     * @param trailingBytesIgnored  as the record's component
     * @param duration              as the record's component
     * @param fromCloseRecord       as the record's component
     */
    public RecoveryReport(boolean previousShutdownClean, boolean headerCopyRepaired, long insertSlotsCleared,
                          long tornSlotsCleared, long duplicatesRemoved, boolean resizeResumed, long itemsRehashed,
                          long items, long valueBlocksInUse, long valueBlocksFree, long trailingBytesIgnored,
                          Duration duration, boolean fromCloseRecord) {
        this(previousShutdownClean, headerCopyRepaired, insertSlotsCleared, tornSlotsCleared, duplicatesRemoved,
                resizeResumed, itemsRehashed, items, valueBlocksInUse, valueBlocksFree, trailingBytesIgnored, duration,
                fromCloseRecord, JournalReplay.NONE);
    }

    /**
     * This report with the journal's part.
     *
     * @param replay what the open did with the journal
     * @return the report with it
     */
    public RecoveryReport withJournal(JournalReplay replay) {
        return new RecoveryReport(previousShutdownClean, headerCopyRepaired, insertSlotsCleared, tornSlotsCleared,
                duplicatesRemoved, resizeResumed, itemsRehashed, items, valueBlocksInUse, valueBlocksFree,
                trailingBytesIgnored, duration, fromCloseRecord, replay);
    }

    /**
     * A report of a scan (not from a close record); the fields as above.
     *
     * @param previousShutdownClean whether the pool was closed cleanly last time
     * @param headerCopyRepaired    one header copy was rewritten
     * @param insertSlotsCleared    INSERT slots set EMPTY
     * @param tornSlotsCleared      torn slots set EMPTY
     * @param duplicatesRemoved     duplicate copies removed
     * @param resizeResumed         a resize was completed
     * @param itemsRehashed         items it moved
     * @param items                 items after recovery
     * @param valueBlocksInUse      value blocks referenced by items
     * @param valueBlocksFree       value blocks free
     * @param trailingBytesIgnored  bytes past the committed end
     * @param duration              how long recovery took
     */
    public RecoveryReport(boolean previousShutdownClean, boolean headerCopyRepaired, long insertSlotsCleared,
                          long tornSlotsCleared, long duplicatesRemoved, boolean resizeResumed, long itemsRehashed,
                          long items, long valueBlocksInUse, long valueBlocksFree, long trailingBytesIgnored,
                          Duration duration) {
        this(previousShutdownClean, headerCopyRepaired, insertSlotsCleared, tornSlotsCleared, duplicatesRemoved,
                resizeResumed, itemsRehashed, items, valueBlocksInUse, valueBlocksFree, trailingBytesIgnored, duration,
                false);
    }

    /** {@return whether recovery had to repair anything at all} */
    public boolean repairedAnything() {
        return headerCopyRepaired || insertSlotsCleared > 0 || tornSlotsCleared > 0 || duplicatesRemoved > 0
                || resizeResumed;
    }

    @Override
    public String toString() {
        return "recovery: previous shutdown " + (previousShutdownClean ? "clean" : "NOT clean")
                + (fromCloseRecord ? " (close record trusted, no scan)" : "")
                + ", header copy repaired=" + headerCopyRepaired + ", INSERT slots cleared=" + insertSlotsCleared
                + ", torn slots cleared=" + tornSlotsCleared + ", duplicates removed=" + duplicatesRemoved
                + ", resize resumed=" + resizeResumed + " (items rehashed=" + itemsRehashed + ")"
                + ", items=" + items + ", value blocks used/free=" + valueBlocksInUse + "/" + valueBlocksFree
                + ", trailing bytes ignored=" + trailingBytesIgnored + ", took " + duration.toMillis() + " ms"
                + (journal == JournalReplay.NONE ? "" : "; " + journal);
    }
}
