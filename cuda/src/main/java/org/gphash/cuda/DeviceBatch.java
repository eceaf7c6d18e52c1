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
        if (kindColumn.length < n || keyColumn.length < (long) n * keySize || valueColumn.length < (long) n * valueSize) {
            throw new IllegalArgumentException("columns shorter than " + n + " operations");
        }
        cuda.bind();
        resize(n);
        cuMemcpyHtoD(kinds.pointer(), Pointer.to(kindColumn), n);
        cuMemcpyHtoD(keys.pointer(), Pointer.to(keyColumn), (long) n * keySize);
        cuMemcpyHtoD(values.pointer(), Pointer.to(valueColumn), (long) n * valueSize);
        size = n;
    }

    /**
     * Runs this batch through the public GPU view ({@link org.gphash.GPHashIndex#gpu()}), as an
     * application holding its columns in GPU memory would.
     */
    public void runOn(org.gphash.GpuFeatures gpu) {
        cuda.bind();  // reading the columns' addresses needs a context current, also on a thread new to CUDA
        gpu.executeOnDevice(size, CudaRuntime.address(kinds.pointer()), CudaRuntime.address(keys.pointer()),
                CudaRuntime.address(values.pointer()), CudaRuntime.address(codes.pointer()), CudaRuntime.address(out.pointer()));
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
    }
}
