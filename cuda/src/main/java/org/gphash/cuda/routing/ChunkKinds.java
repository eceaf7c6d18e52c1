package org.gphash.cuda.routing;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * The kind counts of a host batch's chunks ({@link KindCounts}), each chunk counted once, when first
 * asked for. The first chunk's counts decide, outside the engine's lock, what to pin
 * ({@link org.gphash.cuda.path.QueuedBatches#pinOutsideLock}); the others are counted under it by each chunk's plan, while
 * the GPU runs the chunk before: counting the whole batch before the lock was a tenth of a batch of
 * gets from one thread, which nothing overlapped (docs/PERFORMANCE.md, "host batches of 2^20 from one
 * Java thread"). Not thread-safe: a thread
 * prepares one and reads it back in the same call.
 */
public final class ChunkKinds {

    private static final int FIELDS = 3;

    private MemorySegment kinds;
    /** The positions of a part's operations in the batch ({@link #preparePart}), or null: operations 0..size-1. */
    private MemorySegment positions;
    private int size;
    private int chunk;
    private long[] counts = new long[FIELDS * 16];
    private boolean[] counted = new boolean[16];
    /**
     * A part of a batch whose operations are all of one kind: that kind's field ({@link KindCounts#GETS},
     * {@link KindCounts#DELETES}, {@link KindCounts#RMWS}), {@link #VALUE_WRITES} when none is any of
     * those, or -1: mixed, counted position by position.
     */
    private int uniform = -1;
    private static final int VALUE_WRITES = FIELDS;
    /** The whole batch's counts, scratch for {@link #preparePart} (kept: a part is prepared per batch and shard). */
    private final long[] wholeBatch = new long[FIELDS];

    /** Starts on kinds {@code [0, n)} of {@code kinds}, in chunks of {@code chunk}; nothing is counted yet. Returns this. */
    public ChunkKinds prepare(MemorySegment kinds, int n, int chunk) {
        start(kinds, null, n, chunk);
        uniform = -1;
        return this;
    }

    /**
     * Starts on the kinds at the {@code n} positions listed in {@code positions} of a batch of
     * {@code batchSize} operations (a shard's part of it, {@code Engine.executeInPlace}), in chunks of
     * {@code chunk} positions. The whole batch's kinds are counted now, eight at a time: where they are
     * all of one kind (a batch of gets, of puts), no chunk reads its kinds position by position
     * (docs/lab/2026-11-27-parts-in-place.md). Returns this.
     */
    public ChunkKinds preparePart(MemorySegment kinds, MemorySegment positions, int n, int chunk, int batchSize) {
        start(kinds, positions, n, chunk);
        long[] whole = wholeBatch;
        KindCounts.count(kinds, 0, batchSize, whole);
        uniform = -1;
        for (int f = 0; f < FIELDS; f++) {
            if (whole[f] == batchSize) {
                uniform = f;
            }
        }
        if (whole[KindCounts.GETS] + whole[KindCounts.DELETES] + whole[KindCounts.RMWS] == 0) {
            uniform = VALUE_WRITES;
        }
        return this;
    }

    private void start(MemorySegment kinds, MemorySegment positions, int n, int chunk) {
        this.kinds = kinds;
        this.positions = positions;
        this.size = n;
        this.chunk = Math.max(1, chunk);
        int chunks = (n + this.chunk - 1) / this.chunk;
        if (counted.length < chunks) {
            counted = new boolean[chunks];
            counts = new long[chunks * FIELDS];
        } else {
            Arrays.fill(counted, 0, chunks, false);
        }
    }

    /**
     * The counts of the chunk that starts at operation {@code first} into {@code out} (gets, deletes,
     * read-modify-writes, as {@link KindCounts#count}), counting it if this is the first time.
     */
    public void chunk(int first, long[] out) {
        int c = first / chunk;
        if (!counted[c]) {
            int m = Math.min(chunk, size - first);
            if (uniform >= 0) {
                Arrays.fill(out, 0);
                if (uniform < FIELDS) {
                    out[uniform] = m;
                }
            } else if (positions == null) {
                KindCounts.count(kinds, first, m, out);
            } else {
                KindCounts.countAt(kinds, positions, first, m, out);
            }
            System.arraycopy(out, 0, counts, c * FIELDS, FIELDS);
            counted[c] = true;
            return;
        }
        System.arraycopy(counts, c * FIELDS, out, 0, FIELDS);
    }
}
