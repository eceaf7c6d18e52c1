package org.gphash;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * Many operations of mixed kinds, stored column-wise (kinds, keys back to back, values back to
 * back) so that an engine can hand them to a GPU in one copy. Create one with
 * {@link GPHashIndex#newBatch(int)} so its key and value sizes match the index, fill it, run it
 * with {@link GPHashIndex#execute(Batch)}, and {@link #clear()} it to reuse the memory.
 *
 * <p>Semantics: every operation of a batch is atomic, and the batch as a whole behaves as if its
 * operations ran one after another in <em>some</em> order (with the one exception every engine
 * shares: two inserts of one absent key that race may both report INSERTED; one value survives).
 * Operations on different keys are independent, so only several operations on one key can tell
 * orders apart. The CPU engine runs them in batch order. The GPU engine runs a batch's operations
 * in parallel; with its index mirror (the default where GPU memory allows, see
 * {@link GPHashIndex.Builder#indexMirror}) those on one key take effect in batch order too, except
 * that the operations of a key that must wait for the table to grow run after the rest of the batch;
 * without it, in an order it does not promise. Put operations that must see each other in a given
 * order in successive batches. Not thread-safe: one batch per thread.
 */
public final class Batch {

    private final int keySize;
    private final int valueSize;
    private byte[] kinds;
    private byte[] keys;
    private byte[] values;
    private int size;

    /**
     * A batch for an index of these key and value sizes; {@link GPHashIndex#newBatch(int)} is the
     * usual way. For engines and tools that work below the index.
     */
    public static Batch create(int keySize, int valueSize, int expectedOperations) {
        return new Batch(keySize, valueSize, expectedOperations);
    }

    Batch(int keySize, int valueSize, int expectedOperations) {
        this.keySize = keySize;
        this.valueSize = valueSize;
        int n = Math.max(1, expectedOperations);
        this.kinds = new byte[n];
        this.keys = new byte[n * keySize];
        this.values = new byte[n * valueSize];
    }

    public Batch get(byte[] key) {
        return add(OpKind.GET, key, null);
    }

    public Batch put(byte[] key, byte[] value) {
        return add(OpKind.PUT, key, value);
    }

    public Batch insert(byte[] key, byte[] value) {
        return add(OpKind.INSERT, key, value);
    }

    public Batch update(byte[] key, byte[] value) {
        return add(OpKind.UPDATE, key, value);
    }

    public Batch delete(byte[] key) {
        return add(OpKind.DELETE, key, null);
    }

    /** Reads the current value and replaces it with {@code value} in one step ({@link OpKind#READ_MODIFY_WRITE}). */
    public Batch readModifyWrite(byte[] key, byte[] value) {
        return add(OpKind.READ_MODIFY_WRITE, key, value);
    }

    public Batch readModifyWrite(long key, byte[] value) {
        return add(OpKind.READ_MODIFY_WRITE, LongKeys.encode(key, keySize), value);
    }

    public Batch get(long key) {
        return add(OpKind.GET, LongKeys.encode(key, keySize), null);
    }

    public Batch put(long key, byte[] value) {
        return add(OpKind.PUT, LongKeys.encode(key, keySize), value);
    }

    public Batch insert(long key, byte[] value) {
        return add(OpKind.INSERT, LongKeys.encode(key, keySize), value);
    }

    public Batch update(long key, byte[] value) {
        return add(OpKind.UPDATE, LongKeys.encode(key, keySize), value);
    }

    public Batch delete(long key) {
        return add(OpKind.DELETE, LongKeys.encode(key, keySize), null);
    }

    /** Appends an operation; {@code value} is ignored for GET and DELETE. */
    public Batch add(OpKind kind, byte[] key, byte[] value) {
        Arguments.checkKey(key, keySize);
        if (kind.hasValue()) {
            Arguments.checkValue(value, valueSize);
        }
        ensureCapacity(size + 1);
        kinds[size] = (byte) kind.ordinal();
        System.arraycopy(key, 0, keys, size * keySize, keySize);
        if (kind.hasValue()) {
            System.arraycopy(value, 0, values, size * valueSize, valueSize);
        }
        size++;
        return this;
    }

    private void ensureCapacity(int n) {
        if (n > kinds.length) {
            int cap = Math.max(n, kinds.length * 2);
            kinds = Arrays.copyOf(kinds, cap);
            keys = Arrays.copyOf(keys, cap * keySize);
            values = Arrays.copyOf(values, cap * valueSize);
        }
    }

    public int size() {
        return size;
    }

    public OpKind kind(int i) {
        checkIndex(i);
        return OpKind.ofOrdinal(kinds[i]);
    }

    /** Key {@code i} as a new array. */
    public byte[] key(int i) {
        checkIndex(i);
        return Arrays.copyOfRange(keys, i * keySize, (i + 1) * keySize);
    }

    /** All keys, back to back ({@code size() * keySize} bytes), without copying. */
    public MemorySegment keys() {
        return MemorySegment.ofArray(keys).asSlice(0, (long) size * keySize);
    }

    /** All values, back to back; entries of GET and DELETE are zero. */
    public MemorySegment values() {
        return MemorySegment.ofArray(values).asSlice(0, (long) size * valueSize);
    }

    /** Operation kinds as ordinals of {@link OpKind}. */
    public MemorySegment kinds() {
        return MemorySegment.ofArray(kinds).asSlice(0, size);
    }

    public int keySize() {
        return keySize;
    }

    public int valueSize() {
        return valueSize;
    }

    /** Forgets all operations, keeping the memory. */
    public void clear() {
        Arrays.fill(values, 0, size * valueSize, (byte) 0);
        size = 0;
    }

    private void checkIndex(int i) {
        if (i < 0 || i >= size) {
            throw new IndexOutOfBoundsException("operation " + i + " of a batch of " + size);
        }
    }
}
