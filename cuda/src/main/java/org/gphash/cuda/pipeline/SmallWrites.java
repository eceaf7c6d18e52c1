package org.gphash.cuda.pipeline;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.cuda.runtime.KernelParams;
import org.gphash.cuda.staging.StagedBuffer;

/**
 * The host side of a small writing batch (pipeline/pipe_small_writes.cuh): one copy in, one
 * cooperative launch and one copy out. The batch's descriptor (PipeBatch) and its kinds, keys and values go to the
 * GPU as one block of pinned memory. The counters, codes and values read come back as another. A
 * host lane would make seven copies of a few bytes each, and those copies were more than half of
 * such a batch's GPU time. Not thread-safe (the engine runs
 * one batch at a time).
 *
 * <p>In: {@code descriptor | kinds | keys | values}. Out: {@code counters | codes | values read}.
 * A batch is laid out for its size class ({@link #layoutFor}: 16, 32, 64, ... operations, up to the
 * most the engine's tuning sends here, {@link org.gphash.GpuTuning#smallWritesMax()}), and both copies
 * move its class's whole layout. Within a class the addresses and sizes never change, so the copies
 * and the launch replay as one CUDA graph per class. One layout for the largest batch made every
 * batch of 8 move 128 operations' worth of values each way, and YCSB-A from 16 threads slower.
 */
final class SmallWrites implements AutoCloseable {

    private static final long DESCRIPTOR_BYTES = KernelParams.PIPE_BATCH_FIELDS * 8L;
    private static final long COUNTER_BYTES = KernelParams.PIPE_COUNTERS * 8L;
    private final int max;
    private final int keySize;
    private final int valueSize;
    /** {@code descriptor | kinds | keys | values} in; {@code counters | codes | values read} out. */
    final StagedBuffer in = new StagedBuffer();
    final StagedBuffer out = new StagedBuffer();
    private long inBytes;
    private long outBytes;
    private int layout;
    private int n;
    private boolean reads;

    /** @param max the most operations of a batch staged here ({@link org.gphash.GpuTuning#smallWritesMax()}) */
    SmallWrites(int max, int keySize, int valueSize) {
        this.max = Math.max(1, max);
        this.keySize = keySize;
        this.valueSize = valueSize;
    }

    private static long align(long bytes) {
        return (bytes + 7) & ~7L;
    }

    /** The operations a batch of {@code n} is laid out for: the power of two from 16 that holds it, at most {@code max}. */
    static int layoutFor(int n, int max) {
        int c = 16;
        while (c < n) {
            c <<= 1;
        }
        return Math.min(c, max);
    }

    private long inBytes(int ops) {
        return DESCRIPTOR_BYTES + align(ops) + align((long) ops * keySize) + (long) ops * valueSize;
    }

    private long outBytes(int ops) {
        return COUNTER_BYTES + align(ops) + (long) ops * valueSize;
    }

    /**
     * Lays {@code batch} out in pinned memory, its descriptor pointing into the device buffers;
     * {@code clock}: BktCache's clock, as every batch's descriptor carries it.
     */
    void stage(Batch batch, boolean withReads, long clock) {
        n = batch.size();
        if (n > max) {
            throw new IllegalArgumentException("a small writing batch holds at most " + max + " operations, got " + n);
        }
        reads = withReads;
        layout = layoutFor(n, max);
        long kindsAt = DESCRIPTOR_BYTES;
        long keysAt = kindsAt + align(layout);
        long valuesAt = keysAt + align((long) layout * keySize);
        inBytes = inBytes(layout);
        long codesAt = COUNTER_BYTES;
        long readAt = codesAt + align(layout);
        outBytes = outBytes(layout);
        in.ensure(inBytes(max));  // the largest class at once: the buffers' addresses never change
        out.ensure(outBytes(max));
        MemorySegment h = in.host();
        long base = in.deviceAddress();
        long outBase = out.deviceAddress();
        long[] descriptor = KernelParams.pipeBatch(n, base + kindsAt, base + keysAt, base + valuesAt, outBase + codesAt,
                reads ? outBase + readAt : 0, 0, clock, 0, 0, 0).words();
        for (int i = 0; i < descriptor.length; i++) {
            h.set(ValueLayout.JAVA_LONG, i * 8L, descriptor[i]);
        }
        MemorySegment.copy(batch.kinds(), 0, h, kindsAt, n);
        MemorySegment.copy(batch.keys(), 0, h, keysAt, (long) n * keySize);
        MemorySegment.copy(batch.values(), 0, h, valuesAt, (long) n * valueSize);
    }

    /** The operations the batch staged last is laid out for (its size class). */
    int layout() {
        return layout;
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
            MemorySegment.copy(o, COUNTER_BYTES + align(layout), result.values(), 0, (long) n * valueSize);
        }
    }

    @Override
    public void close() {
        in.close();
        out.close();
    }
}
