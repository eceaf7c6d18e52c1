package org.gphash.cuda.runtime;

import java.nio.file.Path;
import java.util.function.Supplier;

import jcuda.CudaException;
import org.gphash.GpuException;

/**
 * JCuda's exceptions turned into the API's: every entry point of the GPU engine runs its body
 * through {@link #during}, or (batches, where a lambda and a description per call would cost the
 * hot path) catches and converts with {@link #of}, so no {@link CudaException} reaches a caller.
 */
public final class GpuFailure {

    private GpuFailure() {
    }

    /** The API's exception for {@code e}, raised while doing {@code what} on {@code pool}. */
    public static GpuException of(Path pool, String what, CudaException e) {
        return new GpuException("GPU engine on " + pool + ": " + what + " failed: "
                + GpuUnavailable.oneLine(e.getMessage()), e);
    }

    /** Runs {@code body}, turning a CUDA failure into a {@link GpuException}. */
    public static <T> T during(Path pool, String what, Supplier<T> body) {
        try {
            return body.get();
        } catch (CudaException e) {
            throw of(pool, what, e);
        }
    }

    /** As {@link #during(Path, String, Supplier)}, for a body without a result. */
    public static void during(Path pool, String what, Runnable body) {
        try {
            body.run();
        } catch (CudaException e) {
            throw of(pool, what, e);
        }
    }
}
