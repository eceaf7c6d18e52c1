package org.gphash.spi;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.Durability;
import org.gphash.EntryChunk;
import org.gphash.Geometry;
import org.gphash.IndexStats;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.RecoveryReport;

/**
 * What a backend implements. The API's {@code GPHashIndex} checks arguments and converts types, then calls
 * one of these. Keys are segments of exactly the pool's key size; values too have the pool's value
 * size, except on an engine whose {@link #valueLengths} holds (a format 3 pool on the CPU engine, or on
 * the GPU engine over its index mirror),
 * whose single calls take values of 0 to the value size bytes, each segment's size its length, and
 * whose reads say each value's length ({@link #read}). Batches and entry scans carry values of the
 * value size.
 */
public interface Engine extends AutoCloseable {

    /** {@return the pool's geometry, key and value sizes included} */
    Geometry geometry();

    /**
     * Looks {@code key} up, copying its value into {@code valueOut} when found.
     *
     * @param key      the key
     * @param valueOut where the value goes
     * @return FOUND or NOT_FOUND
     */
    Outcome get(MemorySegment key, MemorySegment valueOut);

    /**
     * Whether this engine's single calls take and return values of any length up to the pool's value
     * size (a format 3 pool on the CPU engine, or on the GPU engine over its index mirror); false: every
     * value has the value size. A wrapper
     * that does not pass lengths through (a journal, a coalescer) leaves it false.
     *
     * @return whether values have their own lengths
     */
    default boolean valueLengths() {
        return false;
    }

    /**
     * Looks {@code key} up, copying its value into the first bytes of {@code valueOut} (at least the
     * pool's value size) when found, and says how long the value is.
     *
     * @param key      the key
     * @param valueOut where the value goes
     * @return the value's length in bytes, or -1 when the key is absent
     */
    default int read(MemorySegment key, MemorySegment valueOut) {
        return get(key, valueOut) == Outcome.FOUND ? geometry().valueSize() : -1;
    }

    /**
     * Inserts or replaces.
     *
     * @param key   the key
     * @param value the value
     * @return INSERTED or UPDATED
     */
    Outcome put(MemorySegment key, MemorySegment value);

    /**
     * Inserts if absent.
     *
     * @param key   the key
     * @param value the value
     * @return INSERTED or EXISTS
     */
    Outcome insert(MemorySegment key, MemorySegment value);

    /**
     * Replaces if present.
     *
     * @param key   the key
     * @param value the new value
     * @return UPDATED or NOT_FOUND
     */
    Outcome update(MemorySegment key, MemorySegment value);

    /**
     * Removes.
     *
     * @param key the key
     * @return DELETED or NOT_FOUND
     */
    Outcome delete(MemorySegment key);

    /**
     * Replaces the value of {@code key} with {@code value} only if it is now {@code expected}, as one
     * atomic step against every other writer of the pool (issue 28).
     *
     * @param key      the key
     * @param expected the value the key must have
     * @param value    the new value
     * @return UPDATED if replaced; EXISTS if present with another value; NOT_FOUND if absent
     */
    Outcome compareAndSet(MemorySegment key, MemorySegment expected, MemorySegment value);

    /**
     * Removes {@code key} only if its value is now {@code expected}, atomically as {@link #compareAndSet}.
     *
     * @param key      the key
     * @param expected the value the key must have
     * @return DELETED if removed; EXISTS if present with another value; NOT_FOUND if absent
     */
    Outcome compareAndDelete(MemorySegment key, MemorySegment expected);

    /**
     * One single write of {@code kind} by the method above that runs it: for a wrapper that handles
     * every kind of single write alike (a switch, not a lambda: a call allocates nothing).
     *
     * @param kind     the write: put, insert, update, delete, compare-and-set or compare-and-delete
     * @param key      the key
     * @param value    the new value, for the kinds that write one (else ignored)
     * @param expected the value compared, for the conditional kinds (else ignored)
     * @return what the write's own method returns
     * @throws IllegalArgumentException if {@code kind} is not a single write
     */
    default Outcome write(OpKind kind, MemorySegment key, MemorySegment value, MemorySegment expected) {
        return switch (kind) {
            case PUT -> put(key, value);
            case INSERT -> insert(key, value);
            case UPDATE -> update(key, value);
            case DELETE -> delete(key);
            case COMPARE_AND_SET -> compareAndSet(key, expected, value);
            case COMPARE_AND_DELETE -> compareAndDelete(key, expected);
            default -> throw new IllegalArgumentException(kind + " is not a single write");
        };
    }

    /**
     * Runs every operation of {@code batch} in order, writing one result each into {@code result}.
     *
     * @param batch  the operations
     * @param result where their outcomes and values go
     */
    void execute(Batch batch, BatchResult result);

    /**
     * Runs the operations of {@code batch} at the {@code count} positions listed in {@code positions}
     * (4-byte ints in native order, ascending), in that order, each one's outcome (and the value it
     * read) into the same position of {@code result}, which the caller has reset to the batch's size;
     * the result's other positions stay as they are. Returns false, having done nothing, where this
     * engine does not run such a part where it lies.
     *
     * <p>A sharded index runs each shard's part of a caller's batch this way, several shards at once
     * into one result (each writes only its own positions): a GPU shard gathers its operations from the
     * caller's columns and writes its results back, with no copy of the part on the host. Where this
     * returns false the sharded index copies the part out and runs it with {@link #execute}.
     *
     * @param batch     the caller's batch
     * @param result    the caller's result, reset to {@code batch.size()}
     * @param positions where the part's operations lie in {@code batch}
     * @param count     how many positions {@code positions} lists
     * @return whether the part ran (false: nothing was done)
     */
    default boolean executeInPlace(Batch batch, BatchResult result, MemorySegment positions, int count) {
        return false;
    }

    /**
     * Starts {@code batch} and returns, where the engine can run it while its caller goes on (the
     * GPU engine, for small batches of gets: several such batches in flight); otherwise runs it
     * like {@link #execute} and returns {@link SubmittedBatch#DONE}. Either way the batch takes
     * effect, and its operations are acknowledged, before anything submitted or called after it: a
     * later call on the engine that writes, from any thread, first waits for the batches submitted
     * before it (gets may run beside them: they change nothing).
     * The coalescer submits its next batch while the last one runs.
     *
     * @param batch  the operations; untouched until the returned batch is awaited
     * @param result where their outcomes and values go once awaited
     * @return the batch in flight, or {@link SubmittedBatch#DONE}
     */
    default SubmittedBatch submit(Batch batch, BatchResult result) {
        execute(batch, result);
        return SubmittedBatch.DONE;
    }

    /**
     * Runs a get at once, alongside other threads' calls, where the engine can do so now (the GPU
     * engine: a read of the mapped pool on the calling thread while no batch runs); returns null,
     * having done nothing, where it cannot. The coalescer tries this before queueing a synchronous
     * get for a batch: a get that runs at once never waits for a batch to fill or for the batch
     * before it. Engines whose every call already runs at once leave it returning null.
     *
     * @param key      the key
     * @param valueOut where a found value is copied, or null
     * @return FOUND or NOT_FOUND, or null when the get did not run
     */
    default Outcome getAlongside(MemorySegment key, MemorySegment valueOut) {
        return null;
    }

    /**
     * What only the GPU engine offers ({@code GPHashIndex.gpu()}): the engine itself where
     * it implements {@link org.gphash.GpuFeatures}, a sharded index's view over its GPU shards, or
     * empty.
     *
     * @return the GPU features, or empty
     */
    default Optional<org.gphash.GpuFeatures> gpuFeatures() {
        return this instanceof org.gphash.GpuFeatures g ? Optional.of(g) : Optional.empty();
    }

    /** {@return the index's figures} */
    IndexStats stats();

    /**
     * Each shard's figures, in shard order: a sharded index's ({@link org.gphash.Placement}); one
     * element, {@link #stats()}, for an engine over one pool.
     *
     * @return the figures per shard
     */
    default List<IndexStats> shardStats() {
        return List.of(stats());
    }

    /**
     * The pool's identity (the random number its header got at create), which a sharded index's
     * manifest records for each shard.
     *
     * @return the identity, never 0
     * @throws UnsupportedOperationException for an engine that is not over one pool
     */
    default long poolIdentity() {
        throw new UnsupportedOperationException(this + " is not over one pool");
    }

    /**
     * Records in the pool's header, in one commit, that it is shard {@code shard} of the {@code shards}
     * of the sharded index {@code indexId}, whose shard function has {@code seed}, at open epoch
     * {@code epoch}; what a sharded index checks on open. Called with no operation running.
     *
     * @param indexId the sharded index's identity (not 0)
     * @param seed    the shard function's seed
     * @param shard   this pool's shard number
     * @param shards  the shard count
     * @param epoch   the index's open epoch
     * @throws UnsupportedOperationException for an engine that is not over one pool
     */
    default void commitShardMembership(long indexId, long seed, int shard, int shards, long epoch) {
        throw new UnsupportedOperationException(this + " is not over one pool");
    }

    /**
     * A scan of the live entries from the start, for {@link #readEntries}: weakly consistent, like
     * {@code ConcurrentHashMap}'s iterators (every key present for the whole scan is read at least once).
     *
     * @return where the new scan stands
     */
    ScanState startScan();

    /**
     * Fills {@code chunk} with the next live entries from where {@code state} stands;
     * {@code state.done()} once every entry is read.
     *
     * @param state where the scan stands, made by this engine's {@link #startScan()}; advanced past what was read
     * @param chunk filled with the entries read
     * @throws IllegalArgumentException if {@code state} was made by another engine
     */
    void readEntries(ScanState state, EntryChunk chunk);

    /**
     * A consistent copy of the pool at {@code target} (which must not exist), taken at an operation
     * boundary while the pool stays open: operations wait for the copy, then go on.
     *
     * @param target where the copy goes
     */
    void snapshot(Path target);

    /** {@return what recovery found and did when the pool was opened} */
    RecoveryReport lastRecovery();

    /**
     * Loads the engine's bucket cache now (GPU engine with BktCache); with {@code wait} false the
     * load runs while later batches go on.
     *
     * @param wait whether to return only when the load is done
     * @return false for engines without a cache
     */
    default boolean reloadBucketCache(boolean wait) {
        return false;
    }

    /**
     * Whether a batch's operations on one key take effect in batch order (the CPU engine's, and the
     * GPU engine's on its index mirror). The coalescer relies on it to merge one caller's operations
     * on a key into a batch; where it does not hold, it keeps them in separate batches.
     *
     * @return true unless the engine runs a batch's operations on one key in an order it does not promise
     */
    default boolean ordersOperationsOnAKey() {
        return true;
    }

    /**
     * Whether the engine runs single calls on the calling thread at about a host operation's cost
     * (the GPU engine, which runs them on the mapped pool between its batches): a coalescer in front
     * then passes single calls straight through and merges only callers' batches.
     *
     * @return false unless single calls cost no more run alone than merged
     */
    default boolean runsSingleCallsInPlace() {
        return false;
    }

    /**
     * Whether the engine would now run {@code batch} on the calling thread at about a host operation's
     * cost per operation (the GPU engine's host route, chosen by measured cost): a coalescer in front
     * then lets the caller run it, beside other threads' such batches, where merged with them it would
     * run on the one dispatcher thread, one batch after another. Asked only where
     * {@link #runsSingleCallsInPlace} is true.
     *
     * @param batch a caller's batch, about to be merged or run
     * @return false unless merging {@code batch} with other callers' work would buy nothing now
     */
    default boolean runsBatchInPlace(Batch batch) {
        return false;
    }

    /**
     * A front that merged a caller's batch of {@code operations} with other callers' work (a
     * coalescer) says how long the caller waited for it, merging, copies and queueing included: an
     * engine that chooses where batches run by measured cost (the GPU engine, between the host and the
     * GPU) counts it as what such a batch cost on the way it went, which the engine alone sees only
     * as part of a larger batch.
     *
     * @param operations the caller's batch's operations
     * @param writes     whether the batch writes
     * @param nanos      how long its caller waited
     */
    default void callerWaited(int operations, boolean writes, long nanos) {
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
