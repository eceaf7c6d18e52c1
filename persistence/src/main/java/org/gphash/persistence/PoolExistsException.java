package org.gphash.persistence;

/** A pool cannot be created: something already exists at its path (a file, or a symbolic link). */
public final class PoolExistsException extends PoolIoException {
    private static final long serialVersionUID = 1L;

    public PoolExistsException(String message) {
        super(message);
    }
}
