package org.gphash.bench;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;

import org.gphash.Batch;
import org.gphash.OpKind;
import org.gphash.cli.ValueCodec;

/**
 * One batch of a stream in a system-neutral form: kinds, keys back to back, values back to back,
 * held in the columns of an engine {@link Batch} (off-heap), so that the GPHash store runs it as it
 * is, with no copy, and the other systems read the same bytes. Filled column-wise by the shared
 * benchmark code ({@link #fill}: no call or copy per operation beyond writing the operation itself),
 * then handed to a {@link StoreUnderTest}. Reused from batch to batch by one thread. Values of
 * {@link ValueLengths#MIXED} lengths lie packed, each at its {@link #valueOffset}
 * ({@link Batch#valuesPacked()}), and are appended one by one.
 */
public final class OpBatch {

    private static final ValueLayout.OfLong KEY_LONG = ValueLayout.JAVA_LONG_UNALIGNED;

    private final int keySize;
    private final int valueSize;
    private final KeyCodec keyCodec;
    private final ValueCodec valueCodec;
    private final Batch columns;
    /** How long the values {@link #fill} writes are. */
    private final ValueLengths lengths;
    /** Key ids, for verifying reads (values embed their key id); -1 for raw keys. */
    private long[] ids;
    private int size;
    /** Where a packed batch's key and value are made before they are appended. */
    private final MemorySegment keyScratch;
    private final MemorySegment valueScratch;

    public OpBatch(int keySize, int valueSize, int capacity) {
        this(keySize, valueSize, capacity, ValueLengths.FIXED);
    }

    /** A batch whose generated values have the lengths {@code lengths} gives (each beside its place of the value size). */
    public OpBatch(int keySize, int valueSize, int capacity, ValueLengths lengths) {
        this.keySize = keySize;
        this.valueSize = valueSize;
        this.lengths = lengths;
        this.keyCodec = new KeyCodec(keySize);
        this.valueCodec = valueSize >= ValueCodec.MIN_VALUE_SIZE ? new ValueCodec(valueSize) : null;
        this.columns = Batch.create(keySize, valueSize, Math.max(1, capacity), lengths != ValueLengths.FIXED);
        this.ids = new long[Math.max(1, capacity)];
        Arena arena = Arena.ofAuto();
        this.keyScratch = arena.allocate(keySize, 8);
        this.valueScratch = arena.allocate(valueSize, 8);
    }

    /**
     * Fills the batch with operations {@code from .. to-1} of {@code stream}, straight into the
     * columns: a kind byte, the key and, for writes, the value, per operation.
     */
    public void fill(OpStream stream, int from, int to) {
        int n = to - from;
        reserve(n);
        if (columns.valuesPacked()) {
            fillPacked(stream, from, n);
            return;
        }
        columns.setSize(n);
        size = n;
        MemorySegment kinds = columns.kinds();
        MemorySegment keys = columns.keys();
        MemorySegment values = columns.values();
        boolean longKeys = keySize == 8;
        for (int i = 0; i < n; i++) {
            int op = from + i;
            byte kind = stream.kindOrdinal(op);
            long id = stream.id(op);
            kinds.set(ValueLayout.JAVA_BYTE, i, kind);
            ids[i] = id;
            if (longKeys) {
                keys.set(KEY_LONG, (long) i << 3, id);  // KeyCodec's 8-byte form: the id, little-endian
            } else {
                keyCodec.encode(id, keys, (long) i * keySize);
            }
            if (OpKind.ofOrdinal(kind).hasValue()) {
                valueCodec.encode(id, stream.version(op), values, (long) i * valueSize);
            }
        }
    }

    /** {@link #fill} for packed values: each operation made in the scratch segments, then appended at its length. */
    private void fillPacked(OpStream stream, int from, int n) {
        columns.clear();
        size = 0;
        for (int i = 0; i < n; i++) {
            int op = from + i;
            OpKind kind = OpKind.ofOrdinal(stream.kindOrdinal(op));
            long id = stream.id(op);
            ids[i] = id;
            keyCodec.encode(id, keyScratch, 0);
            MemorySegment value = null;
            if (kind.hasValue()) {
                long version = stream.version(op);
                int length = lengths.of(id, version, valueSize);
                valueCodec.encode(id, version, valueScratch, 0, length);
                value = valueScratch.asSlice(0, length);
            }
            columns.add(kind, keyScratch, value);
        }
        size = n;
    }

    /** Appends an operation with its key made from {@code id}; {@code value} is ignored unless the kind has one. */
    public void add(OpKind kind, long id, byte[] value) {
        int i = grow();
        ids[i] = id;
        keyCodec.encode(id, keyScratch, 0);
        append(i, kind, keyScratch, kind.hasValue() ? MemorySegment.ofArray(value) : null);
    }

    /** Appends an operation whose key bytes are given (trace replay). */
    public void addRaw(OpKind kind, byte[] key, int keyOffset, byte[] value, int valueOffset) {
        addRaw(kind, key, keyOffset, value, valueOffset, valueSize);
    }

    /**
     * As {@link #addRaw(OpKind, byte[], int, byte[], int)}, with a value of {@code length} bytes (a batch
     * whose values have lengths of their own, {@link ValueLengths#MIXED}, where it is shorter).
     */
    public void addRaw(OpKind kind, byte[] key, int keyOffset, byte[] value, int valueOffset, int length) {
        int i = grow();
        ids[i] = -1;
        append(i, kind, MemorySegment.ofArray(key).asSlice(keyOffset, keySize),
                kind.hasValue() ? MemorySegment.ofArray(value).asSlice(valueOffset, length) : null);
    }

    /**
     * Operation {@code i}, the one just made room for: in a batch of values of the value size written
     * in place (any kind; a conditional one carries no expected value here, as a trace holds none); in a
     * packed batch appended, a conditional kind with an empty expected value.
     */
    private void append(int i, OpKind kind, MemorySegment key, MemorySegment value) {
        if (!columns.valuesPacked()) {
            columns.setSize(i + 1);
            columns.kinds().set(ValueLayout.JAVA_BYTE, i, (byte) kind.ordinal());
            MemorySegment.copy(key, 0, columns.keys(), (long) i * keySize, keySize);
            if (value != null) {
                if (value.byteSize() != valueSize) {
                    throw new IllegalArgumentException("a value of " + value.byteSize() + " bytes in a batch of "
                            + valueSize + "-byte values");
                }
                MemorySegment.copy(value, 0, columns.values(), (long) i * valueSize, valueSize);
            }
            return;
        }
        switch (kind) {
            case COMPARE_AND_SET -> columns.compareAndSet(key.toArray(ValueLayout.JAVA_BYTE), NO_BYTES,
                    value.toArray(ValueLayout.JAVA_BYTE));
            case COMPARE_AND_DELETE -> columns.compareAndDelete(key.toArray(ValueLayout.JAVA_BYTE), NO_BYTES);
            default -> columns.add(kind, key, value);
        }
    }

    private static final byte[] NO_BYTES = new byte[0];

    /** Appends operation {@code i} of {@code other} (same key and value sizes). */
    public void addFrom(OpBatch other, int i) {
        int j = grow();
        ids[j] = other.ids[i];
        columns.addRange(other.columns, i, i + 1);
    }

    /** Room for one more operation (doubling); its position, which the caller's append then fills. */
    private int grow() {
        int i = size;
        if (i == ids.length) {
            reserve(Math.max(16, 2 * i));
        }
        size = i + 1;
        return i;
    }

    private void reserve(int n) {
        if (n > ids.length) {
            ids = Arrays.copyOf(ids, n);
        }
    }

    public void clear() {
        size = 0;
        columns.clear();
    }

    public int size() {
        return size;
    }

    public int capacity() {
        return ids.length;
    }

    public OpKind kind(int i) {
        return OpKind.ofOrdinal(columns.kinds().get(ValueLayout.JAVA_BYTE, i));
    }

    public int keySize() {
        return keySize;
    }

    public int valueSize() {
        return valueSize;
    }

    /** Copies key {@code i} into {@code out}. */
    public void key(int i, byte[] out) {
        MemorySegment.copy(columns.keys(), ValueLayout.JAVA_BYTE, (long) i * keySize, out, 0, keySize);
    }

    /** The length of value {@code i}: the value size, or its own where lengths are {@link ValueLengths#MIXED}. */
    public int valueLength(int i) {
        return columns.valueLength(i);
    }

    /** How long the values this batch generates are. */
    public ValueLengths lengths() {
        return lengths;
    }

    /** Where value {@code i} starts in {@link #values()}. */
    public long valueOffset(int i) {
        return columns.valueOffset(i);
    }

    /** Copies value {@code i} into {@code out}, at its length. */
    public void value(int i, byte[] out) {
        MemorySegment.copy(columns.values(), ValueLayout.JAVA_BYTE, columns.valueOffset(i), out, 0, columns.valueLength(i));
    }

    public long id(int i) {
        return ids[i];
    }

    /** The kind column (OpKind ordinals), {@code size()} bytes. */
    public MemorySegment kinds() {
        return columns.kinds();
    }

    /** The keys, back to back ({@code size() * keySize} bytes). */
    public MemorySegment keys() {
        return columns.keys();
    }

    /** The values, back to back (each at its {@link #valueOffset}); entries of operations without a value are unspecified. */
    public MemorySegment values() {
        return columns.values();
    }

    /** The columns as an engine batch, run in place by the GPHash store. */
    public Batch engineBatch() {
        return columns;
    }
}
