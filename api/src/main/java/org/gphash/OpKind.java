package org.gphash;

/** The kinds of operation a {@link Batch} can hold. */
public enum OpKind {
    /** Read the value of a key. */
    GET,
    /** Insert or replace (upsert). */
    PUT,
    /** Insert only if absent. */
    INSERT,
    /** Replace only if present. */
    UPDATE,
    /** Remove. */
    DELETE,
    /**
     * Read-modify-write: return the current value and replace it with the given one, atomically
     * (one CAS on the meta word, so nothing can slip in between): REPLACED with the previous
     * value in the result, or NOT_FOUND. YCSB's workload F.
     */
    READ_MODIFY_WRITE,
    /**
     * Replace only if the current value equals the operation's expected value
     * ({@link Batch#expectedValues()}): UPDATED, EXISTS (another value) or NOT_FOUND. Atomic against
     * every other writer of the pool, like {@link GPHashIndex#compareAndSet}.
     */
    COMPARE_AND_SET,
    /**
     * Remove only if the current value equals the operation's expected value: DELETED, EXISTS
     * (another value) or NOT_FOUND.
     */
    COMPARE_AND_DELETE;

    private static final OpKind[] VALUES = values();

    /**
     * The kind with this ordinal (as batches store kinds).
     *
     * @param ordinal the ordinal
     * @return the kind
     */
    public static OpKind ofOrdinal(int ordinal) {
        return VALUES[ordinal];
    }

    /** {@return whether operations of this kind carry a value} */
    public boolean hasValue() {
        return this == PUT || this == INSERT || this == UPDATE || this == READ_MODIFY_WRITE || this == COMPARE_AND_SET;
    }

    /** {@return whether operations of this kind carry an expected value, and act only if it matches} */
    public boolean isConditional() {
        return this == COMPARE_AND_SET || this == COMPARE_AND_DELETE;
    }
}
