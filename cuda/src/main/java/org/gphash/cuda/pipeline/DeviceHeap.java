package org.gphash.cuda.pipeline;

import org.gphash.table.PoolTable;

/**
 * The value heap's free space in GPU memory, authoritative while the v2 pipeline runs: a batch takes
 * blocks for its values and frees the ones it unlinked without the host. The host's heap
 * ({@link PoolTable}) moves to the GPU ({@link #push}) and back ({@link #pull}) around whatever the
 * host changes in it (growth, resize, verification). Free space is never persisted (recovery rebuilds
 * it), so nothing here needs to survive a crash. One form per pool format
 * (pipeline/heap_params.cuh): format 2's one bitmap of blocks ({@link DeviceBitmapHeap}), format 3's
 * segments of size classes ({@link DeviceSegmentHeap}). Not thread-safe.
 */
sealed interface DeviceHeap extends AutoCloseable permits DeviceBitmapHeap, DeviceSegmentHeap {

    /** {@return the form of {@code pool}'s format, empty until {@link #push}} */
    static DeviceHeap forPool(PoolTable pool) {
        return pool.formatVersion() >= 3 ? new DeviceSegmentHeap() : new DeviceBitmapHeap();
    }

    /** Takes the host heap's free space (operations drained). */
    void push(PoolTable pool);

    /** Gives the host heap the free space as batches left it (nothing in flight). */
    void pull(PoolTable pool);

    /** {@return HeapParams (pipeline/heap_params.cuh) as the kernels receive them} */
    byte[] params();

    /** {@return whether blocks are taken by segments (format 3's three steps) rather than by a scan of one bitmap} */
    boolean segmented();

    /** {@return the words of the bitmap a take scans (format 2), 0 where none is scanned} */
    long words();

    /** {@return the scan's output (format 2), 0 where none} */
    long freePrefixAddress();

    /** {@return segments of the heap (format 3), 0 for format 2} */
    long segments();

    /** {@return blocks of the pool's value size a batch can take without a growth} */
    long freeBlocks();

    /** {@return blocks of the pool's value size the heap holds} */
    long totalBlocks();

    /** {@return the heap's state as the GPU has it now, for an error's message (nothing in flight)} */
    String describe();

    /** A batch took and freed blocks (its counters). */
    void account(long taken, long freed);

    @Override
    void close();
}
