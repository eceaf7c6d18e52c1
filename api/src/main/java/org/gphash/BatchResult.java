package org.gphash;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;

import org.gphash.spi.HostMemory;
import org.gphash.spi.SegmentBytes;

/**
 * One result per operation of a {@link Batch}: an {@link Outcome}, and for a GET that found its
 * key (FOUND) or a read-modify-write that replaced it (REPLACED), a value. Stored column-wise in
 * off-heap memory like the batch, so that an engine fills it with one copy. Its values lie as the
 * batch's do: each in a place of the value size at {@code i * valueSize}, or, for a batch of values
 * of any length ({@link Batch#valuesPacked()}), packed, each at its own {@link #valueOffset} with its
 * {@link #valueLength}; a result takes the layout of the batch it is reset for ({@link #reset(Batch)}).
 */
public final class BatchResult {

    private final int valueSize;
    /** Codes and values of up to {@code capacity} results, the values at a 64-byte boundary. */
    private HostMemory memory;
    private MemorySegment codes;
    private MemorySegment values;
    private int capacity;
    private int size;
    /**
     * By how many bytes each value found is shorter than the value size (a format 3 pool's values have
     * any length up to it): made at the first such value, zero for every other, so that engines whose
     * values all have the value size write nothing here.
     */
    private int[] shortBy;
    /** The values found, packed, where the batch's values lie packed; else null (values in {@code values}). */
    private PackedValues packed;

    /**
     * Results for batches of an index with values of {@code valueSize} bytes.
     *
     * @param valueSize          bytes per value
     * @param expectedOperations results to make room for at first
     */
    public BatchResult(int valueSize, int expectedOperations) {
        this(valueSize, expectedOperations, false);
    }

    private BatchResult(int valueSize, int expectedOperations, boolean packedValues) {
        this.valueSize = valueSize;
        int n = Math.max(1, Batch.checkSize(expectedOperations, 1, packedValues ? 1 : valueSize));
        if (packedValues) {
            packed = PackedValues.withRoomFor(n, n, valueSize);
        }
        allocate(n);
    }

    /**
     * Results for batches of an index with values of up to {@code valueSize} bytes, laid out as
     * batches whose values lie packed where {@code packedValues} ({@link Batch#valuesPacked()}).
     *
     * @param valueSize          bytes per value, the longest a value may be where {@code packedValues}
     * @param expectedOperations results to make room for at first
     * @param packedValues       whether the values found lie packed
     * @return empty results
     */
    public static BatchResult create(int valueSize, int expectedOperations, boolean packedValues) {
        return new BatchResult(valueSize, expectedOperations, packedValues);
    }

    /** A new zeroed block for {@code n} results (zero is {@link Outcome#NOT_APPLIED}). */
    private void allocate(int n) {
        long valuesAt = Batch.align(n);
        long valueBytes = packed != null ? 0 : (long) n * valueSize;
        HostMemory m = HostMemory.allocate(valuesAt + valueBytes);
        memory = m;
        codes = m.segment().asSlice(0, n);
        values = m.segment().asSlice(valuesAt, valueBytes);
        capacity = n;
        if (packed != null) {
            packed.ensureOperations(n);
        }
    }

    /**
     * Prepares for the results of {@code batch}, in its layout ({@link Batch#valuesPacked()}), reusing
     * memory where it suffices: {@link #reset(int)} for its size.
     *
     * @param batch the batch whose results come next
     */
    public void reset(Batch batch) {
        boolean packedValues = batch.valuesPacked();
        if (packedValues != (packed != null)) {
            // Another layout: one new block, of the size reset(n) would grow to (then it need not).
            int n = Math.max(capacity, batch.size());
            packed = packedValues ? PackedValues.withRoomFor(n, n, valueSize) : null;
            allocate(n);
        }
        reset(batch.size());
    }

    /**
     * Prepares for {@code n} results, reusing memory where it suffices. Every outcome starts as
     * {@link Outcome#NOT_APPLIED}, so a batch that fails part way leaves exactly the operations it
     * ran with other outcomes.
     *
     * @param n the number of results
     */
    public void reset(int n) {
        int place = packed != null ? 1 : valueSize;   // packed values' bytes have a bound of their own
        Batch.checkSize(n, 1, place);
        if (n > capacity) {
            // Grown with an eighth to spare: a result reused for batches of varying size (a shard's
            // part of each batch) would otherwise move to a new block, which a GPU engine registers
            // anew, every time a batch is a little larger than the last.
            allocate((int) Math.min(Batch.maxOperations(1, place), n + (n >> 3) + 64L));
        } else {
            codes.asSlice(0, n).fill(Outcome.NOT_APPLIED.code());
        }
        if (shortBy != null) {
            Arrays.fill(shortBy, 0, Math.min(n, shortBy.length), 0);  // the results read are those below n
        }
        if (packed != null) {
            packed.clear();
        }
        size = n;
    }

    /** {@return the number of results} */
    public int size() {
        return size;
    }

    /**
     * The outcome of operation {@code i}.
     *
     * @param i the operation's position in its batch
     * @return what it did
     */
    public Outcome outcome(int i) {
        checkIndex(i);
        return Outcome.ofCode(codes.get(ValueLayout.JAVA_BYTE, i));
    }

    /**
     * The value a GET found, or the previous value a READ_MODIFY_WRITE replaced; null for every
     * other operation and outcome.
     *
     * @param i the operation's position in its batch
     * @return a copy of the value, or null
     */
    public byte[] value(int i) {
        checkIndex(i);
        byte code = codes.get(ValueLayout.JAVA_BYTE, i);
        if (code != Outcome.FOUND.code() && code != Outcome.REPLACED.code()) {
            return null;
        }
        if (packed != null) {
            return SegmentBytes.copyOf(packed.block(), packed.offset(i), packed.length(i));
        }
        return SegmentBytes.copyOf(values, (long) i * valueSize, valueLength(i));
    }

    /**
     * Whether the values found lie packed, each at its own {@link #valueOffset} (results of a batch
     * whose values do, {@link Batch#valuesPacked()}).
     *
     * @return whether the value column is packed
     */
    public boolean valuesPacked() {
        return packed != null;
    }

    /**
     * Where the value of result {@code i} ({@link #value}) starts in {@link #values()}: {@code i *
     * valueSize}, or its own offset where the values lie packed. Meaningful for FOUND and REPLACED only.
     *
     * @param i the operation's position in its batch
     * @return the value's offset in bytes
     */
    public long valueOffset(int i) {
        checkIndex(i);
        return packed != null ? packed.offset(i) : (long) i * valueSize;
    }

    /**
     * The length of the value result {@code i} holds ({@link #value}): the value size, or less where
     * the pool's values have any length up to it (format 3): its own where the values lie packed; else
     * the rest of its place in {@link #values()} is zeroed. Meaningful for FOUND and REPLACED only.
     *
     * @param i the operation's position in its batch
     * @return the value's length in bytes
     */
    public int valueLength(int i) {
        checkIndex(i);
        if (packed != null) {
            return packed.length(i);
        }
        return valueSize - (shortBy == null || i >= shortBy.length ? 0 : shortBy[i]);
    }

    /**
     * {@return whether a value found may be shorter than the value size in a result whose values
     * each have a place of it (a length was recorded since the result was made); false for packed
     * results, whose values each have their own length}
     */
    public boolean hasShorterValues() {
        return shortBy != null;
    }

    /**
     * For engines writing a value found into packed results ({@link #valuesPacked()}): makes room for
     * a value of up to {@code maxLength} bytes after those written; {@link #commitValue} then says
     * whose it is and how long.
     *
     * @param maxLength the most bytes the value may have
     * @return where the value goes in {@link #valueBlock()}
     */
    public long reserveValue(int maxLength) {
        return packed.reserve(maxLength);
    }

    /**
     * {@return the block packed values are written into ({@link #reserveValue}), which moves only when
     * a reserve makes room}
     */
    public MemorySegment valueBlock() {
        return packed != null ? packed.block() : values;
    }

    /**
     * For engines: result {@code i}'s value is the {@code length} bytes written at the offset
     * {@link #reserveValue} returned last (packed results only).
     *
     * @param i      the operation's position in its batch
     * @param length the value's length, at most the reserve's
     */
    public void commitValue(int i, int length) {
        checkIndex(i);
        packed.commit(i, length);
    }

    /**
     * For layers that move results: result {@code i}'s value is a copy of {@code length} bytes of
     * {@code from} at {@code at}, in either layout.
     *
     * @param i      the operation's position in its batch
     * @param from   where the value is
     * @param at     its offset there
     * @param length its length, at most the value size
     */
    public void putValue(int i, MemorySegment from, long at, int length) {
        checkIndex(i);
        if (packed != null) {
            packed.put(i, from, at, length);
            return;
        }
        MemorySegment.copy(from, at, values, (long) i * valueSize, length);
        if (length < valueSize) {
            values.asSlice((long) i * valueSize + length, valueSize - length).fill((byte) 0);
            setValueLength(i, length);
        } else if (shortBy != null && i < shortBy.length) {
            shortBy[i] = 0;
        }
    }

    /**
     * Records that the value of result {@code i}, in a place of the value size, has {@code length}
     * bytes, fewer than the value size (for engines of pools whose values have any length).
     *
     * @param i      the operation's position in its batch
     * @param length the value's length
     */
    public void setValueLength(int i, int length) {
        if (packed != null) {
            throw new IllegalStateException("packed results take a value with its length (putValue, commitValue)");
        }
        if (length < 0 || length > valueSize) {
            throw new IllegalArgumentException("a value of " + length + " bytes in results of " + valueSize + "-byte values");
        }
        if (length == valueSize && shortBy == null) {
            return;
        }
        if (shortBy == null || shortBy.length < size) {
            shortBy = shortBy == null ? new int[capacity] : Arrays.copyOf(shortBy, capacity);
        }
        shortBy[i] = valueSize - length;
    }

    /** {@return where engines write outcome codes ({@link Outcome#code()}), one byte per operation} */
    public MemorySegment outcomeCodes() {
        return codes.asSlice(0, size);
    }

    /**
     * {@return where engines write GET and read-modify-write values, {@code valueSize} bytes per
     * operation; where they lie packed, the values found so far, back to back}
     */
    public MemorySegment values() {
        return packed != null ? packed.used() : values.asSlice(0, (long) size * valueSize);
    }

    /**
     * The off-heap block that holds the codes and values, for engines that move results by DMA: the
     * segments of {@link #outcomeCodes()} and {@link #values()} lie inside it (packed values in a
     * block of their own). A result reset to more
     * operations than it held moves to a new block.
     *
     * @return the block
     */
    public HostMemory memory() {
        return memory;
    }

    /**
     * Sets the outcome of operation {@code i} (for engines).
     *
     * @param i       the operation's position in its batch
     * @param outcome what it did
     */
    public void setOutcome(int i, Outcome outcome) {
        codes.set(ValueLayout.JAVA_BYTE, i, outcome.code());
    }

    /**
     * How many operations had {@code outcome}.
     *
     * @param outcome the outcome counted
     * @return the count
     */
    public int count(Outcome outcome) {
        int n = 0;
        for (int i = 0; i < size; i++) {
            if (codes.get(ValueLayout.JAVA_BYTE, i) == outcome.code()) {
                n++;
            }
        }
        return n;
    }

    private void checkIndex(int i) {
        if (i < 0 || i >= size) {
            throw new IndexOutOfBoundsException("result " + i + " of " + size);
        }
    }
}
