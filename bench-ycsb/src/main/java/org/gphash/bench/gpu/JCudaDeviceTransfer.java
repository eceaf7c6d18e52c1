package org.gphash.bench.gpu;

import java.lang.foreign.MemorySegment;

import org.gphash.bench.DeviceTransfer;
import org.gphash.cuda.GpuEngine;
import org.gphash.cuda.HostRoundTrip;

/**
 * Real GPU copies for the cpu-assisted baseline of {@code ./gphash bench ycsb}: each batch column
 * crosses PCIe through pinned buffers as it would for a GPU application whose index lives on the
 * host. Reports itself unreal (and is skipped) where there is no GPU.
 */
public final class JCudaDeviceTransfer implements DeviceTransfer {

    private HostRoundTrip copies;

    @Override
    public String name() {
        return "cuda memcpy through pinned buffers (JCuda)";
    }

    @Override
    public boolean real() {
        return GpuEngine.available();
    }

    private HostRoundTrip copies() {
        if (copies == null) {
            copies = new HostRoundTrip();
        }
        return copies;
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
        if (copies != null) {
            copies.close();
        }
    }
}
