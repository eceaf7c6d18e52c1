package org.gphash;

import java.lang.foreign.MemorySegment;

import org.gphash.spi.Engine;
import org.gphash.spi.ScanState;

/**
 * Walks the live entries of an open pool, one at a time, pulling them from the engine in chunks
 * (the engine holds no lock between chunks). Weakly consistent, like {@code ConcurrentHashMap}'s
 * iterators: every key present for the whole walk is returned (a key that a resize moves during the
 * walk may be returned twice); keys written or deleted meanwhile may or may not be. Not thread-safe.
 *
 * <pre>{@code
 * try (Cursor c = index.cursor()) {
 *     while (c.next()) {
 *         use(c.key(), c.value());
 *     }
 * }
 * }</pre>
 */
public final class Cursor implements AutoCloseable {

    /** Entries per pull from the engine. */
    static final int CHUNK = 4096;

    private final Engine engine;
    private final ScanState state;
    private final EntryChunk chunk;
    private int at = -1;

    Cursor(Engine engine, int keySize, int valueSize) {
        this.engine = engine;
        this.state = engine.startScan();
        this.chunk = new EntryChunk(keySize, valueSize, Math.min(CHUNK, Batch.maxOperations(keySize, valueSize)));
    }

    /**
     * Moves to the next entry.
     *
     * @return false when there is none
     */
    public boolean next() {
        if (at + 1 < chunk.size()) {
            at++;
            return true;
        }
        while (!state.done()) {
            engine.readEntries(state, chunk);
            if (chunk.size() > 0) {
                at = 0;
                return true;
            }
        }
        at = chunk.size();
        return false;
    }

    /**
     * {@return the current key (a copy)}
     *
     * @throws IllegalStateException before the first {@link #next()} or after it returned false
     */
    public byte[] key() {
        return chunk.key(current());
    }

    /**
     * {@return the key of an 8-byte-key pool as a {@code long}}
     *
     * @throws IllegalStateException before the first {@link #next()} or after it returned false
     */
    public long longKey() {
        return chunk.longKey(current());
    }

    /**
     * {@return the current value (a copy)}
     *
     * @throws IllegalStateException before the first {@link #next()} or after it returned false
     */
    public byte[] value() {
        return chunk.value(current());
    }

    /**
     * {@return the current key without copying ({@code keySize} bytes, valid until {@link #next()})}
     *
     * @throws IllegalStateException before the first {@link #next()} or after it returned false
     */
    public MemorySegment keySegment() {
        int i = current();
        long n = chunk.keys().byteSize() / chunk.size();
        return chunk.keys().asSlice(i * n, n);
    }

    /**
     * {@return the current value without copying (its length: {@code valueSize} bytes, or fewer in an
     * index of values of any length; valid until {@link #next()})}
     *
     * @throws IllegalStateException before the first {@link #next()} or after it returned false
     */
    public MemorySegment valueSegment() {
        int i = current();
        long n = chunk.values().byteSize() / chunk.size();
        return chunk.values().asSlice(i * n, chunk.valueLength(i));
    }

    /** The current entry's place in the chunk; refused (issue 55: was IndexOutOfBoundsException) where there is none. */
    private int current() {
        if (at < 0 || at >= chunk.size()) {
            throw new IllegalStateException(at < 0 ? "no current entry: call next() first"
                    : "no current entry: next() returned false (the cursor is exhausted)");
        }
        return at;
    }

    /** Nothing to release today; a cursor is closeable so that one that holds resources later fits. */
    @Override
    public void close() {
    }
}
