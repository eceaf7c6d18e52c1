package org.gphash;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Objects;

import org.gphash.spi.HostMemory;
import org.gphash.spi.SegmentBytes;

/**
 * Many operations of mixed kinds, stored column-wise (kinds, keys back to back, values back to
 * back) in off-heap memory, so that an engine can hand them to a GPU in one copy (the GPU engine
 * pins the memory of a batch it runs more than once and copies from it directly). Create one with
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
 *
 * <p>A batch holds at most {@link #maxOperations(int, int)} operations (2^26, fewer where keys or
 * values are so large that a column would pass 2 GiB; packed values, {@link #valuesPacked()}, count
 * by their bytes, at most 2 GiB together): run a full batch and start another.
 *
 * <p>If a batch fails part way (the pool is full, an I/O error), the operations that ran stay
 * applied, the exception says why, and the result says which: each operation that ran has its
 * outcome, the others {@link Outcome#NOT_APPLIED}. The CPU engine stops at the first operation that
 * fails, so those are the batch's tail; the GPU engine runs a batch in parallel, so they may be any.
 *
 * <p>Why this class is long: it is the batch's API, its columns (what engines read in place) and the
 * typed adders for every kind with byte[], {@code long} and segment keys; nothing else.
 */
public final class Batch {

    private final int keySize;
    private final int valueSize;
    /** Kinds, keys and values of up to {@code capacity} operations, each column at a 64-byte boundary. */
    private HostMemory memory;
    private MemorySegment kinds;
    private MemorySegment keys;
    private MemorySegment values;
    private int capacity;
    private int size;
    /** Set by {@link #setSize}: the kind column was written by the caller, so execute checks it. */
    private boolean filledInPlace;
    /**
     * The expected values of conditional operations, {@code capacity} values, in a block of their
     * own made at the first conditional operation (most batches never have one); null before.
     */
    private MemorySegment expected;
    /** Conditional operations among the first {@code size} (counted by add, or by checkKinds). */
    private int conditionals;
    /**
     * Whether values and expected values may have any length up to the value size (a batch of an index
     * whose values do, {@link GPHashIndex#valueLengths()}): then they lie packed, each at its own
     * offset ({@link #valuesPacked()}), in {@code packed} and {@code packedExpected}; else each has a
     * place of the value size in {@code values} and {@code expected}.
     */
    private final boolean valueLengths;
    /** The values of a batch of values of any length, an entry per operation (empty for GET and DELETE); else null. */
    private final PackedValues packed;
    /** Its expected values, entries for the conditional operations only; made at the first. */
    private PackedValues packedExpected;

    /**
     * A batch for an index of these key and value sizes; {@link GPHashIndex#newBatch(int)} is the
     * usual way. For engines and tools that work below the index.
     *
     * @param keySize            bytes per key
     * @param valueSize          bytes per value
     * @param expectedOperations operations to make room for at first (the batch grows beyond)
     * @return an empty batch
     */
    public static Batch create(int keySize, int valueSize, int expectedOperations) {
        return new Batch(keySize, valueSize, expectedOperations);
    }

    /**
     * As {@link #create(int, int, int)}, for an engine whose values may have any length up to the value
     * size where {@code valueLengths} ({@link org.gphash.spi.Engine#valueLengths()}), its values then
     * packed ({@link #valuesPacked()}): what a layer below the index that replays or forwards writes of
     * such an engine builds.
     *
     * @param keySize            bytes per key
     * @param valueSize          bytes per value, the longest a value may be where {@code valueLengths}
     * @param expectedOperations operations to make room for at first (the batch grows beyond)
     * @param valueLengths       whether values may be shorter than the value size
     * @return an empty batch
     */
    public static Batch create(int keySize, int valueSize, int expectedOperations, boolean valueLengths) {
        return new Batch(keySize, valueSize, expectedOperations, valueLengths);
    }

    /**
     * The most operations a batch of these key and value sizes holds.
     *
     * @param keySize   bytes per key
     * @param valueSize bytes per value
     * @return the limit, at most {@link #MAX_OPERATIONS}
     */
    public static int maxOperations(int keySize, int valueSize) {
        int widest = Math.max(1, Math.max(keySize, valueSize));
        return (int) Math.min(MAX_OPERATIONS, (Integer.MAX_VALUE - 16) / widest);
    }

    /** The most operations of any batch, whatever the key and value sizes. */
    public static final int MAX_OPERATIONS = 1 << 26;

    /** {@code n} when a batch or result of these sizes may hold that many operations; else a clear error. */
    static int checkSize(int n, int keySize, int valueSize) {
        int max = maxOperations(keySize, valueSize);
        if (n < 0 || n > max) {
            throw new IllegalArgumentException(n + " operations: a batch of " + keySize + "-byte keys and " + valueSize
                    + "-byte values holds at most " + max + " (run a full batch and start another)");
        }
        return n;
    }

    Batch(int keySize, int valueSize, int expectedOperations) {
        this(keySize, valueSize, expectedOperations, false);
    }

    /** A batch whose values may have any length up to {@code valueSize} where {@code valueLengths}. */
    Batch(int keySize, int valueSize, int expectedOperations, boolean valueLengths) {
        this.keySize = keySize;
        this.valueSize = valueSize;
        this.valueLengths = valueLengths;
        int n = Math.max(1, checkSize(expectedOperations, keySize, valueLengths ? 1 : valueSize));
        this.packed = valueLengths ? PackedValues.withRoomFor(n, n, valueSize) : null;
        allocate(n);
    }

    /**
     * {@return the bytes an operation's value takes in the columns that bound the operations: the
     * value size, or one where values lie packed (their bytes have a bound of their own)}
     */
    private int placeBytes() {
        return packed != null ? 1 : valueSize;
    }

    /**
     * Moves the columns into a new block for {@code n} operations, keeping the operations appended
     * (packed values keep their own block, which grows by itself).
     */
    private void allocate(int n) {
        long keysAt = align(n);
        long valuesAt = keysAt + align((long) n * keySize);
        long valueBytes = packed != null ? 0 : (long) n * valueSize;
        HostMemory m = HostMemory.allocate(valuesAt + valueBytes);
        MemorySegment k = m.segment().asSlice(0, n);
        MemorySegment ks = m.segment().asSlice(keysAt, (long) n * keySize);
        MemorySegment vs = m.segment().asSlice(valuesAt, valueBytes);
        if (size > 0) {
            MemorySegment.copy(kinds, 0, k, 0, size);
            MemorySegment.copy(keys, 0, ks, 0, (long) size * keySize);
            MemorySegment.copy(values, 0, vs, 0, packed != null ? 0 : (long) size * valueSize);
        }
        memory = m;
        kinds = k;
        keys = ks;
        values = vs;
        if (packed != null) {
            packed.ensureOperations(n);
            if (packedExpected != null) {
                packedExpected.ensureOperations(n);
            }
        } else if (expected != null) {
            allocateExpected(n);
        }
        capacity = n;
    }

    /** Moves the expected-value column of a batch of fixed-size values into a block for {@code n} operations, keeping those appended. */
    private void allocateExpected(int n) {
        HostMemory m = HostMemory.allocate(Math.max(1, (long) n * valueSize));
        MemorySegment es = m.segment().asSlice(0, (long) n * valueSize);
        if (expected != null && size > 0) {
            MemorySegment.copy(expected, 0, es, 0, (long) Math.min(size, n) * valueSize);
        }
        expected = es;  // the slice keeps its block alive (HostMemory's automatic arena)
    }

    /** {@code bytes} rounded up to 64, where each column of a batch or result starts. */
    static long align(long bytes) {
        return (bytes + 63) & ~63L;
    }

    /**
     * Appends a get.
     *
     * @param key the key, of the batch's key size
     * @return this batch
     */
    public Batch get(byte[] key) {
        return add(OpKind.GET, key, null);
    }

    /**
     * Appends a put (insert or replace).
     *
     * @param key   the key, of the batch's key size
     * @param value the value, of the batch's value size
     * @return this batch
     */
    public Batch put(byte[] key, byte[] value) {
        return add(OpKind.PUT, key, value);
    }

    /**
     * Appends an insert (only if absent).
     *
     * @param key   the key, of the batch's key size
     * @param value the value, of the batch's value size
     * @return this batch
     */
    public Batch insert(byte[] key, byte[] value) {
        return add(OpKind.INSERT, key, value);
    }

    /**
     * Appends an update (only if present).
     *
     * @param key   the key, of the batch's key size
     * @param value the new value, of the batch's value size
     * @return this batch
     */
    public Batch update(byte[] key, byte[] value) {
        return add(OpKind.UPDATE, key, value);
    }

    /**
     * Appends a delete.
     *
     * @param key the key, of the batch's key size
     * @return this batch
     */
    public Batch delete(byte[] key) {
        return add(OpKind.DELETE, key, null);
    }

    /**
     * Reads the current value and replaces it with {@code value} in one step ({@link OpKind#READ_MODIFY_WRITE}).
     *
     * @param key   the key, of the batch's key size
     * @param value the new value, of the batch's value size
     * @return this batch
     */
    public Batch readModifyWrite(byte[] key, byte[] value) {
        return add(OpKind.READ_MODIFY_WRITE, key, value);
    }

    /**
     * As {@link #readModifyWrite(byte[], byte[])}, for an index of 8-byte keys ({@code key} little-endian).
     *
     * @param key   the key
     * @param value the new value
     * @return this batch
     */
    public Batch readModifyWrite(long key, byte[] value) {
        return add(OpKind.READ_MODIFY_WRITE, LongKeys.encode(key, keySize), value);
    }

    /**
     * Appends a compare-and-set ({@link OpKind#COMPARE_AND_SET}): replaces the value with
     * {@code value} only if it is {@code expected} at that point of the batch. Its outcome is UPDATED,
     * EXISTS (another value) or NOT_FOUND. Atomic against every other writer of the pool.
     *
     * @param key      the key, of the batch's key size
     * @param expected the value the key must have, of the batch's value size
     * @param value    the new value, of the batch's value size
     * @return this batch
     */
    public Batch compareAndSet(byte[] key, byte[] expected, byte[] value) {
        Arguments.checkKey(key, keySize);
        Arguments.checkValue(expected, valueSize, valueLengths);
        Arguments.checkValue(value, valueSize, valueLengths);
        return addConditional(OpKind.COMPARE_AND_SET, MemorySegment.ofArray(key), MemorySegment.ofArray(expected),
                MemorySegment.ofArray(value));
    }

    /**
     * As {@link #compareAndSet(byte[], byte[], byte[])}, for an index of 8-byte keys ({@code key} little-endian).
     *
     * @param key      the key
     * @param expected the value the key must have
     * @param value    the new value
     * @return this batch
     */
    public Batch compareAndSet(long key, byte[] expected, byte[] value) {
        return compareAndSet(LongKeys.encode(key, keySize), expected, value);
    }

    /**
     * Appends a compare-and-delete ({@link OpKind#COMPARE_AND_DELETE}): removes the key only if its
     * value is {@code expected} at that point of the batch. Its outcome is DELETED, EXISTS (another
     * value) or NOT_FOUND.
     *
     * @param key      the key, of the batch's key size
     * @param expected the value the key must have, of the batch's value size
     * @return this batch
     */
    public Batch compareAndDelete(byte[] key, byte[] expected) {
        Arguments.checkKey(key, keySize);
        Arguments.checkValue(expected, valueSize, valueLengths);
        return addConditional(OpKind.COMPARE_AND_DELETE, MemorySegment.ofArray(key), MemorySegment.ofArray(expected),
                null);
    }

    /**
     * As {@link #compareAndDelete(byte[], byte[])}, for an index of 8-byte keys ({@code key} little-endian).
     *
     * @param key      the key
     * @param expected the value the key must have
     * @return this batch
     */
    public Batch compareAndDelete(long key, byte[] expected) {
        return compareAndDelete(LongKeys.encode(key, keySize), expected);
    }

    /**
     * Appends a conditional operation from segments of exactly the key and value size ({@code value}
     * null for COMPARE_AND_DELETE).
     */
    Batch addConditional(OpKind kind, MemorySegment key, MemorySegment expectedValue, MemorySegment value) {
        ensureCapacity(size + 1);
        int length = (int) expectedValue.byteSize();
        if (packed != null) {
            packedExpected().put(size, expectedValue, 0, length);
        } else {
            if (expected == null) {
                allocateExpected(capacity);
            }
            MemorySegment.copy(expectedValue, 0, expected, (long) size * valueSize, length);
        }
        append(kind, key, value);
        conditionals++;
        return this;
    }

    /**
     * Appends a get, for an index of 8-byte keys ({@code key} little-endian).
     *
     * @param key the key
     * @return this batch
     */
    public Batch get(long key) {
        return add(OpKind.GET, LongKeys.encode(key, keySize), null);
    }

    /**
     * Appends a put, for an index of 8-byte keys ({@code key} little-endian).
     *
     * @param key   the key
     * @param value the value
     * @return this batch
     */
    public Batch put(long key, byte[] value) {
        return add(OpKind.PUT, LongKeys.encode(key, keySize), value);
    }

    /**
     * Appends an insert, for an index of 8-byte keys ({@code key} little-endian).
     *
     * @param key   the key
     * @param value the value
     * @return this batch
     */
    public Batch insert(long key, byte[] value) {
        return add(OpKind.INSERT, LongKeys.encode(key, keySize), value);
    }

    /**
     * Appends an update, for an index of 8-byte keys ({@code key} little-endian).
     *
     * @param key   the key
     * @param value the new value
     * @return this batch
     */
    public Batch update(long key, byte[] value) {
        return add(OpKind.UPDATE, LongKeys.encode(key, keySize), value);
    }

    /**
     * Appends a delete, for an index of 8-byte keys ({@code key} little-endian).
     *
     * @param key the key
     * @return this batch
     */
    public Batch delete(long key) {
        return add(OpKind.DELETE, LongKeys.encode(key, keySize), null);
    }

    /**
     * Appends an operation; {@code value} is ignored for GET and DELETE. Conditional kinds carry an
     * expected value as well: append them with {@link #compareAndSet(byte[], byte[], byte[])} and
     * {@link #compareAndDelete(byte[], byte[])}.
     *
     * @param kind  what the operation does, not a conditional kind
     * @param key   the key, of the batch's key size
     * @param value the value, of the batch's value size (null for GET and DELETE)
     * @return this batch
     */
    public Batch add(OpKind kind, byte[] key, byte[] value) {
        if (kind.isConditional()) {
            throw new IllegalArgumentException(kind + " carries an expected value: append it with compareAndSet(key, "
                    + "expected, value) or compareAndDelete(key, expected)");
        }
        Arguments.checkKey(key, keySize);
        if (kind.hasValue()) {
            Arguments.checkValue(value, valueSize, valueLengths);
        }
        return append(kind, MemorySegment.ofArray(key), kind.hasValue() ? MemorySegment.ofArray(value) : null);
    }

    /**
     * Appends an operation from memory segments (copied now), as {@link #add(OpKind, byte[], byte[])}
     * does from arrays: the way for keys and values already off the heap.
     *
     * @param kind  what the operation does, not a conditional kind
     * @param key   the key, a segment of the batch's key size
     * @param value the value, a segment of the batch's value size (null for GET and DELETE)
     * @return this batch
     */
    public Batch add(OpKind kind, MemorySegment key, MemorySegment value) {
        if (kind.isConditional()) {
            throw new IllegalArgumentException(kind + " carries an expected value: append it with compareAndSet(key, "
                    + "expected, value) or compareAndDelete(key, expected)");
        }
        Arguments.checkKey(key, keySize);
        if (kind.hasValue()) {
            Arguments.checkValue(value, valueSize, valueLengths, "value");
        }
        return append(kind, key, value);
    }

    /**
     * Appends an operation from segments of the key size and of the value size, or at most it in a
     * batch of values of any length (checked by the caller; {@code value} unused for GET and DELETE).
     */
    private Batch append(OpKind kind, MemorySegment key, MemorySegment value) {
        ensureCapacity(size + 1);
        kinds.set(ValueLayout.JAVA_BYTE, size, (byte) kind.ordinal());
        MemorySegment.copy(key, 0, keys, (long) size * keySize, keySize);
        if (packed != null) {
            if (kind.hasValue()) {
                packed.put(size, value, 0, (int) value.byteSize());
            } else {
                packed.putEmpty(size);
            }
        } else if (kind.hasValue()) {
            MemorySegment.copy(value, 0, values, (long) size * valueSize, valueSize);
        }
        size++;
        return this;
    }

    /** Expected values a packed column makes room for at first: most batches hold few conditional operations. */
    private static final int EXPECTED_ROOM = 16;

    /** The packed expected values, made at the first conditional operation. */
    private PackedValues packedExpected() {
        if (packedExpected == null) {
            packedExpected = PackedValues.withRoomFor(capacity, EXPECTED_ROOM, valueSize);
        }
        return packedExpected;
    }

    /**
     * Whether the values lie packed, each at its own {@link #valueOffset} with its own
     * {@link #valueLength} (a batch of an index whose values have any length, {@link
     * GPHashIndex#valueLengths()}), rather than each in a place of the value size at {@code i *
     * valueSize()}, every one of the value size (every other batch; what the GPU engine takes).
     *
     * @return whether the value columns are packed
     */
    public boolean valuesPacked() {
        return packed != null;
    }

    /**
     * Where operation {@code i}'s value starts in {@link #values()}: {@code i * valueSize()}, or its
     * own offset where the values lie packed ({@link #valuesPacked()}).
     *
     * @param i the operation's position
     * @return the value's offset in bytes
     */
    public long valueOffset(int i) {
        checkIndex(i);
        return packed != null ? packed.offset(i) : (long) i * valueSize;
    }

    /**
     * The length of operation {@code i}'s value: the value size, or its own length where the values
     * lie packed ({@link #valuesPacked()}; 0 for GET and DELETE there).
     *
     * @param i the operation's position
     * @return the value's length in bytes
     */
    public int valueLength(int i) {
        checkIndex(i);
        return packed != null ? packed.length(i) : valueSize;
    }

    /**
     * Where conditional operation {@code i}'s expected value starts in {@link #expectedValues()}
     * ({@link #valueOffset}'s twin; meaningless for other operations).
     *
     * @param i the operation's position
     * @return the expected value's offset in bytes
     */
    public long expectedOffset(int i) {
        checkIndex(i);
        return packed != null ? packedExpected().offset(i) : (long) i * valueSize;
    }

    /**
     * The length of conditional operation {@code i}'s expected value ({@link #valueLength}'s twin).
     *
     * @param i the operation's position
     * @return the expected value's length in bytes
     */
    public int expectedLength(int i) {
        checkIndex(i);
        return packed != null ? packedExpected().length(i) : valueSize;
    }

    /**
     * Appends every operation of {@code other}, in its order (conditional ones with their expected
     * values): how the coalescer merges several callers' batches into one.
     *
     * @param other a batch of the same key and value sizes
     * @return this batch
     */
    public Batch addAll(Batch other) {
        return addRange(other, 0, other.size);
    }

    /**
     * Appends operations {@code from} (inclusive) to {@code to} (exclusive) of {@code other}, in its
     * order (conditional ones with their expected values): how an engine runs part of a caller's
     * batch as a batch of its own.
     *
     * @param other a batch of the same key and value sizes
     * @param from  the first operation appended
     * @param to    one past the last
     * @return this batch
     */
    public Batch addRange(Batch other, int from, int to) {
        if (other.valuesPacked() && !valuesPacked()) {
            throw new IllegalArgumentException("a batch of values of any length cannot join one whose values have the "
                    + "value size");
        }
        if (other.keySize != keySize || other.valueSize != valueSize) {
            throw new IllegalArgumentException("a batch of " + other.keySize + "-byte keys and " + other.valueSize
                    + "-byte values cannot join one of " + keySize + "-byte keys and " + valueSize + "-byte values");
        }
        Objects.checkFromToIndex(from, to, other.size);
        int n = to - from;
        ensureCapacity(size + n);
        MemorySegment.copy(other.kinds, from, kinds, size, n);
        MemorySegment.copy(other.keys, (long) from * keySize, keys, (long) size * keySize, (long) n * keySize);
        if (packed != null) {
            copyPacked(other, from, n);
        } else {
            MemorySegment.copy(other.values, (long) from * valueSize, values, (long) size * valueSize,
                    (long) n * valueSize);
            if (other.expected != null) {
                if (expected == null) {
                    allocateExpected(capacity);
                }
                MemorySegment.copy(other.expected, (long) from * valueSize, expected, (long) size * valueSize,
                        (long) n * valueSize);
            }
        }
        int added = 0;
        if (n < other.size) {
            for (int i = 0; i < n; i++) {
                if (OpKind.ofOrdinal(other.kinds.get(ValueLayout.JAVA_BYTE, from + i)).isConditional()) {
                    added++;
                }
            }
        }
        size += n;
        conditionals += n == other.size ? other.conditionals : added;
        return this;
    }

    /**
     * The values (and expected values) of {@code other}'s operations {@code from..from+n-1}, packed
     * after this batch's: at their lengths, or, from a batch whose values have the value size, at it.
     */
    private void copyPacked(Batch other, int from, int n) {
        for (int i = 0; i < n; i++) {
            OpKind kind = OpKind.ofOrdinal(other.kinds.get(ValueLayout.JAVA_BYTE, from + i));
            if (other.packed != null) {
                packed.put(size + i, other.packed.block(), other.packed.offset(from + i), other.packed.length(from + i));
            } else if (kind.hasValue()) {
                packed.put(size + i, other.values, (long) (from + i) * valueSize, valueSize);
            } else {
                packed.putEmpty(size + i);
            }
            if (kind.isConditional()) {
                if (other.packed != null) {
                    packedExpected().put(size + i, other.packedExpected.block(), other.packedExpected.offset(from + i),
                            other.packedExpected.length(from + i));
                } else {
                    packedExpected().put(size + i, other.expected, (long) (from + i) * valueSize, valueSize);
                }
            }
        }
    }

    private void ensureCapacity(int n) {
        if (n > capacity) {
            int max = maxOperations(keySize, placeBytes());
            if (n > max) {
                throw new IllegalStateException("the batch is full: a batch of " + keySize + "-byte keys and " + valueSize
                        + "-byte values holds at most " + max + " operations (run it and start another)");
            }
            allocate((int) Math.min(max, Math.max(n, 2L * capacity)));
        }
    }

    /** {@return the number of operations appended} */
    public int size() {
        return size;
    }

    /**
     * The kind of operation {@code i}.
     *
     * @param i the operation's position in the batch
     * @return what it does
     */
    public OpKind kind(int i) {
        checkIndex(i);
        return OpKind.ofOrdinal(kinds.get(ValueLayout.JAVA_BYTE, i));
    }

    /**
     * Key {@code i} as a new array.
     *
     * @param i the operation's position in the batch
     * @return a copy of its key
     */
    public byte[] key(int i) {
        checkIndex(i);
        return SegmentBytes.copyOf(keys, (long) i * keySize, keySize);  // not toArray: see SegmentBytes
    }

    /**
     * All keys, back to back ({@code size() * keySize} bytes), without copying.
     *
     * @return a view of the key column
     */
    public MemorySegment keys() {
        return keys.asSlice(0, (long) size * keySize);
    }

    /**
     * All values, back to back: each in a place of the value size ({@code size() * valueSize} bytes;
     * entries of GET and DELETE are zero unless the batch was filled in place, see {@link #setSize}),
     * or, where the values lie packed ({@link #valuesPacked()}), each at its {@link #valueOffset} with
     * its {@link #valueLength}.
     *
     * @return a view of the value column
     */
    public MemorySegment values() {
        return packed != null ? packed.used() : values.asSlice(0, (long) size * valueSize);
    }

    /**
     * Operation kinds as ordinals of {@link OpKind}.
     *
     * @return a view of the kind column, one byte per operation
     */
    public MemorySegment kinds() {
        return kinds.asSlice(0, size);
    }

    /**
     * The expected values of the conditional operations, back to back like {@link #values()}
     * ({@code size() * valueSize} bytes, the entries of other operations ignored; where the values lie
     * packed, each conditional operation's at its {@link #expectedOffset}). Made at the
     * first call or the first conditional operation appended: a batch filled in place
     * ({@link #setSize}) writes the expected value of each conditional operation here.
     *
     * @return a view of the expected-value column
     */
    public MemorySegment expectedValues() {
        if (packed != null) {
            return packedExpected().used();
        }
        if (expected == null) {
            allocateExpected(capacity);
        }
        return expected.asSlice(0, (long) size * valueSize);
    }

    /**
     * Whether the batch holds a {@link OpKind#COMPARE_AND_SET} or {@link OpKind#COMPARE_AND_DELETE}
     * (for a batch filled in place, known once the index has checked its kinds).
     *
     * @return whether any operation is conditional
     */
    public boolean hasConditionalOperations() {
        return conditionals > 0;
    }

    /** {@return bytes per key} */
    public int keySize() {
        return keySize;
    }

    /** {@return bytes per value} */
    public int valueSize() {
        return valueSize;
    }

    /** Forgets all operations, keeping the memory. */
    public void clear() {
        if (packed != null) {
            packed.clear();
            if (packedExpected != null) {
                packedExpected.clear();
            }
        } else {
            values.asSlice(0, (long) size * valueSize).fill((byte) 0);
        }
        size = 0;
        conditionals = 0;
    }

    /**
     * Makes the batch hold {@code n} operations whose columns the caller writes in place, through
     * {@link #kinds()}, {@link #keys()} and {@link #values()}, instead of one {@code add} call per
     * operation: the way an application that generates operations in bulk (or a GPU application
     * filling its buffers) avoids a call and a copy per operation. The memory grows as needed and
     * keeps the operations already there (up to {@code n}); entries beyond them hold whatever the
     * memory held, so write every kind and key, and the value of every operation that has one (the
     * values of GET and DELETE entries are ignored). Kinds are {@link OpKind} ordinals; executing a
     * batch filled this way first checks them (a few microseconds per million operations) and refuses
     * the batch with an {@link IllegalArgumentException} naming the first bad one.
     *
     * <p>A batch whose values lie packed ({@link #valuesPacked()}) is filled by {@code add}, each value
     * at its length; here it only shrinks ({@code n} at most {@link #size()}), keeping its first
     * {@code n} operations.
     *
     * @param n the number of operations, at most {@link #maxOperations(int, int)}
     * @return this batch
     * @throws IllegalStateException where the values lie packed and {@code n} is over {@link #size()}
     */
    public Batch setSize(int n) {
        checkSize(n, keySize, placeBytes());
        if (packed != null) {
            if (n > size) {
                throw new IllegalStateException("a batch of values of any length is filled by add, each value at its "
                        + "length (its values lie packed): setSize(" + n + ") only shrinks it, now of " + size);
            }
            packed.truncate(n);
            if (n == 0 && packedExpected != null) {
                packedExpected.clear();
            }
            conditionals = 0;
            size = n;
            filledInPlace = true;  // counts the conditional operations kept again
            return this;
        }
        ensureCapacity(n);
        size = n;
        filledInPlace = true;
        return this;
    }

    /**
     * Throws naming the first operation whose kind is not an {@link OpKind} ordinal, for a batch
     * whose columns were written in place ({@link #setSize}); batches filled by {@code add} are valid
     * by construction and cost nothing here. Eight kinds at a time: a byte {@code b} of a word is a
     * valid ordinal exactly when {@code b + (0x80 - KINDS)} leaves its top bit clear and so did {@code b}.
     */
    void checkKinds() {
        if (!filledInPlace) {
            return;
        }
        long kindsCount = OpKind.values().length;
        long add = 0x0101010101010101L * (0x80 - kindsCount);
        // Conditional kinds are the last ordinals: a valid byte b is one exactly when b + (0x80 -
        // FIRST_CONDITIONAL) sets its top bit.
        long addConditional = 0x0101010101010101L * (0x80 - OpKind.COMPARE_AND_SET.ordinal());
        long top = 0x8080808080808080L;
        int conditional = 0;
        int i = 0;
        for (; i + 8 <= size; i += 8) {
            long w = kinds.get(KIND_WORD, i);
            if (((w | (w + add)) & top) != 0) {
                break;
            }
            conditional += Long.bitCount((w + addConditional) & top);
        }
        for (; i < size; i++) {
            int k = kinds.get(ValueLayout.JAVA_BYTE, i);
            if (k < 0 || k >= kindsCount) {
                throw new IllegalArgumentException("operation " + i + " of the batch has kind " + k
                        + ", not an OpKind ordinal (0 to " + (kindsCount - 1) + ")");
            }
            conditional += OpKind.ofOrdinal(k).isConditional() ? 1 : 0;
        }
        conditionals = conditional;
        if (conditional > 0 && expected == null && packedExpected == null) {
            throw new IllegalArgumentException(conditional + " operations of the batch are conditional ("
                    + OpKind.COMPARE_AND_SET + " or " + OpKind.COMPARE_AND_DELETE + ") but no expected value was written: "
                    + "write them through expectedValues()");
        }
    }

    /**
     * Checks the kinds of a batch filled in place ({@link #setSize}) now, as executing it would, and
     * counts its conditional operations (what {@link #hasConditionalOperations()} then says): for code
     * that fills batches in place and hands them to an engine below the index (a sharded index
     * splitting a batch into its shards' parts). A batch filled by add needs no check.
     *
     * @return this batch
     * @throws IllegalArgumentException naming the first operation whose kind is not an {@link OpKind}
     *                                  ordinal, or when conditional operations have no expected values
     */
    public Batch validate() {
        checkKinds();
        return this;
    }

    private static final ValueLayout.OfLong KIND_WORD = ValueLayout.JAVA_LONG_UNALIGNED;

    /**
     * Whether every operation is a get: what a layer in front of the engine checks before it does
     * per-operation work for writes. GET is ordinal 0, so the kinds are compared with zeros by the
     * JDK's bulk {@link MemorySegment#mismatch}. A loop of eight kinds at a time was compiled while
     * batches that write (which leave it at the first word) were run, and the first batches of gets
     * deoptimized it ("unstable_if") in every thread, to run interpreted and then in C1's profiling
     * code, where a segment read costs many times what it does in C2's loop, until C2 compiled it
     * again; the bulk compare has no such branch to lose (measured in
     * docs/lab/2026-11-27-chunks-and-lanes-from-16-threads.md).
     *
     * @return true if the batch holds gets only (or nothing)
     */
    public boolean onlyGets() {
        long piece = ALL_GETS.byteSize();
        for (long at = 0; at < size; at += piece) {
            long n = Math.min(piece, size - at);
            if (MemorySegment.mismatch(kinds, at, at + n, ALL_GETS, 0, n) >= 0) {
                return false;
            }
        }
        return true;
    }

    /** Kinds of a batch of gets, to compare with ({@link #onlyGets}). */
    private static final MemorySegment ALL_GETS = MemorySegment.ofArray(new byte[1 << 16]);

    static {
        if (OpKind.GET.ordinal() != 0) {
            throw new AssertionError("onlyGets() reads GET as ordinal 0");
        }
    }

    /**
     * The off-heap block that holds the columns, for engines that move batches by DMA: the segments
     * of {@link #kinds()}, {@link #keys()} and {@link #values()} lie inside it (packed values,
     * {@link #valuesPacked()}, lie in a block of their own). A batch that grows moves to a new block.
     *
     * @return the block
     */
    public HostMemory memory() {
        return memory;
    }

    private void checkIndex(int i) {
        if (i < 0 || i >= size) {
            throw new IndexOutOfBoundsException("operation " + i + " of a batch of " + size);
        }
    }
}
