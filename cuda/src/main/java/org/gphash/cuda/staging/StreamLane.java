package org.gphash.cuda.staging;

import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoHAsync;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoDAsync;
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
import org.gphash.cuda.poolpath.GroupBuffers;
import org.gphash.cuda.runtime.CudaRuntime;
import org.gphash.cuda.runtime.DeviceBuffer;
import org.gphash.cuda.runtime.KernelParams;
import org.gphash.cuda.runtime.Launcher;
import org.gphash.cuda.runtime.PinnedBuffer;

/**
 * One CUDA stream with its own pinned staging and device buffers: it copies a chunk of a batch in,
 * runs the batch kernel and copies the results out, all asynchronously, so that while one lane's
 * kernel runs the other lane's copies proceed (Mega-KV's pipeline). The host stages a chunk into
 * pinned memory, {@link #launch}es it, and later {@link #await}s it and reads the results.
 */
public final class StreamLane implements AutoCloseable {

    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;

    final CUstream stream = new CUstream();
    public final PinnedBuffer hostKinds = new PinnedBuffer();
    final PinnedBuffer hostKeys = new PinnedBuffer();
    final PinnedBuffer hostValues = new PinnedBuffer();
    final PinnedBuffer hostBlocks = new PinnedBuffer();
    public final PinnedBuffer hostCodes = new PinnedBuffer();
    public final PinnedBuffer hostOut = new PinnedBuffer();
    final PinnedBuffer hostCounters = new PinnedBuffer();
    private final DeviceBuffer kinds = new DeviceBuffer();
    private final DeviceBuffer keys = new DeviceBuffer();
    private final DeviceBuffer values = new DeviceBuffer();
    private final DeviceBuffer blocks = new DeviceBuffer();
    private final DeviceBuffer codes = new DeviceBuffer();
    private final DeviceBuffer out = new DeviceBuffer();
    private final DeviceBuffer retired = new DeviceBuffer();
    private final DeviceBuffer counters = new DeviceBuffer();
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
        hostKinds.ensure(c.n());
        hostKeys.ensure((long) c.n() * keySize);
        hostCodes.ensure(c.n());
        hostCounters.ensure(KernelParams.COUNTERS * 8L);
        MemorySegment batchKinds = c.batch().kinds();
        MemorySegment batchKeys = c.batch().keys();
        MemorySegment batchValues = c.batch().values();
        if (c.writes() > 0) {
            hostValues.ensure((long) c.n() * valueSize);
            hostBlocks.ensure(c.n() * 8L);
        }
        if (c.reads()) {
            hostOut.ensure((long) c.n() * valueSize);
        }
        if (c.ops() == null) {
            MemorySegment.copy(batchKinds, c.first(), hostKinds.segment(), 0, c.n());
            MemorySegment.copy(batchKeys, (long) c.first() * keySize, hostKeys.segment(), 0, (long) c.n() * keySize);
            if (c.writes() > 0) {
                MemorySegment.copy(batchValues, (long) c.first() * valueSize, hostValues.segment(), 0,
                        (long) c.n() * valueSize);
            }
        } else {
            for (int i = 0; i < c.n(); i++) {
                int op = c.ops()[i];
                hostKinds.segment().set(ValueLayout.JAVA_BYTE, i, batchKinds.get(ValueLayout.JAVA_BYTE, op));
                MemorySegment.copy(batchKeys, (long) op * keySize, hostKeys.segment(), (long) i * keySize, keySize);
                if (c.writes() > 0) {
                    MemorySegment.copy(batchValues, (long) op * valueSize, hostValues.segment(), (long) i * valueSize,
                            valueSize);
                }
            }
        }
        if (c.writes() > 0) {
            MemorySegment k = hostKinds.segment();
            MemorySegment b = hostBlocks.segment();
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
        kinds.ensure(n);
        keys.ensure(n * keySize);
        codes.ensure(n);
        counters.ensure(KernelParams.COUNTERS * 8L);
        long retiredCapacity = KernelParams.retiredCapacity(n);
        retired.ensure(retiredCapacity * 8);
        cuMemcpyHtoDAsync(kinds.pointer(), hostKinds.pointer(), n, stream);
        cuMemcpyHtoDAsync(keys.pointer(), hostKeys.pointer(), n * keySize, stream);
        if (c.writes() > 0) {
            values.ensure(n * valueSize);
            blocks.ensure(n * 8);
            cuMemcpyHtoDAsync(values.pointer(), hostValues.pointer(), n * valueSize, stream);
            cuMemcpyHtoDAsync(blocks.pointer(), hostBlocks.pointer(), n * 8, stream);
        }
        if (c.reads()) {
            out.ensure(n * valueSize);
        }
        cuMemsetD8Async(counters.pointer(), (byte) 0, KernelParams.COUNTERS * 8L, stream);
        groups.reset(n, stream);
        byte[] params = KernelParams.batch(n, kinds.address(), keys.address(), values.address(), blocks.address(),
                codes.address(), out.address(), retired.address(), retiredCapacity, counters.address(), false,
                groups.fields());
        Launcher.launch(cuda.groupBatch, n, stream, table, params);
        Launcher.launch(cuda.batch, n, stream, table, params, cache);
        cuMemcpyDtoHAsync(hostCodes.pointer(), codes.pointer(), n, stream);
        if (c.reads()) {
            cuMemcpyDtoHAsync(hostOut.pointer(), out.pointer(), n * valueSize, stream);
        }
        cuMemcpyDtoHAsync(hostCounters.pointer(), counters.pointer(), KernelParams.COUNTERS * 8L, stream);
    }

    /** Waits for the lane's work; the pinned result buffers are then valid. */
    public void await() {
        cuStreamSynchronize(stream);
    }

    public long counter(int index) {
        return hostCounters.segment().get(LONG, index * 8L);
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
        for (AutoCloseable b : new AutoCloseable[] {hostKinds, hostKeys, hostValues, hostBlocks, hostCodes, hostOut,
                hostCounters, kinds, keys, values, blocks, codes, out, retired, counters, groups}) {
            try {
                b.close();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
        cuStreamDestroy(stream);
    }
}
