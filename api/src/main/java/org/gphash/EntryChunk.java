package org.gphash;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;

/**
 * A reusable buffer of up to {@link #capacity()} entries (key, value) read from a pool, column-wise
 * like a {@link Batch}: what a {@link GPHashIndex#cursor() cursor} pulls from the engine, one large
 * chunk at a time, so that the engine holds no lock while the caller looks at the entries.
 */
public final class EntryChunk {

    private final int keySize;
    private final int valueSize;
    private final byte[] keys;
    private final byte[] values;
    /** Each entry's value length: the value size, or less in a pool of values of any length (format 3). */
    private final int[] lengths;
    private int size;

    /**
     * A chunk for up to {@code capacity} entries.
     *
     * @param keySize   bytes per key
     * @param valueSize bytes per value
     * @param capacity  entries it holds at most
     */
    public EntryChunk(int keySize, int valueSize, int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("an entry chunk holds at least one entry, asked for " + capacity);
        }
        Batch.checkSize(capacity, keySize, valueSize);
        this.keySize = keySize;
        this.valueSize = valueSize;
        this.keys = new byte[capacity * keySize];
        this.values = new byte[capacity * valueSize];
        this.lengths = new int[capacity];
    }

    /** {@return the entries it holds at most} */
    public int capacity() {
        return keys.length / keySize;
    }

    /** {@return the entries it holds} */
    public int size() {
        return size;
    }

    /** {@return whether it holds its capacity} */
    public boolean full() {
        return size == capacity();
    }

    /** Empties the chunk (for engines, before they fill it). */
    public void clear() {
        size = 0;
    }

    /**
     * Appends an entry: {@code keySize} bytes at {@code keyAt} and {@code valueSize} at {@code valueAt} of {@code pool}.
     *
     * @param pool    the mapped pool
     * @param keyAt   the key's offset in it
     * @param valueAt the value's offset in it
     */
    public void add(MemorySegment pool, long keyAt, long valueAt) {
        add(pool, keyAt, valueAt, valueSize);
    }

    /**
     * Appends an entry whose value has {@code valueLength} bytes (at most the value size; the rest of
     * its place in {@link #values()} is zeroed).
     *
     * @param pool        the mapped pool
     * @param keyAt       the key's offset in it
     * @param valueAt     the value's offset in it
     * @param valueLength the value's length
     */
    public void add(MemorySegment pool, long keyAt, long valueAt, int valueLength) {
        if (valueLength < 0 || valueLength > valueSize) {
            throw new IllegalArgumentException("a value of " + valueLength + " bytes in a chunk of values up to " + valueSize);
        }
        MemorySegment.copy(pool, ValueLayout.JAVA_BYTE, keyAt, keys, size * keySize, keySize);
        int at = size * valueSize;
        MemorySegment.copy(pool, ValueLayout.JAVA_BYTE, valueAt, values, at, valueLength);
        Arrays.fill(values, at + valueLength, at + valueSize, (byte) 0);
        lengths[size] = valueLength;
        size++;
    }

    /**
     * The length of entry {@code i}'s value: the value size, or less in a pool of values of any length.
     *
     * @param i the entry's position
     * @return its value's length in bytes
     */
    public int valueLength(int i) {
        check(i);
        return lengths[i];
    }

    /**
     * The key of entry {@code i}.
     *
     * @param i the entry
     * @return a copy of its key
     */
    public byte[] key(int i) {
        check(i);
        return Arrays.copyOfRange(keys, i * keySize, (i + 1) * keySize);
    }

    /**
     * The key of an 8-byte-key pool as a {@code long} (little-endian, see {@link LongKeys}).
     *
     * @param i the entry
     * @return its key
     */
    public long longKey(int i) {
        check(i);
        return LongKeys.decode(keys, i * keySize, keySize);
    }

    /**
     * The value of entry {@code i}.
     *
     * @param i the entry
     * @return a copy of its value
     */
    public byte[] value(int i) {
        check(i);
        return Arrays.copyOfRange(values, i * valueSize, i * valueSize + lengths[i]);
    }

    /** {@return the keys, {@code keySize} bytes each, without copying} */
    public MemorySegment keys() {
        return MemorySegment.ofArray(keys).asSlice(0, (long) size * keySize);
    }

    /** {@return the values, {@code valueSize} bytes each (a shorter value's first {@link #valueLength} bytes, then zeros), without copying} */
    public MemorySegment values() {
        return MemorySegment.ofArray(values).asSlice(0, (long) size * valueSize);
    }

    private void check(int i) {
        if (i < 0 || i >= size) {
            throw new IndexOutOfBoundsException("entry " + i + " of " + size);
        }
    }
}
