package org.gphash;

/**
 * The pool would have to grow beyond the configured maximum size. The operation that needed the
 * space did not happen; everything stored before is intact.
 */
public final class PoolFullException extends GPHashException {
    private static final long serialVersionUID = 1L;

    public PoolFullException(String message) {
        super(message);
    }
}
