package org.gphash.cuda.staging;

import org.gphash.Batch;

/**
 * Where a host batch's columns can be copied to the GPU from directly: page-locked memory, either the
 * batch's own (pinned, {@link BatchPinning}) or its thread's copy made before the engine's lock
 * ({@link CallerStaging}). A {@code values} of 0: the values are not there, and the lane stages them.
 */
public record HostColumns(long kinds, long keys, long values) {

    /** The columns of a batch whose own memory is pinned. */
    public static HostColumns of(Batch batch) {
        return new HostColumns(batch.kinds().address(), batch.keys().address(), batch.values().address());
    }
}
