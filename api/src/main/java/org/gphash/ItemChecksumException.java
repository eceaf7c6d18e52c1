package org.gphash;

import org.gphash.error.GPHashException;

/**
 * An item read from a pool with item checksums does not match its checksum: something other than
 * the engine changed the pool's bytes (a flipped bit, a bad sector, a stray write). The value is not
 * returned. {@code gphash check --deep} lists every such item.
 */
public final class ItemChecksumException extends GPHashException {
    private static final long serialVersionUID = 1L;

    /**
     * An item failed its checksum.
     *
     * @param message the pool, the item's slot and what failed
     */
    public ItemChecksumException(String message) {
        super(message);
    }
}
