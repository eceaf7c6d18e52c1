package org.gphash.cuda.poolpath;

import static jcuda.driver.JCudaDriver.cuMemsetD8Async;

import jcuda.driver.CUstream;
import org.gphash.cuda.runtime.DeviceBuffer;

/**
 * Device memory of the per-batch key groups (table/batch_groups.cuh): an open-addressing table with at
 * least twice as many entries as operations, and per operation its group and the next member.
 * Reset on the stream before each grouping run. Not thread-safe.
 */
public final class GroupBuffers implements AutoCloseable {

    private final DeviceBuffer owner = new DeviceBuffer();
    private final DeviceBuffer top = new DeviceBuffer();
    private final DeviceBuffer count = new DeviceBuffer();
    private final DeviceBuffer opGroup = new DeviceBuffer();
    private final DeviceBuffer opNext = new DeviceBuffer();
    private long capacity;

    /** Sizes and clears the table for {@code n} operations, asynchronously on {@code stream} (null: default). */
    public void reset(long n, CUstream stream) {
        capacity = Long.highestOneBit(Math.max(2 * n, 64) - 1) << 1;
        owner.ensure(capacity * 8);
        top.ensure(capacity * 8);
        count.ensure(capacity * 4);
        opGroup.ensure(n * 8);
        opNext.ensure(n * 8);
        cuMemsetD8Async(owner.pointer(), (byte) 0xFF, capacity * 8, stream);
        cuMemsetD8Async(top.pointer(), (byte) 0xFF, capacity * 8, stream);
        cuMemsetD8Async(count.pointer(), (byte) 0, capacity * 4, stream);
    }

    /** The six BatchParams fields, in struct order. */
    public long[] fields() {
        return new long[] {owner.address(), top.address(), count.address(), capacity, opGroup.address(), opNext.address()};
    }

    @Override
    public void close() {
        owner.close();
        top.close();
        count.close();
        opGroup.close();
        opNext.close();
    }
}
