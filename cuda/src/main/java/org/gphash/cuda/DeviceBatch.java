package org.gphash.cuda;

import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;

import java.lang.foreign.MemorySegment;

import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import org.gphash.Batch;
import org.gphash.cuda.runtime.CudaRuntime;
import org.gphash.cuda.runtime.DeviceBuffer;
import org.gphash.spi.SegmentBytes;

/**
 * A batch whose columns live in GPU memory, for {@link GpuEngine#executeOnDevice(DeviceBatch)}:
 * kinds, keys and values in, outcome codes and values out. An application that already holds its
 * keys on the GPU (DLRM lookups) fills the device buffers itself ({@link #kinds()}, {@link #keys()},
 * {@link #values()}); {@link #upload(Batch)} is for tests and benchmarks. Not thread-safe.
 */
public final class DeviceBatch implements AutoCloseable {

    private final int keySize;
    private final int valueSize;
    private final DeviceBuffer kinds = new DeviceBuffer();
    private final DeviceBuffer keys = new DeviceBuffer();
    private final DeviceBuffer values = new DeviceBuffer();
    private final DeviceBuffer codes = new DeviceBuffer();
    private final DeviceBuffer out = new DeviceBuffer();
    /** Each value's length and each value read's, where values have lengths of their own ({@link #uploadLengths}); else unused. */
    private final DeviceBuffer lengths = new DeviceBuffer();
    private final DeviceBuffer outLengths = new DeviceBuffer();
    private boolean withLengths;
    private long size;
    /** The GPU whose memory holds the columns (an engine's device-resident batches must be on its GPU). */
    private final CudaRuntime cuda;

    /** A batch in the memory of GPU 0. */
    public DeviceBatch(int keySize, int valueSize, long capacity) {
        this(CudaRuntime.get(), keySize, valueSize, capacity);
    }

    /** A batch in the memory of {@code cuda}'s GPU ({@link GpuEngine#cuda()} for an engine's). */
    public DeviceBatch(CudaRuntime cuda, int keySize, int valueSize, long capacity) {
        this.keySize = keySize;
        this.valueSize = valueSize;
        this.cuda = cuda;
        cuda.bind();
        resize(capacity);
    }

    private void resize(long n) {
        kinds.ensure(n);
        keys.ensure(n * keySize);
        values.ensure(n * valueSize);
        codes.ensure(n);
        out.ensure(n * valueSize);
        if (withLengths) {
            lengths.ensure(Math.max(4, n * 4));
            outLengths.ensure(Math.max(4, n * 4));
        }
    }

    /**
     * Gives the batch's values lengths of their own (format 3; {@link org.gphash.GpuFeatures#executeOnDevice(long,
     * long, long, long, long, long, long, long)}): operation i's value is the first {@code lengthColumn[i]} bytes of
     * its place, and the lengths of the values read come back ({@link #downloadOutLengths}). For the first
     * {@link #size()} operations, after {@link #upload}.
     */
    public void uploadLengths(int[] lengthColumn) {
        if (lengthColumn.length < size) {
            throw new IllegalArgumentException("lengths of " + lengthColumn.length + " operations for a batch of " + size);
        }
        cuda.bind();
        withLengths = true;
        resize(size);
        if (size > 0) {
            cuMemcpyHtoD(lengths.pointer(), Pointer.to(lengthColumn), size * 4);
        }
    }

    /** {@return the lengths of the values read, copied to the host (for tests)} */
    public int[] downloadOutLengths() {
        cuda.bind();
        int[] l = new int[(int) size];
        if (withLengths && size > 0) {
            cuMemcpyDtoH(Pointer.to(l), outLengths.pointer(), size * 4);
        }
        return l;
    }

    /** {@return the lengths column, or null where values have the value size} */
    public CUdeviceptr lengths() {
        return withLengths ? lengths.pointer() : null;
    }

    /** {@return where the lengths of values read go, or null where values have the value size} */
    public CUdeviceptr outLengths() {
        return withLengths ? outLengths.pointer() : null;
    }

    /** Copies a host batch's columns to the GPU; the batch then has {@code batch.size()} operations. */
    public void upload(Batch batch) {
        // Not toArray: see SegmentBytes.
        upload(batch.size(), SegmentBytes.copyOf(batch.kinds()), SegmentBytes.copyOf(batch.keys()),
                SegmentBytes.copyOf(batch.values()));
    }

    /**
     * Copies the first {@code n} operations of columns laid out as {@link Batch}'s (kind ordinals,
     * keys back to back, values back to back) to the GPU; the batch then has {@code n} operations.
     */
    public void upload(int n, byte[] kindColumn, byte[] keyColumn, byte[] valueColumn) {
        if (valueColumn.length < (long) n * valueSize) {
            throw new IllegalArgumentException("a value column shorter than " + n + " operations");
        }
        uploadKindsAndKeys(n, kindColumn, keyColumn);
        cuMemcpyHtoD(values.pointer(), Pointer.to(valueColumn), (long) n * valueSize);
    }

    /**
     * Copies the kinds and keys of {@code n} operations to the GPU; the batch then has {@code n}
     * operations, whose values the caller writes into {@link #values()} itself (a column too large for
     * one Java array, as 2^20 values of 4 KiB are).
     */
    public void uploadKindsAndKeys(int n, byte[] kindColumn, byte[] keyColumn) {
        if (kindColumn.length < n || keyColumn.length < (long) n * keySize) {
            throw new IllegalArgumentException("columns shorter than " + n + " operations");
        }
        cuda.bind();
        resize(n);
        cuMemcpyHtoD(kinds.pointer(), Pointer.to(kindColumn), n);
        cuMemcpyHtoD(keys.pointer(), Pointer.to(keyColumn), (long) n * keySize);
        size = n;
    }

    /**
     * Runs this batch through the public GPU view ({@link org.gphash.GPHashIndex#gpu()}), as an
     * application holding its columns in GPU memory would.
     */
    public void runOn(org.gphash.GpuFeatures gpu) {
        cuda.bind();  // reading the columns' addresses needs a context current, also on a thread new to CUDA
        gpu.executeOnDevice(size, CudaRuntime.address(kinds.pointer()), CudaRuntime.address(keys.pointer()),
                CudaRuntime.address(values.pointer()), CudaRuntime.address(lengths()), CudaRuntime.address(codes.pointer()),
                CudaRuntime.address(out.pointer()), CudaRuntime.address(outLengths()));
    }

    /** Sets the number of operations after the application filled the device buffers itself. */
    public void setSize(long n) {
        resize(n);
        size = n;
    }

    public long size() {
        return size;
    }

    public CUdeviceptr kinds() {
        return kinds.pointer();
    }

    public CUdeviceptr keys() {
        return keys.pointer();
    }

    public CUdeviceptr values() {
        return values.pointer();
    }

    public CUdeviceptr codes() {
        return codes.pointer();
    }

    public CUdeviceptr out() {
        return out.pointer();
    }

    /** {@return the outcome codes, copied to the host (for tests)} */
    public byte[] downloadCodes() {
        cuda.bind();
        byte[] c = new byte[(int) size];
        cuMemcpyDtoH(Pointer.to(c), codes.pointer(), size);
        return c;
    }

    /** {@return the values out, copied to the host (for tests)} */
    public MemorySegment downloadValues() {
        cuda.bind();
        byte[] v = new byte[(int) (size * valueSize)];
        cuMemcpyDtoH(Pointer.to(v), out.pointer(), v.length);
        return MemorySegment.ofArray(v);
    }

    @Override
    public void close() {
        cuda.bind();
        kinds.close();
        keys.close();
        values.close();
        codes.close();
        out.close();
        lengths.close();
        outLengths.close();
    }
}
