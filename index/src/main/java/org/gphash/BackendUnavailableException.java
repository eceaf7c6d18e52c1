package org.gphash;

/** The requested backend cannot run here (for example no GPU engine, CUDA driver or GPU). */
public final class BackendUnavailableException extends GPHashException {
    private static final long serialVersionUID = 1L;

    public BackendUnavailableException(String message) {
        super(message);
    }

    public BackendUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
