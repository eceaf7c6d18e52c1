package org.gphash.table;

/**
 * Outcome codes of single operations: the CPU engine's, and the same numbers as the GPU kernels'
 * (SharedConstantsTest) and as {@link org.gphash.Outcome#code()} (OutcomeCodesTest).
 */
public final class OpStatus {
    /** The operation did not run: its batch failed first (see {@code Outcome.NOT_APPLIED}). */
    public static final byte NOT_APPLIED = 0;
    public static final byte FOUND = 1;
    public static final byte NOT_FOUND = 2;
    public static final byte INSERTED = 3;
    public static final byte UPDATED = 4;
    public static final byte EXISTS = 5;
    public static final byte DELETED = 6;
    public static final byte REPLACED = 7;

    // Internal: the attempt must be retried, after a resize or heap growth where named.
    public static final int RETRY = 0;
    public static final int NEED_RESIZE = -1;
    public static final int NEED_HEAP = -2;

    private OpStatus() {
    }
}
