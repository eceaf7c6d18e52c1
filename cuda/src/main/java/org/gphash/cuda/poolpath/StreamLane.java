package org.gphash.cuda.poolpath;

import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuMemsetD8Async;
import static jcuda.driver.JCudaDriver.cuStreamCreate;
import static jcuda.driver.JCudaDriver.cuStreamDestroy;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import jcuda.Pointer;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;
import org.gphash.Batch;
import org.gphash.OpKind;
import org.gphash.cuda.runtime.CudaRuntime;
import org.gphash.cuda.runtime.DeviceBuffer;
import org.gphash.cuda.runtime.KernelParams;
import org.gphash.cuda.runtime.Launcher;
import org.gphash.cuda.staging.StagedBuffer;

/**
 * One CUDA stream with its own pinned staging and device buffers: it copies a chunk of a batch in,
 * runs the batch kernel and copies the results out, all asynchronously, so that while one lane's
 * kernel runs the other lane's copies proceed (Mega-KV's pipeline). The host stages a chunk into
 * pinned memory, {@link #launch}es it, and later {@link #await}s it and reads the results.
 */
public final class StreamLane implements AutoCloseable {

    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;

    final CUstream stream = new CUstream();
    /** The chunk's columns in (kinds, keys, values, reserved value blocks) and out (codes, values read, counters). */
    public final StagedBuffer kinds = new StagedBuffer();
    private final StagedBuffer keys = new StagedBuffer();
    private final StagedBuffer values = new StagedBuffer();
    private final StagedBuffer blocks = new StagedBuffer();
    public final StagedBuffer codes = new StagedBuffer();
    public final StagedBuffer out = new StagedBuffer();
    private final StagedBuffer counters = new StagedBuffer();
    /** The value blocks the kernel unlinked, read back only when there are any. */
    private final DeviceBuffer retired = new DeviceBuffer();
    private final GroupBuffers groups = new GroupBuffers();

    /** The chunk in flight on this lane, or null. */
    public Chunk chunk;

    public StreamLane() {
        cuStreamCreate(stream, CUstream_flags.CU_STREAM_NON_BLOCKING);
    }

    /**
     * Operations {@code ops[0..n)} of {@code batch} (or {@code first..first+n} when ops is null), with
     * the value blocks reserved for those that write.
     */
    public record Chunk(Batch batch, int first, int[] ops, int n, int writes, boolean reads, long[] reservedBlocks) {
        public int op(int i) {
            return ops == null ? first + i : ops[i];
        }
    }

    /** Copies the chunk's kinds, keys, values and blocks into this lane's pinned buffers. */
    public void stage(Chunk c, int keySize, int valueSize) {
        kinds.ensure(c.n());
        keys.ensure((long) c.n() * keySize);
        codes.ensure(c.n());
        counters.ensure(KernelParams.COUNTERS * 8L);
        MemorySegment batchKinds = c.batch().kinds();
        MemorySegment batchKeys = c.batch().keys();
        MemorySegment batchValues = c.batch().values();
        if (c.writes() > 0) {
            values.ensure((long) c.n() * valueSize);
            blocks.ensure(c.n() * 8L);
        }
        if (c.reads()) {
            out.ensure((long) c.n() * valueSize);
        }
        if (c.ops() == null) {
            MemorySegment.copy(batchKinds, c.first(), kinds.host(), 0, c.n());
            MemorySegment.copy(batchKeys, (long) c.first() * keySize, keys.host(), 0, (long) c.n() * keySize);
            if (c.writes() > 0) {
                MemorySegment.copy(batchValues, (long) c.first() * valueSize, values.host(), 0, (long) c.n() * valueSize);
            }
        } else {
            for (int i = 0; i < c.n(); i++) {
                int op = c.ops()[i];
                kinds.host().set(ValueLayout.JAVA_BYTE, i, batchKinds.get(ValueLayout.JAVA_BYTE, op));
                MemorySegment.copy(batchKeys, (long) op * keySize, keys.host(), (long) i * keySize, keySize);
                if (c.writes() > 0) {
                    MemorySegment.copy(batchValues, (long) op * valueSize, values.host(), (long) i * valueSize, valueSize);
                }
            }
        }
        if (c.writes() > 0) {
            MemorySegment k = kinds.host();
            MemorySegment b = blocks.host();
            int j = 0;
            for (int i = 0; i < c.n(); i++) {
                if (writesValue(k.get(ValueLayout.JAVA_BYTE, i))) {
                    b.set(LONG, i * 8L, c.reservedBlocks()[j++]);
                }
            }
        }
        chunk = c;
    }

    public static boolean writesValue(byte kind) {
        return OpKind.ofOrdinal(kind).hasValue();
    }

    public static boolean readsValue(byte kind) {
        return kind == OpKind.GET.ordinal() || kind == OpKind.READ_MODIFY_WRITE.ordinal();
    }

    /** Queues copies in, the batch kernel, and copies out on this lane's stream. */
    public void launch(CudaRuntime cuda, byte[] table, byte[] cache, int keySize, int valueSize) {
        Chunk c = chunk;
        long n = c.n();
        long retiredCapacity = KernelParams.retiredCapacity(n);
        retired.ensure(retiredCapacity * 8);
        kinds.copyIn(n, stream);
        keys.copyIn(n * keySize, stream);
        if (c.writes() > 0) {
            values.copyIn(n * valueSize, stream);
            blocks.copyIn(n * 8, stream);
        }
        cuMemsetD8Async(counters.device(), (byte) 0, KernelParams.COUNTERS * 8L, stream);
        groups.reset(n, stream);
        // A column the chunk does not use is passed as it is: the kernel reads only what its kinds need.
        byte[] params = KernelParams.batch(n, kinds.deviceAddress(), keys.deviceAddress(), values.deviceAddress(),
                blocks.deviceAddress(), codes.deviceAddress(), out.deviceAddress(), retired.address(), retiredCapacity,
                counters.deviceAddress(), false, groups.fields());
        Launcher.launch(cuda.groupBatch, n, stream, table, params);
        Launcher.launch(cuda.batch, n, stream, table, params, cache);
        codes.copyOut(n, stream);
        if (c.reads()) {
            out.copyOut(n * valueSize, stream);
        }
        counters.copyOut(KernelParams.COUNTERS * 8L, stream);
    }

    /** Waits for the lane's work; the pinned result buffers are then valid. */
    public void await() {
        cuStreamSynchronize(stream);
    }

    public long counter(int index) {
        return counters.host().get(LONG, index * 8L);
    }

    /** The value blocks the finished chunk unlinked (at most the retired buffer's capacity). */
    public long[] retiredBlocks() {
        long count = Math.min(counter(KernelParams.RETIRED_COUNT), KernelParams.retiredCapacity(chunk.n()));
        long[] b = new long[(int) count];
        if (count > 0) {
            cuMemcpyDtoH(Pointer.to(b), retired.pointer(), count * 8);
        }
        return b;
    }

    public boolean retiredOverflowed() {
        return counter(KernelParams.RETIRED_COUNT) > KernelParams.retiredCapacity(chunk.n());
    }

    @Override
    public void close() {
        for (AutoCloseable b : new AutoCloseable[] {kinds, keys, values, blocks, codes, out, counters, retired, groups}) {
            try {
                b.close();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
        cuStreamDestroy(stream);
    }
}
