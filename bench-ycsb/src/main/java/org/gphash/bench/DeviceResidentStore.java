package org.gphash.bench;

import java.lang.foreign.ValueLayout;
import java.util.Optional;

import org.gphash.Backend;
import org.gphash.GpuFeatures;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.cuda.DeviceBatch;

/**
 * The GPU engine as a GPU application uses it (the DLRM case, and the paper's comparison): the
 * batch's keys and values already sit in GPU memory, the engine runs it there through
 * {@link GpuFeatures#executeOnDevice}, and the outcomes and values stay there. A replay stages each
 * batch in GPU memory before its clock starts and fetches the results after it stops
 * ({@link #deviceResident()}); {@link #execute} alone does all three, for callers that time
 * nothing. One batch at a time ({@code execute} is synchronized).
 */
public final class DeviceResidentStore extends GPHashStore implements StoreUnderTest.DeviceResident {

    private final GpuFeatures gpu;
    private DeviceBatch device;

    /** @throws org.gphash.BackendUnavailableException where there is no usable GPU */
    public DeviceResidentStore(StoreConfig config) {
        super(config, Backend.GPU);
        this.gpu = index.gpu().orElseThrow();
    }

    @Override
    public String name() {
        return "gphash-gpu-device";
    }

    @Override
    public String description() {
        return "GPHash, GPU engine, batches resident in GPU memory (executeOnDevice), "
                + index.stats().persistenceMode().description();
    }

    @Override
    public Optional<StoreUnderTest.DeviceResident> deviceResident() {
        return Optional.of(this);
    }

    @Override
    public synchronized void execute(OpBatch batch, OpResults results) {
        stage(batch);
        run();
        fetch(batch, results);
    }

    @Override
    public synchronized void stage(OpBatch batch) {
        if (device == null) {
            device = new DeviceBatch(batch.keySize(), batch.valueSize(), Math.max(1024, batch.size()));
        }
        device.upload(batch.engineBatch());
    }

    @Override
    public synchronized void run() {
        device.runOn(gpu);
    }

    @Override
    public synchronized void fetch(OpBatch batch, OpResults results) {
        int n = batch.size();
        byte[] codes = device.downloadCodes();
        byte[] values = null;
        int vs = batch.valueSize();
        results.ensureCapacity(n);
        for (int i = 0; i < n; i++) {
            Outcome o = Outcome.ofCode(codes[i]);
            OpKind kind = batch.kind(i);
            if (o == Outcome.FOUND || (o == Outcome.REPLACED && kind == OpKind.READ_MODIFY_WRITE)) {
                if (values == null) {
                    values = device.downloadValues().toArray(ValueLayout.JAVA_BYTE);
                }
                results.setValue(i, o, values, i * vs);
            } else {
                results.set(i, o);
            }
        }
    }

    @Override
    public void close() {
        try {
            if (device != null) {
                device.close();
            }
        } finally {
            super.close();
        }
    }
}
