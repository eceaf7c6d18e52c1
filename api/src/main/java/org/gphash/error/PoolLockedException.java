package org.gphash.error;

/** The pool is already open, in this process or another; pools are opened exclusively. */
public final class PoolLockedException extends PoolIoException {
    private static final long serialVersionUID = 1L;

    /**
     * An exception with this message.
     *
     * @param message which pool, and who holds it where that is known
     */
    public PoolLockedException(String message) {
        super(message);
    }
}
