package org.gphash.error;

import java.nio.file.Path;


/**
 * The file is not a usable pool. Raised by {@code open} before anything is written, so the file is
 * left exactly as it was.
 */
public final class PoolFormatException extends GPHashException {
    private static final long serialVersionUID = 1L;

    /** What is wrong with the file. */
    public enum Reason {
        /** No pool magic number: some other file. */
        NOT_A_POOL,
        /** A pool of a format version this build cannot read. */
        WRONG_VERSION,
        /** Shorter than its header says. */
        TRUNCATED,
        /** Neither header copy has a valid checksum. */
        CHECKSUM_MISMATCH,
        /** Checksums are valid but the contents are impossible (for example offsets outside the file). */
        CORRUPT,
        /** The header does not belong to the body: another pool's, or a stale or misplaced copy. */
        FOREIGN_HEADER,
        /**
         * The table holds more damage than a crash can explain (items whose key does not match their
         * fingerprint, more half-done operations than were in flight): something other than a crash
         * changed the file. {@code gphash recover --force} repairs it by clearing what is broken.
         */
        DAMAGE_BEYOND_CRASH
    }

    /** What is wrong (serialized with the exception; the path is not). */
    private final Reason reason;
    private final transient Path path;

    /**
     * The file is not a usable pool.
     *
     * @param reason what is wrong
     * @param path   the file
     * @param detail what was found
     */
    public PoolFormatException(Reason reason, Path path, String detail) {
        super("pool " + path + ": " + describe(reason) + ": " + detail);
        this.reason = reason;
        this.path = path;
    }

    private static String describe(Reason reason) {
        return switch (reason) {
            case NOT_A_POOL -> "not a gphash pool";
            case WRONG_VERSION -> "unsupported pool format version";
            case TRUNCATED -> "pool file is truncated";
            case CHECKSUM_MISMATCH -> "header checksum mismatch";
            case CORRUPT -> "pool is corrupt";
            case FOREIGN_HEADER -> "the header does not belong to this pool";
            case DAMAGE_BEYOND_CRASH -> "more damage than a crash can explain";
        };
    }

    /** {@return what is wrong} */
    public Reason reason() {
        return reason;
    }

    /** {@return the file} */
    public Path path() {
        return path;
    }
}
