package org.gphash.cluster;

import org.gphash.OpKind;

/**
 * Which operation kinds carry a value and which an expected value, by ordinal: the client's split
 * and the node's unpacking look them up per operation, where {@code OpKind.ofOrdinal(k).hasValue()}
 * would cost a call and an array copy's worth of checks each.
 */
final class OpKindTables {

    /** By ordinal: whether an operation of the kind carries a value. */
    static final boolean[] HAS_VALUE = new boolean[OpKind.values().length];
    /** By ordinal: whether it carries an expected value (a conditional kind). */
    static final boolean[] CONDITIONAL = new boolean[OpKind.values().length];

    static {
        for (OpKind k : OpKind.values()) {
            HAS_VALUE[k.ordinal()] = k.hasValue();
            CONDITIONAL[k.ordinal()] = k.isConditional();
        }
    }

    private OpKindTables() {
    }
}
