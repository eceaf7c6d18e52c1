package org.gphash.bench;

import java.lang.foreign.MemorySegment;
import java.util.ServiceLoader;

/**
 * The copies a GPU application pays when its hash index lives on the host (the paper's
 * "CPU-assisted" approach): the batch's keys (and values) go from GPU memory to the host before
 * the CPU engine runs, the results come back afterwards.
 *
 * <p>This is the hook for the GPU machine: the cuda module (or any jar on the class path) can
 * provide an implementation through {@link java.util.ServiceLoader} (a
 * {@code META-INF/services/org.gphash.bench.DeviceTransfer} file) that keeps a device-side copy of
 * each batch and times real cudaMemcpy calls. Without one, {@link NoDevice} is used and the
 * cpu-assisted baseline equals the plain CPU engine, which the report says.
 */
public interface DeviceTransfer extends AutoCloseable {

    /** A short name for the report, e.g. "cuda memcpy (pinned)". */
    String name();

    /** Whether this implementation really moves data to and from a device. */
    boolean real();

    /** Device to host: the operation kinds, keys and values of a batch (the source is the device-side copy). */
    void toHost(MemorySegment kinds, MemorySegment keys, MemorySegment values);

    /** Host to device: the outcomes and values the CPU engine produced. */
    void toDevice(MemorySegment outcomes, MemorySegment values);

    @Override
    default void close() {
    }

    /** The first implementation found by the ServiceLoader, else {@link NoDevice}. */
    static DeviceTransfer load() {
        for (DeviceTransfer t : ServiceLoader.load(DeviceTransfer.class)) {
            if (t.real()) {
                return t;  // a provider on a machine without a GPU says so and is skipped
            }
        }
        return new NoDevice();
    }

    /** No GPU here: no copies. */
    final class NoDevice implements DeviceTransfer {
        @Override
        public String name() {
            return "none (no DeviceTransfer implementation on the class path: no GPU copies measured)";
        }

        @Override
        public boolean real() {
            return false;
        }

        @Override
        public void toHost(MemorySegment kinds, MemorySegment keys, MemorySegment values) {
        }

        @Override
        public void toDevice(MemorySegment outcomes, MemorySegment values) {
        }
    }
}
