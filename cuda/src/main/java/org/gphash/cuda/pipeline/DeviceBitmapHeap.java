package org.gphash.cuda.pipeline;

import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;

import jcuda.Pointer;
import org.gphash.cuda.runtime.DeviceBuffer;
import org.gphash.cuda.runtime.KernelParams;
import org.gphash.table.PoolTable;
import org.gphash.table.TableKernels;

/**
 * Format 2's value heap in GPU memory ({@link DeviceHeap}): one free-block bitmap over the chunks
 * (pipeline/heap_bitmap.cuh); a batch takes the lowest free blocks and frees the ones it unlinked
 * without the host. The host's heap ({@link PoolTable}) holds the chunks. Not thread-safe.
 */
final class DeviceBitmapHeap implements DeviceHeap {

    private final DeviceBuffer bitmap = new DeviceBuffer();
    private final DeviceBuffer chunkTable = new DeviceBuffer();
    private final DeviceBuffer freePrefix = new DeviceBuffer();
    /** Where the last small take stopped (next fit, pipe_small_writes.cuh); a push resets it to 0. */
    private final DeviceBuffer cursor = new DeviceBuffer();
    private int words;
    private int chunks;
    private int stride;
    private long totalBlocks;
    private long freeBlocks;

    @Override
    public void push(PoolTable pool) {
        TableKernels.HeapLayout l = pool.heapLayout();
        long[] bits = pool.heapUsedBits();
        words = l.words();
        chunks = l.chunkOffsets().length;
        stride = l.stride();
        totalBlocks = l.firstBlocks().length == 0 ? 0
                : l.firstBlocks()[chunks - 1] + l.chunkLengths()[chunks - 1] / stride;
        freeBlocks = freeIn(bits);
        if (totalBlocks >= 1L << 32) {
            throw new IllegalStateException("a value heap of " + totalBlocks + " blocks; the GPU heap counts them in 32 bits");
        }
        bitmap.ensure(Math.max(8, words * 8L));
        freePrefix.ensure(Math.max(4, words * 4L));
        if (words > 0) {
            cuMemcpyHtoD(bitmap.pointer(), Pointer.to(bits), words * 8L);
        }
        long[] table = new long[Math.max(1, chunks * 3)];
        System.arraycopy(l.chunkOffsets(), 0, table, 0, chunks);
        System.arraycopy(l.chunkLengths(), 0, table, chunks, chunks);
        System.arraycopy(l.firstBlocks(), 0, table, 2 * chunks, chunks);
        chunkTable.ensure(table.length * 8L);
        cuMemcpyHtoD(chunkTable.pointer(), Pointer.to(table), table.length * 8L);
        cursor.ensure(8);
        cuMemcpyHtoD(cursor.pointer(), Pointer.to(new long[] {0}), 8);
    }

    @Override
    public void pull(PoolTable pool) {
        long[] bits = new long[words];
        if (words > 0) {
            cuMemcpyDtoH(Pointer.to(bits), bitmap.pointer(), words * 8L);
        }
        pool.replaceHeapUsedBits(bits);
        freeBlocks = freeIn(bits);
    }

    /** Blocks free in {@code bits} (the bits past the last block are set, in use). */
    private static long freeIn(long[] bits) {
        long free = 0;
        for (long w : bits) {
            free += Long.bitCount(~w);
        }
        return free;
    }

    @Override
    public byte[] params() {
        long base = chunkTable.address();
        return KernelParams.heap(bitmap.address(), words, base, base + chunks * 8L, base + chunks * 16L, chunks, stride,
                freePrefix.address(), cursor.address());
    }

    @Override
    public String describe() {
        return "a bitmap of " + totalBlocks + " blocks of " + stride + " bytes, " + freeBlocks + " free by the counts";
    }

    @Override
    public boolean segmented() {
        return false;
    }

    @Override
    public long segments() {
        return 0;
    }

    @Override
    public long words() {
        return words;
    }

    @Override
    public long freePrefixAddress() {
        return freePrefix.address();
    }

    @Override
    public long freeBlocks() {
        return freeBlocks;
    }

    @Override
    public long totalBlocks() {
        return totalBlocks;
    }

    @Override
    public void account(long taken, long freed) {
        freeBlocks += freed - taken;
    }

    @Override
    public void close() {
        bitmap.close();
        chunkTable.close();
        freePrefix.close();
        cursor.close();
    }
}
