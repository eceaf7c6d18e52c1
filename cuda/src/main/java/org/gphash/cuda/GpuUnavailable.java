package org.gphash.cuda;

import org.gphash.BackendUnavailableException;

/** Why the GPU engine cannot run here, as the exception every entry point throws. */
final class GpuUnavailable {

    private GpuUnavailable() {
    }

    static BackendUnavailableException because(String why, Throwable cause) {
        String message = "the GPU backend cannot run here: " + why;
        return cause == null ? new BackendUnavailableException(message) : new BackendUnavailableException(message, cause);
    }
}
