package org.gphash.bench;

import java.util.Arrays;

import org.gphash.Outcome;

/**
 * What a store returned for one {@link OpBatch}: an {@link Outcome} per operation and, for reads
 * and read-modify-writes that found their key, the (previous) value. Every system writes its
 * results here, so all of them pay for handing values back to the caller.
 */
public final class OpResults {

    private final int valueSize;
    private Outcome[] outcomes;
    byte[] values;

    public OpResults(int valueSize, int capacity) {
        this.valueSize = valueSize;
        this.outcomes = new Outcome[capacity];
        this.values = new byte[capacity * valueSize];
    }

    /** Makes room for {@code n} results (replayed batches can be larger than the first guess). */
    public void ensureCapacity(int n) {
        if (n > outcomes.length) {
            outcomes = new Outcome[n];
            values = new byte[n * valueSize];
        }
    }

    public void set(int i, Outcome outcome) {
        outcomes[i] = outcome;
    }

    /** Records a found value ({@code valueSize} bytes of {@code src} from {@code offset}). */
    public void setValue(int i, Outcome outcome, byte[] src, int offset) {
        outcomes[i] = outcome;
        System.arraycopy(src, offset, values, i * valueSize, valueSize);
    }

    public Outcome outcome(int i) {
        return outcomes[i];
    }

    public byte[] value(int i) {
        return Arrays.copyOfRange(values, i * valueSize, (i + 1) * valueSize);
    }

    public byte[] valueBytes() {
        return values;
    }

    public int valueSize() {
        return valueSize;
    }
}
