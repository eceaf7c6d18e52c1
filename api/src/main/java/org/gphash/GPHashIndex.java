package org.gphash;

import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

import org.gphash.bktcache.BktCacheConfig;
import org.gphash.error.PoolExistsException;
import org.gphash.error.PoolFormatException;
import org.gphash.spi.CrashHook;
import org.gphash.spi.Engine;
import org.gphash.spi.FrontEnd;
import org.gphash.spi.JournalFactory;

/**
 * A persistent GPHash index in one pool file: the embedded API.
 *
 * <pre>{@code
 * try (GPHashIndex index = GPHashIndex.builder(Path.of("/dev/shm/users.pool"))
 *         .keySize(8).valueSize(128).create()) {
 *     index.put(42L, value);
 *     byte[] v = index.get(42L);
 * }
 * }</pre>
 *
 * <p>Thread-safe: any number of threads may call any operation at once. Keys and values have the
 * fixed sizes of the pool; a key or value of another length is refused with an
 * {@link IllegalArgumentException} naming both sizes. Every write is durable when the call returns.
 * Closing marks a clean shutdown; opening always runs recovery (see {@link #lastRecovery()}).
 *
 * <p>Why this class is long: it is the API's one entry point, and its length is the API, each call a
 * few lines over the engine: every operation with byte[], {@code long} and {@link MemorySegment}
 * keys, synchronously and asynchronously, batches, scans, stats; and the {@link Builder}, which is the
 * configuration (every setting written, defaulted and documented once, as in Caffeine). What runs the
 * calls lives elsewhere: the engines behind {@link Engine}, the front end for many callers behind
 * {@link FrontEnd}, and their assembly from the providers on the path in {@link IndexAssembly}.
 */
public final class GPHashIndex implements AutoCloseable {

    /** What the index calls: the backend's engine, behind the front end when there is one. */
    private final Engine engine;
    /** The coalescer and the stats recorder in front of the backend (gphash-frontend), or null: calls go to the backend. */
    private final FrontEnd front;
    /** The backend's engine itself. */
    private final Engine backend;
    private final GPHashConfig config;
    private final int keySize;
    private final int valueSize;
    /** Whether values have any length up to {@link #valueSize} (a format 3 pool on the CPU engine: {@link Engine#valueLengths}). */
    private final boolean valueLengths;
    private volatile boolean closed;

    private GPHashIndex(IndexAssembly.Parts parts, GPHashConfig config) {
        this.backend = parts.backend();
        this.front = parts.front();
        this.engine = front != null ? front.engine() : backend;
        this.config = config;
        this.keySize = backend.geometry().keySize();
        this.valueSize = backend.geometry().valueSize();
        this.valueLengths = engine.valueLengths();
    }

    /**
     * An index over an engine made elsewhere: for tests of the layers above an engine (the
     * coalescer, the host cache, stats) with an engine that behaves in ways a backend may.
     */
    static GPHashIndex over(Engine backend, GPHashConfig config) {
        return new GPHashIndex(IndexAssembly.over(backend, config, false), config);
    }

    /**
     * An index over an engine that a module outside this one made, such as the cluster client of
     * gphash-cluster ({@code GPHashCluster.client(manifest).connect()}), so that the single calls,
     * batches, typed map and cursors of this class work over it. The index owns the engine and
     * closes it; {@code config} gives the key and value sizes (the engine's, or 0), the front
     * end's settings (coalescing, recorded stats) and the path the index reports.
     *
     * @param engine the engine
     * @param config the index's settings
     * @return the index
     */
    public static GPHashIndex overEngine(Engine engine, GPHashConfig config) {
        Objects.requireNonNull(engine, "engine");
        if (config.keySize() != 0 && engine.geometry().keySize() != config.keySize()
                || config.valueSize() != 0 && engine.geometry().valueSize() != config.valueSize()) {
            throw new PoolConfigMismatchException("the engine holds " + engine.geometry().keySize() + "-byte keys and "
                    + engine.geometry().valueSize() + "-byte values; the configuration says " + config.keySize() + " and "
                    + config.valueSize());
        }
        return new GPHashIndex(IndexAssembly.over(engine, config, false), config);
    }

    /**
     * A builder holding every setting of {@code config}: for applications that keep configurations,
     * and for what only a configuration carries (the SPI's crash hook,
     * {@link GPHashConfig#withCrashHook}). Its {@link Builder#config()} equals {@code config}.
     *
     * @param config the settings
     * @return a builder with them
     */
    public static Builder from(GPHashConfig config) {
        return new Builder(Objects.requireNonNull(config, "config"));
    }

/**
     * The configuration of shard pool {@code path} of the sharded index {@code config} configures: a
     * single pool on {@code device}, sized for its share of the items and of the pool bytes.
     */
    static GPHashConfig shardConfig(GPHashConfig config, Path path, int device) {
        int shards = Math.max(1, config.placement().shards());
        long bytes = config.maxPoolBytes() == Long.MAX_VALUE ? Long.MAX_VALUE : Math.max(1, config.maxPoolBytes() / shards);
        Builder b = new Builder(config, path).initialCapacity(Math.max(1, (config.initialCapacity() + shards - 1) / shards))
                .maxPoolBytes(bytes);
        b.placement = Placement.onDevice(device);
        b.journaling = null;
        return b.config();
    }

    /**
     * A builder for the index at {@code path}; finish with {@link Builder#create()}, {@link Builder#open()}
     * or {@link Builder#openOrCreate()}.
     *
     * @param path the pool file
     * @return a builder with the defaults
     */
    public static Builder builder(Path path) {
        return new Builder(path);
    }

    // ------------------------------------------------------------------ byte[] keys

    /**
     * The value of {@code key}, or null if absent.
     *
     * @param key the key, of the index's key size
     * @return a new array holding the value, or null
     */
    public byte[] get(byte[] key) {
        Arguments.checkKey(key, keySize);
        if (!valueLengths) {
            byte[] out = new byte[valueSize];
            return live().read(MemorySegment.ofArray(key), MemorySegment.ofArray(out)) < 0 ? null : out;
        }
        // Values of any length: read into this thread's buffer of the value size, return a copy of the
        // value's length (a buffer of the value size each call cost a 4 KiB pool's gets an allocation of 4 KiB).
        byte[] out = readBuffer.get();
        int length = live().read(MemorySegment.ofArray(key), MemorySegment.ofArray(out));
        return length < 0 ? null : Arrays.copyOf(out, length);
    }

    /** Each thread's buffer of the value size for {@link #get(byte[])} of values of any length. */
    private final ThreadLocal<byte[]> readBuffer = ThreadLocal.withInitial(() -> new byte[valueSize()]);

    /**
     * Inserts or replaces.
     *
     * @param key   the key, of the index's key size
     * @param value the value, of the index's value size
     * @return true if the key was new
     */
    public boolean put(byte[] key, byte[] value) {
        Arguments.checkKey(key, keySize);
        Arguments.checkValue(value, valueSize, valueLengths);
        return live().put(MemorySegment.ofArray(key), MemorySegment.ofArray(value)) == Outcome.INSERTED;
    }

    /**
     * Inserts if absent.
     *
     * @param key   the key, of the index's key size
     * @param value the value, of the index's value size
     * @return true if inserted; false (changing nothing) if the key exists
     */
    public boolean insert(byte[] key, byte[] value) {
        Arguments.checkKey(key, keySize);
        Arguments.checkValue(value, valueSize, valueLengths);
        return live().insert(MemorySegment.ofArray(key), MemorySegment.ofArray(value)) == Outcome.INSERTED;
    }

    /**
     * Replaces if present.
     *
     * @param key   the key, of the index's key size
     * @param value the new value, of the index's value size
     * @return true if replaced; false if the key is absent
     */
    public boolean update(byte[] key, byte[] value) {
        Arguments.checkKey(key, keySize);
        Arguments.checkValue(value, valueSize, valueLengths);
        return live().update(MemorySegment.ofArray(key), MemorySegment.ofArray(value)) == Outcome.UPDATED;
    }

    /**
     * Removes.
     *
     * @param key the key, of the index's key size
     * @return true if removed; false if the key was absent
     */
    public boolean delete(byte[] key) {
        Arguments.checkKey(key, keySize);
        return live().delete(MemorySegment.ofArray(key)) == Outcome.DELETED;
    }

    /**
     * Replaces the value of {@code key} with {@code value} only if it is now {@code expected}: one
     * atomic step against every other writer of the pool (other threads, other maps over this index,
     * batches), on either engine.
     *
     * @param key      the key, of the index's key size
     * @param expected the value it must have, of the index's value size
     * @param value    the new value, of the index's value size
     * @return true if replaced; false if the key was absent or had another value
     */
    public boolean compareAndSet(byte[] key, byte[] expected, byte[] value) {
        Arguments.checkKey(key, keySize);
        Arguments.checkValue(expected, valueSize, valueLengths);
        Arguments.checkValue(value, valueSize, valueLengths);
        return live().compareAndSet(MemorySegment.ofArray(key), MemorySegment.ofArray(expected), MemorySegment.ofArray(value))
                == Outcome.UPDATED;
    }

    /**
     * Removes {@code key} only if its value is now {@code expected}, atomically as
     * {@link #compareAndSet(byte[], byte[], byte[])}.
     *
     * @param key      the key, of the index's key size
     * @param expected the value it must have, of the index's value size
     * @return true if removed; false if the key was absent or had another value
     */
    public boolean compareAndDelete(byte[] key, byte[] expected) {
        Arguments.checkKey(key, keySize);
        Arguments.checkValue(expected, valueSize, valueLengths);
        return live().compareAndDelete(MemorySegment.ofArray(key), MemorySegment.ofArray(expected)) == Outcome.DELETED;
    }

    /**
     * As {@link #compareAndSet(byte[], byte[], byte[])}, for an index of 8-byte keys.
     *
     * @param key      the key
     * @param expected the value it must have
     * @param value    the new value
     * @return true if replaced
     */
    public boolean compareAndSet(long key, byte[] expected, byte[] value) {
        return compareAndSet(LongKeys.encode(key, keySize), expected, value);
    }

    /**
     * As {@link #compareAndDelete(byte[], byte[])}, for an index of 8-byte keys.
     *
     * @param key      the key
     * @param expected the value it must have
     * @return true if removed
     */
    public boolean compareAndDelete(long key, byte[] expected) {
        return compareAndDelete(LongKeys.encode(key, keySize), expected);
    }

    /**
     * Whether {@code key} is present.
     *
     * @param key the key, of the index's key size
     * @return true if present
     */
    public boolean containsKey(byte[] key) {
        return get(key) != null;
    }

    /**
     * Whether {@code key} (an 8-byte key, little-endian) is present.
     *
     * @param key the key
     * @return true if present
     */
    public boolean containsKey(long key) {
        return containsKey(LongKeys.encode(key, keySize));
    }

    /**
     * Whether {@code key} is present.
     *
     * @param key the key: a segment of the index's key size
     * @return true if present
     */
    public boolean containsKey(MemorySegment key) {
        Arguments.checkKey(key, keySize);
        return live().read(key, MemorySegment.ofArray(new byte[valueSize])) >= 0;
    }

    // ------------------------------------------------------------------ long keys (keySize 8)

    /**
     * As {@link #get(byte[])}, for an index of 8-byte keys ({@code key} little-endian).
     *
     * @param key the key
     * @return a new array holding the value, or null
     */
    public byte[] get(long key) {
        return get(LongKeys.encode(key, keySize));
    }

    /**
     * As {@link #put(byte[], byte[])}, for an index of 8-byte keys.
     *
     * @param key   the key
     * @param value the value, of the index's value size
     * @return true if the key was new
     */
    public boolean put(long key, byte[] value) {
        return put(LongKeys.encode(key, keySize), value);
    }

    /**
     * As {@link #insert(byte[], byte[])}, for an index of 8-byte keys.
     *
     * @param key   the key
     * @param value the value, of the index's value size
     * @return true if inserted; false if the key exists
     */
    public boolean insert(long key, byte[] value) {
        return insert(LongKeys.encode(key, keySize), value);
    }

    /**
     * As {@link #update(byte[], byte[])}, for an index of 8-byte keys.
     *
     * @param key   the key
     * @param value the new value, of the index's value size
     * @return true if replaced; false if the key is absent
     */
    public boolean update(long key, byte[] value) {
        return update(LongKeys.encode(key, keySize), value);
    }

    /**
     * As {@link #delete(byte[])}, for an index of 8-byte keys.
     *
     * @param key the key
     * @return true if removed; false if the key was absent
     */
    public boolean delete(long key) {
        return delete(LongKeys.encode(key, keySize));
    }

    // ------------------------------------------------------------------ zero-copy segments

    /**
     * Copies the value of {@code key} into {@code valueOut}.
     *
     * @param key      the key: a segment of the index's key size
     * @param valueOut where the value goes: a segment of the index's value size (a shorter value, in
     *                 an index of values of any length, is followed by zeros: {@link #read} says its length)
     * @return true if found; false if absent ({@code valueOut} untouched)
     */
    public boolean get(MemorySegment key, MemorySegment valueOut) {
        return read(key, valueOut) >= 0;
    }

    /**
     * Copies the value of {@code key} into the first bytes of {@code valueOut} and says how long it is:
     * the index's value size, or, in an index of values of any length ({@link #valueLengths()}), 0
     * to the value size (the rest of {@code valueOut} zeroed).
     *
     * @param key      the key: a segment of the index's key size
     * @param valueOut where the value goes: a segment of the index's value size
     * @return the value's length in bytes; -1 if absent ({@code valueOut} untouched)
     */
    public int read(MemorySegment key, MemorySegment valueOut) {
        Arguments.checkKey(key, keySize);
        Arguments.checkValue(valueOut, valueSize, false, "output value segment");
        int length = live().read(key, valueOut);
        if (length >= 0 && length < valueSize) {
            valueOut.asSlice(length).fill((byte) 0);
        }
        return length;
    }

    /**
     * {@return whether values have any length from 0 to {@link #valueSize()} bytes} (a pool of format 3
     * on the CPU backend, or on the GPU backend over its index mirror: single calls, batches and the
     * typed map); false: every value has the value size.
     * Batches and cursors carry values of the value size, a shorter one's length beside it
     * ({@link BatchResult#valueLength}, {@link EntryChunk#valueLength}).
     */
    public boolean valueLengths() {
        return valueLengths;
    }

    /**
     * As {@link #put(byte[], byte[])}, reading key and value from segments (no copy on the CPU engine).
     *
     * @param key   a segment of the index's key size
     * @param value a segment of the index's value size
     * @return true if the key was new
     */
    public boolean put(MemorySegment key, MemorySegment value) {
        Arguments.checkKey(key, keySize);
        Arguments.checkValue(value, valueSize, valueLengths, "value");
        return live().put(key, value) == Outcome.INSERTED;
    }

    /**
     * As {@link #insert(byte[], byte[])}, from segments.
     *
     * @param key   a segment of the index's key size
     * @param value a segment of the index's value size
     * @return true if inserted; false if the key exists
     */
    public boolean insert(MemorySegment key, MemorySegment value) {
        Arguments.checkKey(key, keySize);
        Arguments.checkValue(value, valueSize, valueLengths, "value");
        return live().insert(key, value) == Outcome.INSERTED;
    }

    /**
     * As {@link #update(byte[], byte[])}, from segments.
     *
     * @param key   a segment of the index's key size
     * @param value a segment of the index's value size
     * @return true if replaced; false if the key is absent
     */
    public boolean update(MemorySegment key, MemorySegment value) {
        Arguments.checkKey(key, keySize);
        Arguments.checkValue(value, valueSize, valueLengths, "value");
        return live().update(key, value) == Outcome.UPDATED;
    }

    /**
     * As {@link #delete(byte[])}, from a segment.
     *
     * @param key a segment of the index's key size
     * @return true if removed; false if the key was absent
     */
    public boolean delete(MemorySegment key) {
        Arguments.checkKey(key, keySize);
        return live().delete(key) == Outcome.DELETED;
    }

    // ------------------------------------------------------------------ batches

    /**
     * An empty batch sized for this index.
     *
     * @param expectedOperations operations to make room for at first (the batch grows beyond)
     * @return an empty batch of this index's key and value sizes (values of any length up to the value
     *         size where the index's values have any length: {@link #valueLengths()})
     */
    public Batch newBatch(int expectedOperations) {
        return new Batch(keySize, valueSize, expectedOperations, valueLengths);
    }

    /**
     * Runs every operation of {@code batch} in order; one result per operation.
     *
     * @param batch operations of this index's key and value sizes
     * @return their outcomes and the values read, in batch order
     */
    public BatchResult execute(Batch batch) {
        BatchResult result = BatchResult.create(valueSize, batch.size(), batch.valuesPacked());
        execute(batch, result);
        return result;
    }

    /**
     * As {@link #execute(Batch)}, reusing {@code result}'s memory.
     *
     * @param batch  operations of this index's key and value sizes
     * @param result where outcomes and values go (resized as needed)
     */
    public void execute(Batch batch, BatchResult result) {
        Objects.requireNonNull(batch, "batch");
        if (batch.keySize() != keySize || batch.valueSize() != valueSize) {
            throw new IllegalArgumentException("batch was made for keys of " + batch.keySize() + " and values of "
                    + batch.valueSize() + " bytes; this pool has " + keySize + " and " + valueSize);
        }
        if (batch.valuesPacked() && !valueLengths) {
            throw new IllegalArgumentException("batch holds values of any length, which this index does not take (its "
                    + "values have the value size; values of any length are a format 3 pool's on the CPU backend): make "
                    + "batches with the index's newBatch");
        }
        batch.checkKinds();
        result.reset(batch);
        live().execute(batch, result);
    }

    // ------------------------------------------------------------------ reading everything back

    /** {@return the number of items (what {@code stats().size()} says)} */
    public long size() {
        return live().stats().size();
    }

    /**
     * A cursor over the live entries (see {@link Cursor}: weakly consistent, pulled from the engine
     * in chunks of 4096, no lock held between them).
     *
     * @return a cursor; close it when done
     */
    public Cursor cursor() {
        return new Cursor(live(), keySize, valueSize);
    }

    /**
     * Calls {@code action} with every live entry's key and value (copies), as {@link #cursor()} walks them.
     *
     * @param action called once per live entry with copies of its key and value
     */
    public void forEach(BiConsumer<byte[], byte[]> action) {
        Objects.requireNonNull(action, "action");
        try (Cursor c = cursor()) {
            while (c.next()) {
                action.accept(c.key(), c.value());
            }
        }
    }

    /**
     * A consistent copy of the pool at {@code target} (which must not exist) while it stays open:
     * operations wait while it is copied (the GPU engine copies between batches), then go on. The
     * copy is fsynced before it gets its name, and opens like the original (as after a crash, with
     * nothing to repair). {@code gphash snapshot} does the same for a closed pool.
     *
     * @param target where the copy goes; must not exist
     */
    public void snapshot(Path target) {
        Objects.requireNonNull(target, "target");
        live().snapshot(target);
    }

    /**
     * Makes every operation acknowledged before this call durable: what {@link Durability#ON_CLOSE_OR_SYNC}
     * promises at each sync. Operations wait while it runs (one msync of the pool). In the other
     * modes acknowledged operations are durable already and this only flushes again.
     */
    public void sync() {
        live().sync();
    }

    /**
     * Writes a checkpoint of a journaled index ({@link Builder#journal}) now, and returns when it is
     * complete and durable; the journal before it is then dropped. Writers go on while it runs.
     * Checkpoints also run on their own ({@link Journaling#checkpointEvery}).
     *
     * @return the journal sequence number the checkpoint is consistent as of
     * @throws IllegalStateException if the index has no journal
     */
    public long checkpoint() {
        if (!(backend instanceof JournalFactory.Checkpointing c)) {
            throw new IllegalStateException("index " + config.path() + " has no journal to checkpoint: open it with "
                    + "builder.journal(dir)");
        }
        live();
        return c.checkpoint();
    }

    // ------------------------------------------------------------------ the rest

    /** {@return what the index holds and how its pool is laid out: items, levels, heap, file size, engine} */
    public IndexStats stats() {
        return live().stats();
    }

    /**
     * The figures of each shard of a sharded index ({@link Builder#shards(int)}), in shard order;
     * for an index of one pool, {@link #stats()} alone. {@link #stats()} is their total.
     *
     * @return the figures per shard
     */
    public List<IndexStats> shardStats() {
        live();
        return backend.shardStats();
    }

    /** {@return what recovery found and did when this pool was opened (or created)} */
    public RecoveryReport lastRecovery() {
        return live().lastRecovery();
    }

    /**
     * Loads the GPU engine's BktCache now rather than at its next period; with {@code wait} false it
     * runs while later batches go on.
     *
     * @param wait whether to return only when the load is done
     * @return false where there is no cache (CPU engine, or disabled)
     */
    public boolean reloadBucketCache(boolean wait) {
        return engine.reloadBucketCache(wait);
    }

    /**
     * What only the GPU engine offers: device-resident batches and BktCache's control and figures,
     * with no CUDA type in any signature. Asking for it turns the host read cache off (batches in
     * GPU memory write the pool without passing the cache).
     *
     * @return the GPU engine's features, or empty for the CPU engine
     */
    public Optional<GpuFeatures> gpu() {
        return engine().gpuFeatures();
    }

    /**
     * The engine behind this index (the service-provider interface, for tools and tests that work
     * below the index; applications want {@link #gpu()}). Asking for it turns the host read cache off
     * (writes through the engine would bypass it).
     *
     * @return the engine
     */
    public Engine engine() {
        live();
        return front != null ? front.backend() : backend;
    }

    // ------------------------------------------------------------------ asynchronous single operations

    /**
     * The value of {@code key}, or null, when the operation has run. With coalescing (see
     * {@link Coalescing}) operations issued meanwhile share a batch and complete together; without
     * it the operation runs now and the future is complete when this returns. A caller's operations
     * take effect in the order it issued them.
     *
     * @param key the key, of the index's key size
     * @return the value (a new array) or null, when the operation has run
     */
    public CompletableFuture<byte[]> getAsync(byte[] key) {
        Arguments.checkKey(key, keySize);
        live();
        if (front != null && front.coalesces()) {
            return front.getAsync(MemorySegment.ofArray(key));
        }
        return run(() -> get(key));
    }

    /**
     * As {@link #put(byte[], byte[])}, asynchronously (see {@link #getAsync(byte[])}): true if inserted.
     *
     * @param key   the key, of the index's key size
     * @param value the value, of the index's value size
     * @return true if the key was new, when the operation has run
     */
    public CompletableFuture<Boolean> putAsync(byte[] key, byte[] value) {
        return writeAsync(OpKind.PUT, key, value, Outcome.INSERTED);
    }

    /**
     * As {@link #insert(byte[], byte[])}, asynchronously: true if inserted, false if the key existed.
     *
     * @param key   the key, of the index's key size
     * @param value the value, of the index's value size
     * @return true if inserted, when the operation has run
     */
    public CompletableFuture<Boolean> insertAsync(byte[] key, byte[] value) {
        return writeAsync(OpKind.INSERT, key, value, Outcome.INSERTED);
    }

    /**
     * As {@link #update(byte[], byte[])}, asynchronously: true if updated, false if absent.
     *
     * @param key   the key, of the index's key size
     * @param value the new value, of the index's value size
     * @return true if replaced, when the operation has run
     */
    public CompletableFuture<Boolean> updateAsync(byte[] key, byte[] value) {
        return writeAsync(OpKind.UPDATE, key, value, Outcome.UPDATED);
    }

    /**
     * As {@link #delete(byte[])}, asynchronously: true if deleted, false if absent.
     *
     * @param key the key, of the index's key size
     * @return true if removed, when the operation has run
     */
    public CompletableFuture<Boolean> deleteAsync(byte[] key) {
        return writeAsync(OpKind.DELETE, key, null, Outcome.DELETED);
    }

    /**
     * As {@link #getAsync(byte[])}, for an index of 8-byte keys.
     *
     * @param key the key
     * @return the value or null, when the operation has run
     */
    public CompletableFuture<byte[]> getAsync(long key) {
        return getAsync(LongKeys.encode(key, keySize));
    }

    /**
     * As {@link #putAsync(byte[], byte[])}, for an index of 8-byte keys.
     *
     * @param key   the key
     * @param value the value, of the index's value size
     * @return true if the key was new, when the operation has run
     */
    public CompletableFuture<Boolean> putAsync(long key, byte[] value) {
        return putAsync(LongKeys.encode(key, keySize), value);
    }

    /**
     * As {@link #deleteAsync(byte[])}, for an index of 8-byte keys.
     *
     * @param key the key
     * @return true if removed, when the operation has run
     */
    public CompletableFuture<Boolean> deleteAsync(long key) {
        return deleteAsync(LongKeys.encode(key, keySize));
    }

    private CompletableFuture<Boolean> writeAsync(OpKind kind, byte[] key, byte[] value,
                                                                       Outcome success) {
        Arguments.checkKey(key, keySize);
        if (kind.hasValue()) {
            Arguments.checkValue(value, valueSize, valueLengths);
        }
        live();
        if (front != null && front.coalesces()) {
            return front.submit(kind, MemorySegment.ofArray(key), kind.hasValue() ? MemorySegment.ofArray(value) : null)
                    .thenApply(o -> o == success);
        }
        Engine e = live();
        MemorySegment k = MemorySegment.ofArray(key);
        return run(() -> switch (kind) {
            case PUT -> e.put(k, MemorySegment.ofArray(value)) == success;
            case INSERT -> e.insert(k, MemorySegment.ofArray(value)) == success;
            case UPDATE -> e.update(k, MemorySegment.ofArray(value)) == success;
            default -> e.delete(k) == success;
        });
    }

    private static <T> CompletableFuture<T> run(Supplier<T> op) {
        try {
            return CompletableFuture.completedFuture(op.get());
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * Counts and latency percentiles of the calls made so far, if the index was built with
     * {@link Builder#recordStats()}; {@link OperationStats#NONE} otherwise.
     *
     * @return the figures
     */
    public OperationStats operationStats() {
        return front == null ? OperationStats.NONE : front.operationStats();
    }

    /** {@return the coalescer's figures (batches run, operations merged), if single calls are coalesced} */
    public Optional<CoalescerStats> coalescerStats() {
        live();
        return front == null ? Optional.empty() : front.coalescerStats();
    }

    /** {@return bytes per key} */
    public int keySize() {
        return keySize;
    }

    /** {@return bytes per value} */
    public int valueSize() {
        return valueSize;
    }

    /** {@return the configuration this index was opened with, geometry filled in from the pool} */
    public GPHashConfig config() {
        return config;
    }

    /** {@return the pool file} */
    public Path path() {
        return config.path();
    }

    private Engine live() {
        if (closed) {
            throw new IndexClosedException(config.path());
        }
        return engine;
    }

    /** Drains running operations, marks a clean shutdown and releases the pool. Idempotent. */
    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            engine.close();
        }
    }

    /**
     * Configures and opens an index. Unset geometry means: the defaults (2 levels, 2 hashes,
     * 8 slots, 8-byte keys, 128-byte values) for {@link #create()}, the pool's own for
     * {@link #open()}.
     */
    public static final class Builder {
        private final Path path;
        private int keySize;
        private int valueSize;
        private int levels;
        private int hashes;
        private int slotsPerBucket;
        private long initialCapacity = GPHashConfig.DEFAULT_INITIAL_CAPACITY;
        private long maxPoolBytes = Long.MAX_VALUE;
        private Backend backend = Backend.CPU;
        private boolean jdkPersistence;
        private OptionalLong seed = OptionalLong.empty();
        private CrashHook crashHook = CrashHook.NONE;
        private BktCacheConfig bucketCache = BktCacheConfig.defaults();
        private boolean bucketCacheSet;
        private IndexMirror indexMirror = IndexMirror.AUTO;
        private boolean repairBeyondCrash;
        private boolean followSymlinks;
        private boolean itemChecksums;
        /** The format a new pool takes; 0: the default. */
        private int poolFormat;
        private boolean verifyOnOpen;
        private Durability durability = Durability.PER_BATCH;
        private Coalescing coalescing = Coalescing.AUTO;
        private GpuTuning gpuTuning;
        private Placement placement = Placement.SINGLE_POOL;
        /** The journal and checkpoints, or null: the pool alone holds the data. */
        private Journaling journaling;
        /** Whether devices(...) was called: a new index is then sharded, one shard per GPU unless shards(n) says otherwise. */
        private boolean devicesSet;
        /** Whether calls are counted and timed (recordStats()). */
        private boolean recordStats;

        private Builder(Path path) {
            this.path = Objects.requireNonNull(path, "path");
        }

        private Builder(GPHashConfig c) {
            this(c, c.path());
        }

        private Builder(GPHashConfig c, Path path) {
            this(path);
            keySize = c.keySize();
            valueSize = c.valueSize();
            levels = c.levels();
            hashes = c.hashes();
            slotsPerBucket = c.slotsPerBucket();
            initialCapacity = c.initialCapacity();
            maxPoolBytes = c.maxPoolBytes();
            backend = c.backend();
            jdkPersistence = c.jdkPersistence();
            seed = c.seed();
            crashHook = c.crashHook();
            bucketCache = c.bucketCache();  // checked against the backend when c was made
            indexMirror = c.indexMirror();
            repairBeyondCrash = c.repairBeyondCrash();
            followSymlinks = c.followSymlinks();
            itemChecksums = c.itemChecksums();
            poolFormat = c.poolFormat();
            verifyOnOpen = c.verifyOnOpen();
            durability = c.durability();
            coalescing = c.coalescing();
            gpuTuning = c.gpuTuning();
            placement = c.placement();
            journaling = c.journaling();
        }

        /**
         * Key size in bytes (1..256); 8 for {@code long} keys.
         *
         * @param bytes bytes per key
         * @return this builder
         */
        public Builder keySize(int bytes) {
            this.keySize = positive(bytes, "keySize");
            return this;
        }

        /**
         * Value size in bytes; default 128.
         *
         * @param bytes bytes per value
         * @return this builder
         */
        public Builder valueSize(int bytes) {
            this.valueSize = positive(bytes, "valueSize");
            return this;
        }

        /**
         * Levels of buckets addressed together (default 2). levels x hashes x slots must be at most 32.
         *
         * @param n levels
         * @return this builder
         */
        public Builder levels(int n) {
            this.levels = positive(n, "levels");
            return this;
        }

        /**
         * Hash functions, i.e. candidate top-level buckets per key (default 2).
         *
         * @param n hash functions
         * @return this builder
         */
        public Builder hashes(int n) {
            this.hashes = positive(n, "hashes");
            return this;
        }

        /**
         * Slots per bucket (default 8).
         *
         * @param n slots per bucket
         * @return this builder
         */
        public Builder slotsPerBucket(int n) {
            this.slotsPerBucket = positive(n, "slotsPerBucket");
            return this;
        }

        /**
         * Items the new pool should hold before its first resize (default 65536).
         *
         * @param items items before the first resize
         * @return this builder
         */
        public Builder initialCapacity(long items) {
            if (items < 1) {
                throw new IllegalArgumentException("initialCapacity must be at least 1, got " + items);
            }
            this.initialCapacity = items;
            return this;
        }

        /**
         * The pool file never grows beyond this; an operation that would need more fails with {@link PoolFullException}.
         *
         * @param bytes the most bytes the pool file may take (0: no limit)
         * @return this builder
         */
        public Builder maxPoolBytes(long bytes) {
            if (bytes < 1) {
                throw new IllegalArgumentException("maxPoolBytes must be positive, got " + bytes);
            }
            this.maxPoolBytes = bytes;
            return this;
        }

        /**
         * Makes {@link #create()} create a sharded index: a directory at the path holding {@code n}
         * shard pools and a manifest, each key in one shard by a hash of its own, each shard a whole
         * pool that the CPU engine and the recovery tool open on their own (see {@link Placement}).
         * On the GPU engine each shard runs on its own GPU ({@link #devices(int...)}). {@link #open()}
         * finds a sharded index by its manifest without this setting; with it, the count must match.
         *
         * @param n shards, 1 to {@value Placement#MAX_SHARDS}
         * @return this builder
         */
        public Builder shards(int n) {
            if (n < 1 || n > Placement.MAX_SHARDS) {
                throw new IllegalArgumentException("shards must be 1 to " + Placement.MAX_SHARDS + ", got " + n);
            }
            placement = new Placement(n, placement.devices());
            return this;
        }

        /**
         * The GPUs the GPU engine runs the index on: shard {@code i} on {@code ordinals[i % ordinals.length]}.
         * With no ordinals, every GPU the driver sees. Unless {@link #shards(int)} says otherwise, a new
         * index gets one shard per GPU named (or seen), so {@code devices()} alone makes an index over
         * every GPU of the machine. Opening a sharded index on fewer GPUs than shards runs several
         * shards per GPU; the CPU engine ignores this.
         *
         * @param ordinals GPU ordinals as the CUDA driver numbers them, each at most once
         * @return this builder
         */
        public Builder devices(int... ordinals) {
            List<Integer> list = new ArrayList<>(ordinals.length);
            for (int d : ordinals) {
                list.add(d);
            }
            placement = new Placement(placement.shards(), list);
            devicesSet = true;
            return this;
        }

        /**
         * The engine that runs the index (default {@link Backend#CPU}).
         *
         * @param backend CPU or GPU
         * @return this builder
         */
        public Builder backend(Backend backend) {
            this.backend = Objects.requireNonNull(backend, "backend");
            return this;
        }

        /**
         * Persist through {@code MemorySegment.force()} even where libpmem is available.
         *
         * @param useJdk true to persist with the JDK even where libpmem is present
         * @return this builder
         */
        public Builder jdkPersistence(boolean useJdk) {
            this.jdkPersistence = useJdk;
            return this;
        }

        /**
         * Seed of the hash functions of a new pool (default: random). Stored in the pool.
         *
         * @param seed the seed
         * @return this builder
         */
        public Builder seed(long seed) {
            this.seed = OptionalLong.of(seed);
            return this;
        }

        /**
         * BktCache, the GPU engine's cache of hot buckets (and their values) in GPU memory; default
         * {@link BktCacheConfig#defaults()}: 20% of the buckets, LFU. {@link BktCacheConfig#DISABLED}
         * turns it off. Only the GPU backend has one: asking for an enabled cache with the CPU
         * backend fails at create/open.
         *
         * @param config the cache's settings
         * @return this builder
         */
        public Builder bucketCache(BktCacheConfig config) {
            this.bucketCache = Objects.requireNonNull(config, "bucketCache");
            this.bucketCacheSet = true;
            return this;
        }

        /**
         * Whether the GPU engine copies the table's index into GPU memory (default {@link IndexMirror#AUTO}:
         * when the memory is there). The CPU engine ignores it.
         *
         * @param mode AUTO, REQUIRED or OFF
         * @return this builder
         */
        public Builder indexMirror(IndexMirror mode) {
            this.indexMirror = Objects.requireNonNull(mode, "indexMirror");
            return this;
        }

        /**
         * What open does when recovery finds more damage than a crash can explain (an item whose key
         * does not match its fingerprint, more half-done operations than were in flight): by default
         * it refuses with {@link PoolFormatException} ({@code DAMAGE_BEYOND_CRASH}) and writes
         * nothing; with {@code true} it clears what is broken and reports the counts in
         * {@link #lastRecovery()} ({@code gphash recover --force}). A foreign or stale header is
         * refused either way.
         *
         * @param repair whether to clear damage beyond a crash
         * @return this builder
         */
        public Builder repairBeyondCrash(boolean repair) {
            this.repairBeyondCrash = repair;
            return this;
        }

        /**
         * Whether open follows a symbolic link at the path (default: no, it refuses one). Create never
         * follows one. Whatever this says, open refuses a pool another user owns or that group or
         * others may write.
         *
         * @param follow whether to follow a link
         * @return this builder
         */
        public Builder followSymlinks(boolean follow) {
            this.followSymlinks = follow;
            return this;
        }

        /**
         * Whether a new pool keeps a CRC32C of every item's key and value, checked on every read
         * (default: no). A read whose item fails its checksum throws {@link ItemChecksumException}
         * instead of returning a value the media changed; {@code gphash check --deep} lists them all.
         * Costs 4 bytes per item (in its value block) and a checksum per write and read (measured in
         * docs/PERFORMANCE.md). Fixed at create: open uses the pool's setting. CPU engine only.
         *
         * @param on whether new pools keep item checksums
         * @return this builder
         */
        public Builder itemChecksums(boolean on) {
            this.itemChecksums = on;
            return this;
        }

        /**
         * The format a new pool takes (default: 2). Format 3 (issue 53) frames each value with its
         * length (and, with item checksums, its checksum) in a heap of size classes and keeps the
         * value's class in the slot's meta word: its values have any length from 0 to the value size
         * ({@link GPHashIndex#valueLengths()}), journaled or not, on the CPU engine and on the GPU engine
         * over its index mirror (its device-resident batches take them with a lengths column; where the
         * mirror does not fit the GPU, values have the value size and a shorter one reads back followed by
         * zeros). Fixed at create: open uses the pool's format, and refuses a pool of another one when
         * this is set.
         *
         * @param version 2 or 3
         * @return this builder
         */
        public Builder poolFormat(int version) {
            if (version != 2 && version != 3) {
                throw new IllegalArgumentException("poolFormat must be 2 or 3, got " + version);
            }
            this.poolFormat = version;
            return this;
        }

        /**
         * Whether open scans and judges the whole table even after a clean close (default: no). After
         * a clean close, open trusts the close record (free space and item count) and reads no slot,
         * so it takes milliseconds whatever the pool's size; damage the closed file took since (a
         * flipped bit) is then found by {@code gphash check}, or by a scanning open: this one, any open
         * after a crash, or {@code gphash recover --force}.
         *
         * @param verify whether every open scans the table
         * @return this builder
         */
        public Builder verifyOnOpen(boolean verify) {
            this.verifyOnOpen = verify;
            return this;
        }

        /**
         * A journal and checkpoints in a directory on a durable file system, so that the index
         * survives a power cut although its pool does not (a GPU pool on tmpfs or hugetlbfs): every
         * acknowledged write is in the journal before its call returns, and an open that finds the
         * pool gone, or made before the machine's last boot, rebuilds it from the newest checkpoint and
         * the journal. The pool itself then flushes nothing ({@link Durability} is not used). Needs
         * gphash-journal on the class or module path. See {@link Journaling} for the choices.
         *
         * @param journaling the journal's directory and settings ({@link Journaling#in(Path)} for the defaults)
         * @return this builder
         */
        public Builder journal(Journaling journaling) {
            this.journaling = Objects.requireNonNull(journaling, "journaling");
            return this;
        }

        /**
         * A journal with the defaults in {@code directory}: {@code journal(Journaling.in(directory))}.
         *
         * @param directory the journal's directory
         * @return this builder
         */
        public Builder journal(Path directory) {
            return journal(Journaling.in(directory));
        }

        /**
         * When writes become durable (default {@link Durability#PER_BATCH}: a batch when
         * {@code execute} returns, a single operation when it returns). Not stored in the pool: each
         * open chooses. See {@link Durability} for what each mode promises after a crash.
         *
         * @param mode when writes become durable
         * @return this builder
         */
        public Builder durability(Durability mode) {
            this.durability = Objects.requireNonNull(mode, "durability");
            return this;
        }

        /**
         * Whether single-key calls and their asynchronous forms are merged into batches (default
         * {@link Coalescing#AUTO}: for the GPU backend, whose callers' batches it merges while single
         * calls run on the host, and where merged writes share a flush to a disk, the CPU engine's group
         * commit). See {@link Coalescing}.
         *
         * @param coalescing the coalescer's settings
         * @return this builder
         */
        public Builder coalescing(Coalescing coalescing) {
            this.coalescing = Objects.requireNonNull(coalescing, "coalescing");
            return this;
        }

        /**
         * The GPU engine's tuning: the sizes at which it sends a batch down one route or another, and
         * its diagnostics ({@link GpuTuning}). By default {@link GpuTuning#fromSystemProperty()}: the
         * measured defaults, changed by {@code -Dgphash.gpuTuning} where set. The CPU engine ignores it.
         *
         * @param tuning the tuning
         * @return this builder
         */
        public Builder gpuTuning(GpuTuning tuning) {
            this.gpuTuning = Objects.requireNonNull(tuning, "gpuTuning");
            return this;
        }

        /**
         * The crash hook, told at every persist point: for crash tests and the crash harness only,
         * through {@link GPHashConfig#withCrashHook} (a user's builder has no such setting).
         */
        Builder crashHook(CrashHook hook) {
            this.crashHook = Objects.requireNonNull(hook, "crashHook");
            return this;
        }

        /**
         * Counts every synchronous call and batch and records its latency, for
         * {@link GPHashIndex#operationStats()} (off by default: timing costs two clock reads a call).
         * The recording is gphash-frontend's (org.gphash:gphash-frontend, HdrHistogram), which must be
         * on the class or module path.
         *
         * @return this builder
         * @throws IllegalStateException when gphash-frontend is not on the class or module path (nothing
         *                               is opened or created)
         */
        public Builder recordStats() {
            IndexAssembly.requireFrontEnds("recordStats()");
            this.recordStats = true;
            return this;
        }

        /** {@return the configuration these settings make, checked (what create and open use)} */
        public GPHashConfig config() {
            if (bucketCacheSet && bucketCache.enabled() && backend == Backend.CPU) {
                throw new IllegalArgumentException("bucketCache " + bucketCache + " needs the GPU backend: BktCache "
                        + "lives in GPU memory, and the CPU engine reads the pool directly (use "
                        + "BktCacheConfig.DISABLED or backend(Backend.GPU))");
            }
            return new GPHashConfig(path, keySize, valueSize, levels, hashes, slotsPerBucket, initialCapacity,
                    maxPoolBytes, backend, jdkPersistence, seed, crashHook, bucketCache, indexMirror, repairBeyondCrash,
                    followSymlinks, itemChecksums, poolFormat, verifyOnOpen, durability, coalescing,
                    gpuTuning != null ? gpuTuning : GpuTuning.fromSystemProperty(), placement, journaling);
        }

        /**
         * Creates a new pool file (owner-only); fails if the file exists.
         *
         * @return the open index
         */
        public GPHashIndex create() {
            GPHashConfig c = config();
            if (devicesSet && !placement.sharded() && backend == Backend.GPU) {
                c = from(c).shards(Math.max(1, placement.devices().isEmpty() ? IndexAssembly.visibleDevices(backend)
                        : placement.devices().size())).config();
            }
            return new GPHashIndex(IndexAssembly.create(c, recordStats), c);
        }

        /**
         * Opens an existing pool exclusively and runs recovery.
         *
         * @return the open index
         */
        public GPHashIndex open() {
            GPHashConfig c = config();
            return new GPHashIndex(IndexAssembly.open(c, recordStats), c);
        }

        /**
         * Opens the pool if the file exists, else creates it. When another process creates it first,
         * this opens what that process created (or says it is locked while that process has it open).
         *
         * @return the open index
         */
        public GPHashIndex openOrCreate() {
            if (Files.exists(path, LinkOption.NOFOLLOW_LINKS) || journaling != null && IndexAssembly.hasJournal(config())) {
                return open();  // a journal with the pool gone: open rebuilds it
            }
            try {
                return create();
            } catch (PoolExistsException lostTheRace) {
                return open();
            }
        }

        private static int positive(int n, String name) {
            if (n < 1) {
                throw new IllegalArgumentException(name + " must be positive, got " + n);
            }
            return n;
        }
    }
}
