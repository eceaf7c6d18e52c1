package org.gphash;

import org.gphash.error.GPHashException;

/** The requested backend cannot run here (for example no GPU engine, CUDA driver or GPU). */
public final class BackendUnavailableException extends GPHashException {
    private static final long serialVersionUID = 1L;

    /**
     * The backend cannot run here.
     *
     * @param message what is missing, in one line
     */
    public BackendUnavailableException(String message) {
        super(message);
    }

    /**
     * The backend cannot run here.
     *
     * @param message what is missing, in one line
     * @param cause   the failure that showed it (a driver error, a missing library)
     */
    public BackendUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
