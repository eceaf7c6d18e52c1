package org.gphash;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;

import org.gphash.spi.HostMemory;
import org.gphash.spi.SegmentBytes;

/**
 * One result per operation of a {@link Batch}: an {@link Outcome}, and for a GET that found its
 * key (FOUND) or a read-modify-write that replaced it (REPLACED), a value. Stored column-wise in
 * off-heap memory like the batch, so that an engine fills it with one copy.
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

    /**
     * Results for batches of an index with values of {@code valueSize} bytes.
     *
     * @param valueSize          bytes per value
     * @param expectedOperations results to make room for at first
     */
    public BatchResult(int valueSize, int expectedOperations) {
        this.valueSize = valueSize;
        allocate(Math.max(1, Batch.checkSize(expectedOperations, 1, valueSize)));
    }

    /** A new zeroed block for {@code n} results (zero is {@link Outcome#NOT_APPLIED}). */
    private void allocate(int n) {
        long valuesAt = Batch.align(n);
        HostMemory m = HostMemory.allocate(valuesAt + (long) n * valueSize);
        memory = m;
        codes = m.segment().asSlice(0, n);
        values = m.segment().asSlice(valuesAt, (long) n * valueSize);
        capacity = n;
    }

    /**
     * Prepares for {@code n} results, reusing memory where it suffices. Every outcome starts as
     * {@link Outcome#NOT_APPLIED}, so a batch that fails part way leaves exactly the operations it
     * ran with other outcomes.
     *
     * @param n the number of results
     */
    public void reset(int n) {
        Batch.checkSize(n, 1, valueSize);
        if (n > capacity) {
            // Grown with an eighth to spare: a result reused for batches of varying size (a shard's
            // part of each batch) would otherwise move to a new block, which a GPU engine registers
            // anew, every time a batch is a little larger than the last.
            allocate((int) Math.min(Batch.maxOperations(1, valueSize), n + (n >> 3) + 64L));
        } else {
            codes.asSlice(0, n).fill(Outcome.NOT_APPLIED.code());
        }
        if (shortBy != null) {
            Arrays.fill(shortBy, 0, Math.min(n, shortBy.length), 0);  // the results read are those below n
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
        return SegmentBytes.copyOf(values, (long) i * valueSize, valueLength(i));
    }

    /**
     * The length of the value result {@code i} holds ({@link #value}): the value size, or less where
     * the pool's values have any length up to it (format 3; the rest of its place in {@link #values()}
     * is zeroed).
     *
     * @param i the operation's position in its batch
     * @return the value's length in bytes
     */
    public int valueLength(int i) {
        checkIndex(i);
        return valueSize - (shortBy == null || i >= shortBy.length ? 0 : shortBy[i]);
    }

    /**
     * Records that the value of result {@code i} has {@code length} bytes, fewer than the value size
     * (for engines of pools whose values have any length).
     *
     * @param i      the operation's position in its batch
     * @param length the value's length
     */
    public void setValueLength(int i, int length) {
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

    /** {@return where engines write GET and read-modify-write values, {@code valueSize} bytes per operation} */
    public MemorySegment values() {
        return values.asSlice(0, (long) size * valueSize);
    }

    /**
     * The off-heap block that holds the codes and values, for engines that move results by DMA: the
     * segments of {@link #outcomeCodes()} and {@link #values()} lie inside it. A result reset to more
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
