package org.gphash.error;

/**
 * The root of every exception gphash throws for a pool or an engine, so that one
 * {@code catch (GPHashException e)} sees them all: a pool file that cannot be opened, locked, grown
 * or synced ({@link PoolIoException} and its kinds), and the index's own failures (in
 * {@code org.gphash}: format, configuration, a full pool, the GPU). Each message names the pool and
 * what is wrong, on one line. Misuse of the API (a key of the wrong size, a closed index) is
 * {@link IllegalArgumentException} or {@link IllegalStateException}, as in the JDK.
 */
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
