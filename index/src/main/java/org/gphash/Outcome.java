package org.gphash;

import org.gphash.index.OpStatus;

/** What one operation did. */
public enum Outcome {
    /**
     * The operation did not run and changed nothing: its batch stopped first, with the exception
     * that says why (for example {@link PoolFullException}). The other operations' outcomes stand.
     */
    NOT_APPLIED(OpStatus.NOT_APPLIED),
    /** A get found the key. */
    FOUND(OpStatus.FOUND),
    /** A get, update or delete did not find the key. */
    NOT_FOUND(OpStatus.NOT_FOUND),
    /** An insert or put added the key. */
    INSERTED(OpStatus.INSERTED),
    /** An update or put replaced the key's value. */
    UPDATED(OpStatus.UPDATED),
    /** An insert found the key already present and changed nothing. */
    EXISTS(OpStatus.EXISTS),
    /** A delete removed the key. */
    DELETED(OpStatus.DELETED),
    /** A read-modify-write found the key: the result holds the previous value, the new one is stored. */
    REPLACED(OpStatus.REPLACED);

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
