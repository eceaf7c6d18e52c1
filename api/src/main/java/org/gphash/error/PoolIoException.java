package org.gphash.error;

/** An I/O failure on a pool file (opening, mapping, growing, syncing, copying), with the file named in the message. */
public class PoolIoException extends GPHashException {
    private static final long serialVersionUID = 1L;

    /**
     * An exception with this message.
     *
     * @param message what failed, naming the pool file
     */
    public PoolIoException(String message) {
        super(message);
    }

    /**
     * An exception with this message.
     *
     * @param message what failed, naming the pool file
     * @param cause   the I/O failure underneath
     */
    public PoolIoException(String message, Throwable cause) {
        super(message, cause);
    }
}
