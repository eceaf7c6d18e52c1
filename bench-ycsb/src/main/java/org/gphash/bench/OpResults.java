package org.gphash.bench;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import org.gphash.BatchResult;
import org.gphash.Outcome;
import org.gphash.spi.SegmentBytes;

/**
 * What a store returned for one {@link OpBatch}: an {@link Outcome} per operation and, for reads
 * and read-modify-writes that found their key, the (previous) value. Held in an engine
 * {@link BatchResult} (off-heap), which the GPHash store fills in place; every other system writes
 * its results here too, so all of them pay for handing values back to the caller.
 */
public final class OpResults {

    private final int valueSize;
    private final BatchResult result;
    /** Views of the result's columns since the last reset (taken once, not per operation). */
    private MemorySegment codes;
    private MemorySegment values;

    public OpResults(int valueSize, int capacity) {
        this.valueSize = valueSize;
        this.result = new BatchResult(valueSize, Math.max(1, capacity));
        reset(Math.max(1, capacity));
    }

    /** Makes room for {@code n} results, every outcome NOT_APPLIED until set. */
    public void reset(int n) {
        result.reset(n);
        codes = result.outcomeCodes();
        values = result.values();
    }

    /** As {@link #reset}: kept for the stores that size their results before filling them. */
    public void ensureCapacity(int n) {
        reset(n);
    }

    public void set(int i, Outcome outcome) {
        codes.set(ValueLayout.JAVA_BYTE, i, outcome.code());
    }

    /** Records a found value ({@code valueSize} bytes of {@code src} from {@code offset}). */
    public void setValue(int i, Outcome outcome, byte[] src, int offset) {
        setValue(i, outcome, src, offset, valueSize);
    }

    /** Records a found value of {@code length} bytes of {@code src} from {@code offset} (the rest of its place zeroed). */
    public void setValue(int i, Outcome outcome, byte[] src, int offset, int length) {
        set(i, outcome);
        MemorySegment.copy(src, offset, values, ValueLayout.JAVA_BYTE, (long) i * valueSize, length);
        shorter(i, length);
    }

    /** Records a found value ({@code valueSize} bytes of {@code src} from {@code offset}). */
    public void setValue(int i, Outcome outcome, MemorySegment src, long offset) {
        setValue(i, outcome, src, offset, valueSize);
    }

    /** Records a found value of {@code length} bytes of {@code src} from {@code offset} (the rest of its place zeroed). */
    public void setValue(int i, Outcome outcome, MemorySegment src, long offset, int length) {
        set(i, outcome);
        MemorySegment.copy(src, offset, values, (long) i * valueSize, length);
        shorter(i, length);
    }

    /** A value shorter than the value size: its length noted, the rest of its place zeroed. */
    private void shorter(int i, int length) {
        if (length < valueSize) {
            values.asSlice((long) i * valueSize + length, valueSize - length).fill((byte) 0);
            result.setValueLength(i, length);
        }
    }

    /** The length of value {@code i}: the value size, or less where the store's values have lengths of their own. */
    public int valueLength(int i) {
        return result.valueLength(i);
    }

    public Outcome outcome(int i) {
        return Outcome.ofCode(codes.get(ValueLayout.JAVA_BYTE, i));
    }

    /** Value {@code i} as a new array. */
    public byte[] value(int i) {
        return SegmentBytes.copyOf(values, (long) i * valueSize, valueSize);
    }

    /** The value column: {@code valueSize} bytes per result. */
    public MemorySegment values() {
        return values;
    }

    /** The outcome codes ({@link Outcome#code()}), one byte per result. */
    public MemorySegment codes() {
        return codes;
    }

    public int valueSize() {
        return valueSize;
    }

    /**
     * The engine result, for the GPHash store to run into; {@link #adopt} after the engine has
     * reset it (a larger batch may have moved its memory).
     */
    public BatchResult engineResult() {
        return result;
    }

    /** Takes fresh views of the engine result's columns after an engine ran into it. */
    public void adopt() {
        codes = result.outcomeCodes();
        values = result.values();
    }
}
