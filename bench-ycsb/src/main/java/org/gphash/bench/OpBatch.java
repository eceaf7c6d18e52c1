package org.gphash.bench;

import org.gphash.cli.ValueCodec;

import org.gphash.OpKind;

/**
 * One batch of a stream in a system-neutral form: kinds, keys back to back, values back to back
 * (as GPHash's own {@link org.gphash.Batch} and a GPU copy lay them out). Filled by the shared
 * benchmark code, then handed to a {@link StoreUnderTest}, so that every system receives the same
 * bytes. Reused from batch to batch by one thread.
 */
public final class OpBatch {

    private final int keySize;
    private final int valueSize;
    private final KeyCodec keyCodec;
    private final ValueCodec valueCodec;
    byte[] kinds;
    byte[] keys;
    byte[] values;
    /** Key ids, for verifying reads (values embed their key id); -1 for raw keys. */
    long[] ids;
    private int size;

    public OpBatch(int keySize, int valueSize, int capacity) {
        this.keySize = keySize;
        this.valueSize = valueSize;
        this.keyCodec = new KeyCodec(keySize);
        this.valueCodec = valueSize >= ValueCodec.MIN_VALUE_SIZE ? new ValueCodec(valueSize) : null;
        this.kinds = new byte[capacity];
        this.keys = new byte[capacity * keySize];
        this.values = new byte[capacity * valueSize];
        this.ids = new long[capacity];
    }

    /** Fills the batch with operations {@code from .. to-1} of {@code stream}. */
    public void fill(OpStream stream, int from, int to) {
        size = 0;
        byte[] value = new byte[valueSize];
        for (int i = from; i < to; i++) {
            OpKind kind = stream.kind(i);
            long id = stream.id(i);
            if (kind.hasValue()) {
                valueCodec.encode(id, stream.version(i), value);
            }
            add(kind, id, value);
        }
    }

    /** Appends an operation with its key made from {@code id}; {@code value} is ignored unless the kind has one. */
    public void add(OpKind kind, long id, byte[] value) {
        ensureRoom();
        int i = size;
        kinds[i] = (byte) kind.ordinal();
        ids[i] = id;
        keyCodec.encode(id, keys, i * keySize);
        if (kind.hasValue()) {
            System.arraycopy(value, 0, values, i * valueSize, valueSize);
        }
        size++;
    }

    /** Appends an operation whose key bytes are given (trace replay). */
    public void addRaw(OpKind kind, byte[] key, int keyOffset, byte[] value, int valueOffset) {
        ensureRoom();
        int i = size;
        kinds[i] = (byte) kind.ordinal();
        ids[i] = -1;
        System.arraycopy(key, keyOffset, keys, i * keySize, keySize);
        if (kind.hasValue()) {
            System.arraycopy(value, valueOffset, values, i * valueSize, valueSize);
        }
        size++;
    }

    /** Grows the arrays (doubling) when full: trace batches can be larger than the first guess. */
    private void ensureRoom() {
        if (size == kinds.length) {
            int cap = Math.max(16, kinds.length * 2);
            kinds = java.util.Arrays.copyOf(kinds, cap);
            keys = java.util.Arrays.copyOf(keys, cap * keySize);
            values = java.util.Arrays.copyOf(values, cap * valueSize);
            ids = java.util.Arrays.copyOf(ids, cap);
        }
    }

    public void clear() {
        size = 0;
    }

    public int size() {
        return size;
    }

    public int capacity() {
        return kinds.length;
    }

    public OpKind kind(int i) {
        return OpKind.ofOrdinal(kinds[i]);
    }

    public int keySize() {
        return keySize;
    }

    public int valueSize() {
        return valueSize;
    }

    /** Copies key {@code i} into {@code out}. */
    public void key(int i, byte[] out) {
        System.arraycopy(keys, i * keySize, out, 0, keySize);
    }

    /** Copies value {@code i} into {@code out}. */
    public void value(int i, byte[] out) {
        System.arraycopy(values, i * valueSize, out, 0, valueSize);
    }

    public long id(int i) {
        return ids[i];
    }

    /** The raw arrays, for stores that read them in place (offset {@code i * keySize} etc.). */
    public byte[] kindBytes() {
        return kinds;
    }

    public byte[] keyBytes() {
        return keys;
    }

    public byte[] valueBytes() {
        return values;
    }
}
