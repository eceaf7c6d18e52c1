package org.gphash.cuda;

import java.lang.foreign.MemorySegment;

import org.gphash.Batch;

/**
 * A thread's own page-locked copy of its batch's kinds and keys, made before the engine's lock, for
 * a batch whose memory is not pinned (a fresh batch moving less than {@link
 * BatchPinning#PIN_AT_ONCE_BYTES}). Copied under the lock into a lane's staging memory instead, 16
 * threads' fresh batches of 2^18 gets spent 28% of the engine's locked time copying (H200, YCSB-C).
 * The buffers are registered with CUDA once per thread, as they grow; the engine closes them all.
 * Not thread-safe: its thread fills it and the lanes read it within one call.
 */
final class ThreadStaging implements AutoCloseable {

    private final PinnedBuffer kinds = new PinnedBuffer();
    private final PinnedBuffer keys = new PinnedBuffer();

    /** Copies the batch's kinds and keys; returns where they are (values stay the lanes' to stage). */
    HostColumns fill(Batch batch) {
        int n = batch.size();
        long keyBytes = (long) n * batch.keySize();
        kinds.ensure(n);
        keys.ensure(keyBytes);
        MemorySegment.copy(batch.kinds(), 0, kinds.segment(), 0, n);
        MemorySegment.copy(batch.keys(), 0, keys.segment(), 0, keyBytes);
        return new HostColumns(kinds.segment().address(), keys.segment().address(), 0);
    }

    @Override
    public void close() {
        kinds.close();
        keys.close();
    }
}
