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

    /** {@return the current key (a copy)} */
    public byte[] key() {
        return chunk.key(at);
    }

    /** {@return the key of an 8-byte-key pool as a {@code long}} */
    public long longKey() {
        return chunk.longKey(at);
    }

    /** {@return the current value (a copy)} */
    public byte[] value() {
        return chunk.value(at);
    }

    /** {@return the current key without copying ({@code keySize} bytes, valid until {@link #next()})} */
    public MemorySegment keySegment() {
        long n = chunk.keys().byteSize() / chunk.size();
        return chunk.keys().asSlice(at * n, n);
    }

    /** {@return the current value without copying ({@code valueSize} bytes, valid until {@link #next()})} */
    public MemorySegment valueSegment() {
        long n = chunk.values().byteSize() / chunk.size();
        return chunk.values().asSlice(at * n, n);
    }

    /** Nothing to release today; a cursor is closeable so that one that holds resources later fits. */
    @Override
    public void close() {
    }
}
