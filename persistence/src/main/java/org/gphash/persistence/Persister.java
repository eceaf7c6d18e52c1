package org.gphash.persistence;

import java.lang.foreign.MemorySegment;

/**
 * Makes a byte range of the mapped pool durable. Every persist point of the engine calls this, so
 * that a test or the crash harness can wrap it (for example to drop what was not persisted at a
 * simulated power failure).
 */
public interface Persister {

    /**
     * Makes {@code [offset, offset + length)} of {@code mapping} durable before returning. Stores to
     * the range that happened before the call are persisted; stores after it may or may not be.
     */
    void persist(MemorySegment mapping, long offset, long length);

    /** Which mechanism is in use. */
    PersistenceMode mode();
}
