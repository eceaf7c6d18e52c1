package org.gphash.persistence;

/** The file system could not provide space for the pool to grow (for example it is full). */
public final class PoolSpaceException extends PoolIoException {
    private static final long serialVersionUID = 1L;

    public PoolSpaceException(String message, Throwable cause) {
        super(message, cause);
    }
}
