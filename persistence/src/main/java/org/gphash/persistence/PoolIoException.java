package org.gphash.persistence;

/** An I/O failure on a pool file (mapping, growing, syncing), with the file named in the message. */
public class PoolIoException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public PoolIoException(String message) {
        super(message);
    }

    public PoolIoException(String message, Throwable cause) {
        super(message, cause);
    }
}
