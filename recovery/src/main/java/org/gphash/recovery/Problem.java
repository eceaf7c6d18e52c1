package org.gphash.recovery;

/**
 * The kinds of inconsistency {@code check} looks for. Each says what is wrong in words a user can
 * act on; {@link #problem} is false for facts worth reporting that do not make a pool unsound.
 */
public enum Problem {
    UNREADABLE_HEADER(true, "the header cannot be used: the file is not a usable pool"),
    NOT_A_POOL(true, "the file is not a gphash pool of a format this build reads: there is nothing to check or repair"),
    OPEN_REFUSES(true, "open refuses this file before reading it (its owner, mode or type); fix that first"),
    HEADER_COPY_DAMAGED(true, "a header copy has no magic or a bad CRC32C checksum (recover rewrites it)"),
    HEADER_COPIES_DIFFER(true, "the header copies hold different states: a header commit was interrupted (recover completes it)"),
    EXTENTS_OVERLAP(true, "two extents of the pool (header, levels, value heap chunks) overlap"),
    INSERT_SLOT(true, "slot left in the INSERT state by an interrupted insert (recover clears it)"),
    TORN_FINGERPRINT(true, "item whose fingerprint does not match its key: no crash leaves one, so open refuses the "
            + "pool (a flipped bit? a copied header?); recover --force clears the item"),
    MISPLACED_ITEM(true, "item in a slot that is not a candidate slot of its key (wrong hash or bucket): no crash "
            + "leaves one, so open refuses the pool; recover --force clears the item"),
    DUPLICATE_KEY(true, "item that is not the valid item of its key: another copy comes first in candidate order (recover removes it)"),
    BAD_VALUE_OFFSET(true, "item whose value offset is not a block of the value heap (open refuses the pool)"),
    SHARED_VALUE_BLOCK(true, "value block referred to by more than one item (open refuses the pool)"),
    TORN_VALUE_FRAME(true, "item whose value block has no whole header for the pool's values (format 3): a value is "
            + "framed and persisted before any item names it, so no crash leaves one; reads of the key fail"),
    ITEM_CHECKSUM(true, "item whose key and value do not match its checksum: the media changed it; reads of the key "
            + "fail until it is rewritten or deleted"),
    NO_ITEM_CHECKSUMS(false, "the pool keeps no item checksums, so values cannot be verified (create pools with "
            + "itemChecksums(true) to have them)"),
    CLOSE_RECORD_MISMATCH(true, "the record of the last clean close disagrees with the table: the file changed after "
            + "it was closed, and open refuses it; 'gphash dump' saves the items it can vouch for, 'gphash recover "
            + "--force' rebuilds free space from the table as it is (an item whose value offset changed keeps a wrong value)"),
    TABLE_CHANGED_AFTER_CLOSE(true, "a region of the table does not match the checksum the last clean close recorded, "
            + "and no operation reached it since: something other than gphash changed it; operations that reach it fail "
            + "(after a crash, open refuses the pool); 'gphash recover' scans the table, accepts a change that harms no "
            + "item and refuses the others, 'gphash recover --force' accepts the table as it is"),
    SHARD_DISAGREES(true, "a shard of a sharded index is missing, or is not the pool its manifest names (another "
            + "index's or another shard's pool, or another geometry): open refuses the index until the right pool is back"),
    RESIZE_IN_PROGRESS(false, "a resize was interrupted; open or recover finishes it"),
    NOT_CLEANLY_SHUT_DOWN(false, "the pool was not closed cleanly (crash or still open); open or recover runs recovery"),
    TRAILING_BYTES(false, "bytes past the committed end of the pool (a growth prepared ahead of need, or one a crash interrupted); reused by the next growth");

    private final boolean problem;
    private final String description;

    Problem(boolean problem, String description) {
        this.problem = problem;
        this.description = description;
    }

    /** {@return whether one occurrence makes the pool unsound (check exits 1)} */
    public boolean problem() {
        return problem;
    }

    public String description() {
        return description;
    }
}
