package org.gphash;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * One result per operation of a {@link Batch}: an {@link Outcome}, and for a GET that found its
 * key (FOUND) or a read-modify-write that replaced it (REPLACED), a value. Stored column-wise like the batch, so an engine fills it with one copy.
 */
public final class BatchResult {

    private final int valueSize;
    private byte[] codes;
    private byte[] values;
    private int size;

    /**
     * Results for batches of an index with values of {@code valueSize} bytes.
     *
     * @param valueSize          bytes per value
     * @param expectedOperations results to make room for at first
     */
    public BatchResult(int valueSize, int expectedOperations) {
        this.valueSize = valueSize;
        int n = Math.max(1, Batch.checkSize(expectedOperations, 1, valueSize));
        this.codes = new byte[n];
        this.values = new byte[n * valueSize];
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
        if (n > codes.length) {
            codes = new byte[n];
            values = new byte[n * valueSize];
        } else {
            Arrays.fill(codes, 0, n, Outcome.NOT_APPLIED.code());
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
        return Outcome.ofCode(codes[i]);
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
        if (codes[i] != Outcome.FOUND.code() && codes[i] != Outcome.REPLACED.code()) {
            return null;
        }
        return Arrays.copyOfRange(values, i * valueSize, (i + 1) * valueSize);
    }

    /** {@return where engines write outcome codes ({@link Outcome#code()}), one byte per operation} */
    public MemorySegment outcomeCodes() {
        return MemorySegment.ofArray(codes).asSlice(0, size);
    }

    /** {@return where engines write GET and read-modify-write values, {@code valueSize} bytes per operation} */
    public MemorySegment values() {
        return MemorySegment.ofArray(values).asSlice(0, (long) size * valueSize);
    }

    /**
     * Sets the outcome of operation {@code i} (for engines).
     *
     * @param i       the operation's position in its batch
     * @param outcome what it did
     */
    public void setOutcome(int i, Outcome outcome) {
        codes[i] = outcome.code();
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
            if (codes[i] == outcome.code()) {
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
