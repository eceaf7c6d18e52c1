package org.gphash;

/**
 * The pool exists but was created with a different key size, value size or geometry than the
 * builder asks for. Nothing was written to it.
 */
public final class PoolConfigMismatchException extends GPHashException {
    private static final long serialVersionUID = 1L;

    public PoolConfigMismatchException(String message) {
        super(message);
    }
}
