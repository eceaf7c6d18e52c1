package org.gphash.persistence;

/** The pool is already open, in this process or another; pools are opened exclusively. */
public final class PoolLockedException extends PoolIoException {
    private static final long serialVersionUID = 1L;

    public PoolLockedException(String message) {
        super(message);
    }
}
