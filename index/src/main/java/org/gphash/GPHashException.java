package org.gphash;

/** Base of the engine's own exceptions: each names the pool and what is wrong. */
public class GPHashException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public GPHashException(String message) {
        super(message);
    }

    public GPHashException(String message, Throwable cause) {
        super(message, cause);
    }
}
