package org.gphash.error;

/** The file system could not provide space for the pool to be created or to grow (for example it is full). */
public final class PoolSpaceException extends PoolIoException {
    private static final long serialVersionUID = 1L;

    /**
     * An exception with this message.
     *
     * @param message how much space was wanted, for which pool
     * @param cause   the file system's failure
     */
    public PoolSpaceException(String message, Throwable cause) {
        super(message, cause);
    }
}
