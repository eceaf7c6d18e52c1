package org.gphash;

import java.nio.file.Path;

import org.gphash.error.GPHashException;

/**
 * An operation on an index that is closed, or that was closing while the operation started. Every
 * call that races {@link GPHashIndex#close()} gets this one exception (before, three different
 * ones, among them the JDK's raw "Already closed"); nothing it asked for was done.
 */
public final class IndexClosedException extends GPHashException {
    private static final long serialVersionUID = 1L;

    /**
     * The index on {@code pool} is closed.
     *
     * @param pool the pool file
     */
    public IndexClosedException(Path pool) {
        super("index on " + pool + " is closed; nothing was done");
    }
}
