package org.gphash.table;

import org.gphash.persistence.PersistRanges;

/**
 * Where an operation that runs in a batch's phases puts what it would otherwise persist or free at
 * once: the meta-word ranges the batch persists together in its second phase, and the blocks it
 * unlinked, reclaimed only once those meta words are durable. The CPU engine's phased batches
 * implement it; a {@link Probe} without one persists at once.
 */
public interface PersistPhases {

    /** {@return the ranges persisted together in the batch's meta-word phase} */
    PersistRanges metas();

    /** Hands {@code block}, which the operation unlinked, to the batch for reclamation after its meta phase. */
    void retire(long block);
}
