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
    DELETE;

    private static final OpKind[] VALUES = values();

    public static OpKind ofOrdinal(int ordinal) {
        return VALUES[ordinal];
    }

    /** Whether operations of this kind carry a value. */
    public boolean hasValue() {
        return this == PUT || this == INSERT || this == UPDATE;
    }
}
