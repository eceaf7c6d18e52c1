package org.gphash;

import org.gphash.error.GPHashException;

/**
 * The pool exists but was created with a different key size, value size or geometry than the
 * builder asks for. Nothing was written to it.
 */
public final class PoolConfigMismatchException extends GPHashException {
    private static final long serialVersionUID = 1L;

    /**
     * The pool does not match the configuration.
     *
     * @param message the fields that differ, with both values
     */
    public PoolConfigMismatchException(String message) {
        super(message);
    }
}
