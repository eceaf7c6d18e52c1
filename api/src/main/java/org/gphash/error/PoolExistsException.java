package org.gphash.error;

/** A pool cannot be created: something already exists at its path (a file, or a symbolic link). */
public final class PoolExistsException extends PoolIoException {
    private static final long serialVersionUID = 1L;

    /**
     * An exception with this message.
     *
     * @param message the path, and what is there
     */
    public PoolExistsException(String message) {
        super(message);
    }
}
