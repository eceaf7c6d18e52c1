package org.gphash.spi;

/**
 * The persist points of every operation, in the order they happen. A {@link CrashHook} is told
 * when each is reached, so tests can stop an operation exactly there and check what a crash at
 * that moment leaves behind.
 */
public enum CrashPoint {
    /** Insert: the new value is written and persisted in a free block; no slot refers to it yet. */
    INSERT_VALUE_PERSISTED,
    /** Insert: a slot was CASed EMPTY to INSERT; the key is not written. */
    INSERT_SLOT_CLAIMED,
    /** Insert: key and value are persisted; the slot still reads INSERT. */
    INSERT_ITEM_PERSISTED,
    /** Insert: the fingerprint and value offset are published but not yet persisted. */
    INSERT_PUBLISHED,
    /** Insert: the published slot is persisted; duplicate resolution has not run. */
    INSERT_PERSISTED,
    /** Update: the new value is written and persisted in a free block. */
    UPDATE_VALUE_PERSISTED,
    /** Update: the slot's value offset was CASed to the new block, not yet persisted. */
    UPDATE_SWAPPED,
    /** Update: the swap is persisted; the old block is not yet handed to reclamation. */
    UPDATE_PERSISTED,
    /** Delete: the slot was CASed to EMPTY, not yet persisted. */
    DELETE_CLEARED,
    /** Delete: the EMPTY slot is persisted; its value block is not yet handed to reclamation. */
    DELETE_PERSISTED,
    /** A duplicate (a copy that is not the valid item) was cleared and persisted. */
    DUPLICATE_REMOVED,
    /** Reclamation: a value block is about to return to the free space. */
    VALUE_RECLAIMED,
    /** Resize: the new top level is allocated and zeroed; the header does not know it yet. */
    RESIZE_LEVEL_ALLOCATED,
    /** Resize: the header says a resize is in progress. */
    RESIZE_STARTED,
    /** Resize: an item of the bottom level is persisted in an upper level and still in the bottom. */
    RESIZE_ITEM_COPIED,
    /** Resize: that item's bottom slot is cleared and persisted. */
    RESIZE_ITEM_MOVED,
    /** Resize: the bottom level is empty; the header still lists it. */
    RESIZE_REHASHED,
    /** Resize: the header no longer lists the bottom level, whose space joined the value heap. */
    RESIZE_COMMITTED,
    /** Value heap growth: the file was extended; the header does not know the new chunk yet. */
    HEAP_GROWN,
    /** Any header commit: the first copy is persisted, the second not yet written. */
    HEADER_FIRST_COPY_WRITTEN
}
