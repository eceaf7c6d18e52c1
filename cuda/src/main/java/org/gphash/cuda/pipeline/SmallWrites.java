package org.gphash.cuda.pipeline;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.cuda.runtime.KernelParams;
import org.gphash.cuda.staging.StagedBuffer;

/**
 * The host side of a small writing batch of distinct keys (pipeline/pipe_small_writes.cuh): one copy
 * in and one copy out. The batch's descriptor (PipeBatch) and its kinds, keys and values go to the
 * GPU as one block of pinned memory. The counters, codes and values read come back as another. A
 * host lane would make seven copies of a few bytes each, and on the H100 those copies were more than
 * half of such a batch's GPU time (29 of 52 us for a batch of 8). Not thread-safe (the engine runs
 * one batch at a time).
 *
 * <p>In: {@code descriptor | kinds | keys | values}. Out: {@code counters | codes | values read}.
 * The layout is that of the largest such batch, {@link org.gphash.GpuTuning#SMALL_WRITES_LIMIT} operations,
 * whatever the batch's size, and both copies move all of it (a few KiB): the addresses and sizes
 * never change, so the copies and the launch replay as one CUDA graph.
 */
final class SmallWrites implements AutoCloseable {

    private static final long DESCRIPTOR_BYTES = KernelParams.PIPE_BATCH_FIELDS * 8L;
    private static final long COUNTER_BYTES = KernelParams.PIPE_COUNTERS * 8L;
    private static final int MAX = org.gphash.GpuTuning.SMALL_WRITES_LIMIT;

    private final int keySize;
    private final int valueSize;
    /** {@code descriptor | kinds | keys | values} in; {@code counters | codes | values read} out. */
    final StagedBuffer in = new StagedBuffer();
    final StagedBuffer out = new StagedBuffer();
    private long inBytes;
    private long outBytes;
    private int n;
    private boolean reads;

    SmallWrites(int keySize, int valueSize) {
        this.keySize = keySize;
        this.valueSize = valueSize;
    }

    private static long align(long bytes) {
        return (bytes + 7) & ~7L;
    }

    /**
     * Lays {@code batch} out in pinned memory, its descriptor pointing into the device buffers;
     * {@code clock}: BktCache's clock, as every batch's descriptor carries it.
     */
    void stage(Batch batch, boolean withReads, long clock) {
        n = batch.size();
        if (n > MAX) {
            throw new IllegalArgumentException("a small writing batch holds at most " + MAX + " operations, got " + n);
        }
        reads = withReads;
        long kindsAt = DESCRIPTOR_BYTES;
        long keysAt = kindsAt + align(MAX);
        long valuesAt = keysAt + align((long) MAX * keySize);
        inBytes = valuesAt + (long) MAX * valueSize;
        long codesAt = COUNTER_BYTES;
        long readAt = codesAt + align(MAX);
        outBytes = readAt + (long) MAX * valueSize;
        in.ensure(inBytes);
        out.ensure(outBytes);
        MemorySegment h = in.host();
        long base = in.deviceAddress();
        long outBase = out.deviceAddress();
        long[] descriptor = {n, base + kindsAt, base + keysAt, base + valuesAt, outBase + codesAt,
                reads ? outBase + readAt : 0, 0, clock, 0};
        for (int i = 0; i < descriptor.length; i++) {
            h.set(ValueLayout.JAVA_LONG, i * 8L, descriptor[i]);
        }
        MemorySegment.copy(batch.kinds(), 0, h, kindsAt, n);
        MemorySegment.copy(batch.keys(), 0, h, keysAt, (long) n * keySize);
        MemorySegment.copy(batch.values(), 0, h, valuesAt, (long) n * valueSize);
    }

    long inBytes() {
        return inBytes;
    }

    long outBytes() {
        return outBytes;
    }

    /** The counters of the batch run last (after the copy out is done). */
    long[] counters() {
        long[] c = new long[KernelParams.PIPE_COUNTERS];
        for (int i = 0; i < c.length; i++) {
            c[i] = out.host().get(ValueLayout.JAVA_LONG, i * 8L);
        }
        return c;
    }

    /** The outcome code of operation i of the batch run last. */
    int code(int i) {
        return out.host().get(ValueLayout.JAVA_BYTE, COUNTER_BYTES + i);
    }

    /** Moves the codes and the values read into {@code result}. */
    void copyResults(BatchResult result) {
        MemorySegment o = out.host();
        MemorySegment.copy(o, COUNTER_BYTES, result.outcomeCodes(), 0, n);
        if (reads) {
            MemorySegment.copy(o, COUNTER_BYTES + align(MAX), result.values(), 0, (long) n * valueSize);
        }
    }

    @Override
    public void close() {
        in.close();
        out.close();
    }
}
