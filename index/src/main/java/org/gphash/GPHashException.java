package org.gphash;

/** Base of the engine's own exceptions: each names the pool and what is wrong. */
public class GPHashException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /**
     * An exception with this message.
     *
     * @param message what is wrong, naming the pool
     */
    public GPHashException(String message) {
        super(message);
    }

    /**
     * An exception with this message.
     *
     * @param message what is wrong, naming the pool
     * @param cause   the failure underneath
     */
    public GPHashException(String message, Throwable cause) {
        super(message, cause);
    }
}
