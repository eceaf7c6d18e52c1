package org.gphash.persistence;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;

import org.gphash.error.PoolExistsException;
import org.gphash.error.PoolIoException;
import org.gphash.error.PoolLockedException;
import org.gphash.posix.LibC;

/**
 * The lock that makes a pool file exclusive: {@code flock(2)} on a descriptor this class opens and
 * keeps for the pool's whole life.
 *
 * <p>Why not {@link java.nio.channels.FileChannel#lock}: it takes a POSIX record lock, which the
 * kernel drops as soon as the process closes <em>any</em> descriptor of the file, so a
 * {@code Files.readAllBytes(pool)} or a refused second open through a hard link silently let another
 * process in (issue 14). A {@code flock} lock belongs to the open file description: only closing
 * this descriptor releases it. Engines take the exclusive form, the read-only tools the shared form,
 * so a tool never reads a pool an engine is writing.
 *
 * <p>The mapping and the channel are opened through {@code /proc/self/fd/N}, so they are certain to
 * be the file this descriptor locks even if the path is renamed or replaced meanwhile. On NFS, Linux
 * emulates {@code flock} with record locks, and the weakness above returns there.
 */
final class PoolLock implements AutoCloseable {

    private final int fd;
    private final Path path;
    private final Object fileKey;
    private boolean released;

    private PoolLock(int fd, Path path, Object fileKey) {
        this.fd = fd;
        this.path = path;
        this.fileKey = fileKey;
    }

    /**
     * Opens an existing file for locking, without locking it yet ({@link #lock}); the descriptor
     * is read-only and close-on-exec, so child processes never inherit the lock.
     */
    static PoolLock openExisting(Path absolute, boolean followLinks) {
        // O_NONBLOCK: an open of a FIFO (planted where the pool should be) would otherwise wait
        // forever for a writer (issue 27); on a regular file it changes nothing.
        int flags = LibC.O_RDONLY | LibC.O_CLOEXEC | LibC.O_NONBLOCK | (followLinks ? 0 : LibC.O_NOFOLLOW);
        LibC.Result r = LibC.open(absolute.toString(), flags, 0);
        if (r.failed()) {
            throw openFailure(absolute, r.errno(), "open");
        }
        PoolLock lock = wrap(r.value(), absolute);
        try {
            lock.checkRegularFile();
            return lock;
        } catch (RuntimeException e) {
            lock.close();
            throw e;
        }
    }

    /** Refuses anything but a regular file (a FIFO, a device, a socket), before any channel is opened on it. */
    private void checkRegularFile() {
        int mode;
        try {
            mode = (Integer) Files.getAttribute(descriptorPath(), "unix:mode");
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return;  // no POSIX file type here
        }
        String refusal = typeRefusal(mode);
        if (refusal != null) {
            throw new PoolIoException("cannot open pool " + path + ": " + refusal + "; nothing was read or written");
        }
    }

    /** Why a file of this {@code st_mode} is not a pool file, or null for a regular file. */
    static String typeRefusal(int mode) {
        String kind = switch (mode & 0170000) {
            case 0100000 -> null;
            case 0010000 -> "a FIFO (named pipe)";
            case 0020000 -> "a character device";
            case 0060000 -> "a block device";
            case 0140000 -> "a socket";
            case 0040000 -> "a directory";
            default -> "not a regular file";
        };
        return kind == null ? null : "it is " + kind + ", not a regular file";
    }

    /**
     * Why a file of this owner and {@code st_mode} must not be opened for writing, or null: another
     * user's file, or one that group or others may write.
     */
    static String ownerRefusal(int owner, int mode) {
        int me = LibC.getuid();
        if (owner != me) {
            return "it belongs to user " + owner + ", not to this user (" + me + "); a pool is opened only by its owner "
                    + "(copy it, or have it chowned)";
        }
        if ((mode & 022) != 0) {
            return "group or others may write it (mode " + String.format("%04o", mode & 07777)
                    + "); pools are owner-only: chmod 600 it first";
        }
        return null;
    }

    /**
     * Creates the file (it must not exist; a symbolic link in its place is refused), owner-only
     * whatever the umask, and takes the exclusive lock before anyone else can.
     */
    static PoolLock createNew(Path absolute) {
        LibC.Result r = LibC.open(absolute.toString(),
                LibC.O_RDWR | LibC.O_CREAT | LibC.O_EXCL | LibC.O_NOFOLLOW | LibC.O_CLOEXEC, 0600);
        if (r.failed()) {
            if (r.errno() == LibC.EEXIST) {
                throw new PoolExistsException("cannot create pool " + absolute + ": the file already exists (use open)");
            }
            throw openFailure(absolute, r.errno(), "create");
        }
        PoolLock lock = wrap(r.value(), absolute);
        try {
            lock.lock(false);
            return lock;
        } catch (RuntimeException e) {
            lock.close();
            throw e;
        }
    }

    private static PoolLock wrap(int fd, Path absolute) {
        Path viaFd = Path.of("/proc/self/fd/" + fd);
        try {
            Object key = Files.readAttributes(viaFd, BasicFileAttributes.class).fileKey();
            return new PoolLock(fd, absolute, key == null ? absolute : key);
        } catch (IOException e) {
            LibC.close(fd);
            throw new PoolIoException("cannot open pool " + absolute + ": its descriptor is not visible in /proc/self/fd ("
                    + e + "); gphash needs Linux's /proc", e);
        }
    }

    private static PoolIoException openFailure(Path absolute, int errno, String what) {
        String reason = errno == LibC.ELOOP ? "it is a symbolic link (open the file it names, or let the builder "
                + "follow links with followSymlinks(true))"
                : errno == LibC.ENOENT ? "no such file" : LibC.strerror(errno);
        return new PoolIoException("cannot " + what + " pool " + absolute + ": " + reason);
    }

    /**
     * Takes the lock without waiting: shared for readers, exclusive for the engine.
     *
     * @throws PoolLockedException if another open file description holds a conflicting lock
     */
    void lock(boolean shared) {
        int op = (shared ? LibC.LOCK_SH : LibC.LOCK_EX) | LibC.LOCK_NB;
        LibC.Result r;
        do {
            r = LibC.flock(fd, op);
        } while (r.failed() && r.errno() == LibC.EINTR);
        if (r.failed()) {
            if (r.errno() == LibC.EWOULDBLOCK) {
                throw new PoolLockedException("pool " + path + " is locked by another process; pools are opened exclusively");
            }
            throw new PoolIoException("cannot lock pool " + path + ": " + LibC.strerror(r.errno()));
        }
    }

    /**
     * Refuses a file that another user owns or that group or others may write: such a file could
     * have been planted (with its contents) by someone else, and an engine would then write into it.
     */
    void checkOwnedByThisUser() {
        int owner;
        int mode;
        try {
            owner = (Integer) Files.getAttribute(descriptorPath(), "unix:uid");
            mode = (Integer) Files.getAttribute(descriptorPath(), "unix:mode");
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return;  // no POSIX owner here: nothing to compare
        }
        String refusal = ownerRefusal(owner, mode);
        if (refusal != null) {
            throw new PoolIoException("cannot open pool " + path + ": " + refusal);
        }
    }

    /** A path that names exactly the locked file, for opening channels on it. */
    Path descriptorPath() {
        return Path.of("/proc/self/fd/" + fd);
    }

    /** The file's identity (device and inode): the same for every name of the file. */
    Object fileKey() {
        return fileKey;
    }

    /** Closes the descriptor, which releases the lock. */
    @Override
    public void close() {
        if (!released) {
            released = true;
            LibC.close(fd);
        }
    }
}
