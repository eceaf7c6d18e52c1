package org.gphash.persistence;

import java.lang.foreign.MemorySegment;

import org.gphash.PersistenceMode;

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

    /**
     * Makes every range of {@code ranges} durable before returning: one persist phase of a batch.
     * The default persists the one range that covers them all, which for msync is one system call
     * (the kernel writes back only the dirty pages in it); libpmem flushes each range and drains once.
     */
    default void persistAll(MemorySegment mapping, PersistRanges ranges) {
        if (!ranges.isEmpty()) {
            persist(mapping, ranges.coveringOffset(), ranges.coveringLength());
        }
    }

    /**
     * The size (and alignment) of a write the medium never tears at a power failure: 512 for a disk
     * behind msync (a sector), 8 for persistent memory (an aligned word), 4096 on tmpfs (a page;
     * nothing survives a power failure there anyway). Two stores inside one such unit reach the
     * medium together, so they need no persist between them.
     */
    default int atomicWriteUnit() {
        return 512;
    }

    /** {@return which mechanism is in use} */
    PersistenceMode mode();
}
