package org.gphash.bench;

import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.BatchResult;

/**
 * The paper's CPU-assisted baseline: a GPU application whose index is the CPU engine on the host.
 * Each batch is copied device to host, run by the CPU engine, and its results copied back, through
 * a {@link DeviceTransfer} (a real one on the GPU machine; none here).
 */
public final class CpuAssistedStore extends GPHashStore {

    private final DeviceTransfer transfer;

    public CpuAssistedStore(StoreConfig config, DeviceTransfer transfer) {
        super(config, Backend.CPU);
        this.transfer = transfer;
    }

    @Override
    public String name() {
        return "cpu-assisted";
    }

    @Override
    public String description() {
        return "GPHash CPU engine with the GPU copies of a CPU-assisted GPU application; copies: " + transfer.name();
    }

    @Override
    protected void runBatch(Batch batch, BatchResult result) {
        transfer.toHost(batch.kinds(), batch.keys(), batch.values());
        super.runBatch(batch, result);
        transfer.toDevice(result.outcomeCodes().asSlice(0, batch.size()), result.values());
    }

    @Override
    public void close() {
        try {
            transfer.close();
        } finally {
            super.close();
        }
    }
}
