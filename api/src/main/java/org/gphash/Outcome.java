package org.gphash;

/**
 * What one operation did. Each outcome's code is the status byte the engines write into a
 * {@link BatchResult}: the CPU engine's {@code org.gphash.table.OpStatus} and the GPU kernels' codes
 * are the same numbers (OutcomeCodesTest and SharedConstantsTest check both), written here as
 * numbers so that the API does not depend on the engines' package.
 */
public enum Outcome {
    /**
     * The operation did not run and changed nothing: its batch stopped first, with the exception
     * that says why (for example {@link PoolFullException}). The other operations' outcomes stand.
     */
    NOT_APPLIED((byte) 0),
    /** A get found the key. */
    FOUND((byte) 1),
    /** A get, update or delete did not find the key. */
    NOT_FOUND((byte) 2),
    /** An insert or put added the key. */
    INSERTED((byte) 3),
    /** An update or put replaced the key's value. */
    UPDATED((byte) 4),
    /** An insert found the key already present and changed nothing. */
    EXISTS((byte) 5),
    /** A delete removed the key. */
    DELETED((byte) 6),
    /** A read-modify-write found the key: the result holds the previous value, the new one is stored. */
    REPLACED((byte) 7);

    private static final Outcome[] BY_CODE = new Outcome[8];

    static {
        for (Outcome o : values()) {
            BY_CODE[o.code] = o;
        }
    }

    private final byte code;

    Outcome(byte code) {
        this.code = code;
    }

    /** {@return the status byte engines write into a {@link BatchResult}} */
    public byte code() {
        return code;
    }

    /**
     * The outcome an engine's status byte stands for.
     *
     * @param code a status byte ({@link #code()})
     * @return the outcome
     */
    public static Outcome ofCode(int code) {
        Outcome o = code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
        if (o == null) {
            throw new IllegalArgumentException("no outcome has code " + code);
        }
        return o;
    }
}
