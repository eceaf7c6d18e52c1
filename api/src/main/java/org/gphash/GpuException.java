package org.gphash;

import org.gphash.error.GPHashException;

/**
 * The GPU or its driver failed under an operation of the GPU engine (an out-of-memory allocation, a
 * kernel fault, a lost device). The message names the pool, what was being done and the driver's
 * error in one line; the driver's own exception is the cause. After a kernel fault the CUDA context
 * is unusable: close the index (the pool is then recovered on the next open, as after a crash).
 */
public final class GpuException extends GPHashException {
    private static final long serialVersionUID = 1L;

    /**
     * A failure with this message.
     *
     * @param message the pool, what was being done, and the driver's error, in one line
     * @param cause   the driver binding's exception
     */
    public GpuException(String message, Throwable cause) {
        super(message, cause);
    }
}
