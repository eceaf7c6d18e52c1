package org.gphash.cuda.staging;

import java.lang.foreign.MemorySegment;

import org.gphash.Batch;
import org.gphash.cuda.runtime.PinnedBuffer;

/**
 * A page-locked copy of a batch's kinds and keys, and values when its first chunk carries any (or of
 * the positions of a shard's part of a batch), made by
 * the calling thread before the engine's lock, for a batch whose memory is not pinned (a fresh batch
 * moving less than {@link BatchPinning#PIN_AT_ONCE_BYTES}). Copied under the lock into a lane's
 * staging memory instead, 16 threads' fresh batches spent a quarter of the engine's locked time
 * copying; registering them instead slowed the lock holder's own driver calls
 * (docs/lab/2026-11-26-batches-in-flight.md).
 * The buffers are registered with CUDA once, as they grow, and reused by the next batch of any thread
 * ({@link PreparedBatch}); the engine closes them all. Not thread-safe: one batch's at a time.
 */
public final class CallerStaging implements AutoCloseable {

    private final PinnedBuffer kinds = new PinnedBuffer();
    private final PinnedBuffer keys = new PinnedBuffer();
    private final PinnedBuffer values = new PinnedBuffer();
    private final PinnedBuffer positions = new PinnedBuffer();

    /**
     * Copies the batch's kinds and keys, and its values when {@code withValues}; returns where they are
     * (values not copied stay the lanes' to stage, under the lock).
     */
    public HostColumns fill(Batch batch, boolean withValues) {
        int n = batch.size();
        long keyBytes = (long) n * batch.keySize();
        kinds.ensure(n);
        keys.ensure(keyBytes);
        MemorySegment.copy(batch.kinds(), 0, kinds.segment(), 0, n);
        MemorySegment.copy(batch.keys(), 0, keys.segment(), 0, keyBytes);
        long valuesAt = 0;
        if (withValues) {
            long valueBytes = (long) n * batch.valueSize();
            values.ensure(valueBytes);
            MemorySegment.copy(batch.values(), 0, values.segment(), 0, valueBytes);
            valuesAt = values.segment().address();
        }
        return new HostColumns(kinds.segment().address(), keys.segment().address(), valuesAt);
    }

    /**
     * Copies the {@code count} positions of a shard's part of a batch ({@code Engine.executeInPlace}),
     * so that its lanes copy them to the GPU from here, and returns the copy.
     */
    public MemorySegment fillPositions(MemorySegment from, int count) {
        long bytes = 4L * count;
        if (positions.segment() == null || positions.segment().byteSize() < bytes) {
            // With room to spare: a shard's share of the next batch is a little larger half the time,
            // and registering the buffer again would cost more than the copy.
            positions.ensure(bytes + bytes / 8);
        }
        MemorySegment.copy(from, 0, positions.segment(), 0, bytes);
        return positions.segment().asSlice(0, bytes);
    }

    @Override
    public void close() {
        kinds.close();
        keys.close();
        values.close();
        positions.close();
    }
}
