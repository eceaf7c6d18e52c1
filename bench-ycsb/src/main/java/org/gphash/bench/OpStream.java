package org.gphash.bench;

import org.gphash.OpKind;

/**
 * One workload's operations, generated in full before the clock starts: the kind and key id of
 * each. Every system of a run executes the same stream (same seed, same order, same batches), and
 * generating it up front keeps the random number generator out of every system's timing.
 * 9 bytes per operation: 64M operations take 576 MiB.
 */
public final class OpStream {

    private final Workload workload;
    private final byte[] kinds;
    private final long[] ids;
    /** Added to an operation's index to make its value version unique within the run. */
    private final long versionBase;

    OpStream(Workload workload, byte[] kinds, long[] ids, long versionBase) {
        if (kinds.length != ids.length) {
            throw new IllegalArgumentException("kinds and ids differ in length");
        }
        this.workload = workload;
        this.kinds = kinds;
        this.ids = ids;
        this.versionBase = versionBase;
    }

    public Workload workload() {
        return workload;
    }

    public int size() {
        return ids.length;
    }

    public OpKind kind(int i) {
        return OpKind.ofOrdinal(kinds[i]);
    }

    /** Operation {@code i}'s kind as its {@link OpKind} ordinal (what a batch's kind column holds). */
    public byte kindOrdinal(int i) {
        return kinds[i];
    }

    public long id(int i) {
        return ids[i];
    }

    /** The value version written by operation {@code i} (unique per write in a run). */
    public long version(int i) {
        return versionBase + i;
    }

    /** How many batches of {@code batchSize} the stream splits into. */
    public int batches(int batchSize) {
        return (int) ((ids.length + (long) batchSize - 1) / batchSize);
    }
}
