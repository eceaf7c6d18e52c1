package org.gphash;

import java.lang.foreign.MemorySegment;

import org.gphash.index.Geometry;

/**
 * What a backend implements. {@link GPHashIndex} checks arguments and converts types, then calls
 * one of these. Keys and values are segments of exactly the pool's key and value size.
 */
public interface Engine extends AutoCloseable {

    /** The pool's geometry, key and value sizes included. */
    Geometry geometry();

    Outcome get(MemorySegment key, MemorySegment valueOut);

    Outcome put(MemorySegment key, MemorySegment value);

    Outcome insert(MemorySegment key, MemorySegment value);

    Outcome update(MemorySegment key, MemorySegment value);

    Outcome delete(MemorySegment key);

    /** Runs every operation of {@code batch} in order, writing one result each into {@code result}. */
    void execute(Batch batch, BatchResult result);

    IndexStats stats();

    /**
     * Fills {@code chunk} with the next live entries from where {@code state} stands (see
     * {@link org.gphash.index.EntryScan}); {@code state.done()} once every level is read.
     */
    void readEntries(org.gphash.index.EntryScan.State state, EntryChunk chunk);

    /**
     * A consistent copy of the pool at {@code target} (which must not exist), taken at an operation
     * boundary while the pool stays open: operations wait for the copy, then go on.
     */
    void snapshot(java.nio.file.Path target);

    RecoveryReport lastRecovery();

    /**
     * Loads the engine's bucket cache now (GPU engine with BktCache); with {@code wait} false the
     * load runs while later batches go on. Returns false for engines without a cache.
     */
    default boolean reloadBucketCache(boolean wait) {
        return false;
    }

    /** Drains operations, marks a clean shutdown, syncs and releases the pool. */
    @Override
    void close();

    /**
     * Makes every operation acknowledged before the call durable ({@link Durability#ON_CLOSE_OR_SYNC}
     * needs it; in the other modes they are durable already). Operations wait while it runs.
     */
    default void sync() {
    }

    /**
     * Releases the pool without a clean shutdown and without persisting anything more, as a crash
     * would: for crash tests. The engine is unusable afterwards.
     */
    void abandon();
}
