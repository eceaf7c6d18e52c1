package org.gphash.recovery;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;

import org.gphash.error.GPHashException;
import org.gphash.error.PoolIoException;
import org.gphash.error.PoolLockedException;

/**
 * How the tool's commands end: the exit codes, the failure that carries one, and the words a person
 * reads for any failure. Apart from {@link RecoveryTool}, which lists the commands, so that the
 * commands and the tool do not import each other.
 */
final class ToolExit {

    /** A sound pool, or a command that did what it was asked. */
    static final int SOUND = 0;
    /** A pool that is not sound, or a command that failed on the pool's contents. */
    static final int UNSOUND = 1;
    /** Bad usage, or a pool that cannot be opened at all (no such file, locked, not a pool). */
    static final int CANNOT_RUN = 2;

    private ToolExit() {
    }

    /** The message a person reads: the exception's own words, never a JDK class name (issue 55). */
    static String describe(Throwable e) {
        if (e instanceof PoolLockedException) {
            return e.getMessage() + " (close the program that has it open, then try again)";
        }
        if (e instanceof UncheckedIOException u && u.getCause() != null) {
            return describe(u.getCause());
        }
        if (e instanceof NoSuchFileException f) {
            return "no such file or directory: " + f.getFile();
        }
        if (e instanceof AccessDeniedException f) {
            return "permission denied: " + f.getFile();
        }
        if (e instanceof FileAlreadyExistsException f) {
            return f.getFile() + " already exists";
        }
        if (e instanceof FileSystemException f) {
            return (f.getReason() != null ? f.getReason() : "cannot use it") + ": " + f.getFile();
        }
        if (e.getMessage() != null && (e instanceof GPHashException || e instanceof PoolIoException
                || e instanceof Failure || e instanceof IOException)) {
            return e.getMessage();
        }
        return e.toString();
    }

    /** A failure the tool explains in its message; exit code 1 unless it says otherwise. */
    static final class Failure extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final int code;

        Failure(String message) {
            this(message, UNSOUND);
        }

        Failure(String message, int code) {
            super(message);
            this.code = code;
        }

        Failure(String message, Throwable cause) {
            super(message, cause);
            this.code = cause instanceof FileSystemException ? CANNOT_RUN : UNSOUND;
        }
    }
}
