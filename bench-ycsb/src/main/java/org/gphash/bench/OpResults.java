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
 * its results here too, so all of them pay for handing values back to the caller. Values of
 * {@link ValueLengths#MIXED} lengths lie packed, each at its {@link #valueOffset}, as their batch's do.
 */
public final class OpResults {

    private final int valueSize;
    private final BatchResult result;
    /** Views of the result's columns since the last reset (taken once, not per operation). */
    private MemorySegment codes;
    private MemorySegment values;

    public OpResults(int valueSize, int capacity) {
        this(valueSize, capacity, ValueLengths.FIXED);
    }

    /** Results for batches of values of {@code lengths}: packed, each at its own offset, unless {@link ValueLengths#FIXED}. */
    public OpResults(int valueSize, int capacity, ValueLengths lengths) {
        this.valueSize = valueSize;
        this.result = BatchResult.create(valueSize, Math.max(1, capacity), lengths != ValueLengths.FIXED);
        reset(Math.max(1, capacity));
    }

    /** Makes room for {@code n} results, every outcome NOT_APPLIED until set. */
    public void reset(int n) {
        result.reset(n);
        adopt();
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

    /** Records a found value of {@code length} bytes of {@code src} from {@code offset} (the rest of a place of the value size zeroed). */
    public void setValue(int i, Outcome outcome, byte[] src, int offset, int length) {
        setValue(i, outcome, MemorySegment.ofArray(src), offset, length);
    }

    /** Records a found value ({@code valueSize} bytes of {@code src} from {@code offset}). */
    public void setValue(int i, Outcome outcome, MemorySegment src, long offset) {
        setValue(i, outcome, src, offset, valueSize);
    }

    /** Records a found value of {@code length} bytes of {@code src} from {@code offset} (the rest of a place of the value size zeroed). */
    public void setValue(int i, Outcome outcome, MemorySegment src, long offset, int length) {
        set(i, outcome);
        if (length == valueSize && !result.valuesPacked()) {
            MemorySegment.copy(src, offset, values, (long) i * valueSize, length);
        } else {
            result.putValue(i, src, offset, length);
            values = result.valueBlock();   // a packed column may have moved to make room
        }
    }

    /** Where value {@code i} starts in {@link #values()}. */
    public long valueOffset(int i) {
        return result.valueOffset(i);
    }

    /** The length of value {@code i}: the value size, or less where the store's values have lengths of their own. */
    public int valueLength(int i) {
        return result.valueLength(i);
    }

    public Outcome outcome(int i) {
        return Outcome.ofCode(codes.get(ValueLayout.JAVA_BYTE, i));
    }

    /** Value {@code i} as a new array, at its length. */
    public byte[] value(int i) {
        return SegmentBytes.copyOf(values, result.valueOffset(i), result.valueLength(i));
    }

    /** The value column: {@code valueSize} bytes per result, or the values packed, each at its {@link #valueOffset}. */
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
        values = result.valueBlock();
    }
}
