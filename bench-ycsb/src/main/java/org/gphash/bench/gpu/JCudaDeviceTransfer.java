package org.gphash.bench.gpu;

import java.lang.foreign.MemorySegment;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

import org.gphash.bench.DeviceTransfer;
import org.gphash.cuda.GpuEngines;

/**
 * Real GPU copies for the cpu-assisted baseline of {@code ./gphash bench ycsb}: each batch column
 * crosses PCIe through pinned buffers as it would for a GPU application whose index lives on the
 * host. Reports itself unreal (and is skipped) where there is no GPU.
 */
public final class JCudaDeviceTransfer implements DeviceTransfer {

    // One set of pinned and device buffers per client thread, as a GPU application with several
    // host threads would have: HostRoundTrip is not thread-safe.
    private final Queue<HostRoundTrip> all = new ConcurrentLinkedQueue<>();
    private final ThreadLocal<HostRoundTrip> perThread = ThreadLocal.withInitial(() -> {
        HostRoundTrip c = new HostRoundTrip();
        all.add(c);
        return c;
    });

    @Override
    public String name() {
        return "cuda memcpy through pinned buffers (JCuda)";
    }

    @Override
    public boolean real() {
        return GpuEngines.available();
    }

    private HostRoundTrip copies() {
        return perThread.get();
    }

    @Override
    public void toHost(MemorySegment kinds, MemorySegment keys, MemorySegment values) {
        HostRoundTrip c = copies();
        c.fromDevice(kinds);
        c.fromDevice(keys);
        if (values != null && values.byteSize() > 0) {
            c.fromDevice(values);
        }
    }

    @Override
    public void toDevice(MemorySegment outcomes, MemorySegment values) {
        HostRoundTrip c = copies();
        c.valuesToDevice(outcomes);
        if (values != null && values.byteSize() > 0) {
            c.valuesToDevice(values);
        }
    }

    @Override
    public void close() {
        HostRoundTrip c;
        while ((c = all.poll()) != null) {
            c.close();
        }
    }
}
