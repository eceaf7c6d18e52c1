package org.gphash.persistence;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.SecureRandom;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.gphash.error.PoolExistsException;
import org.gphash.error.PoolIoException;
import org.gphash.error.PoolLockedException;
import org.gphash.error.PoolSpaceException;

/**
 * One pool file, opened exclusively and mapped read-write as a single {@link MemorySegment}.
 *
 * <p>Exclusivity has two layers: a {@link PoolLock} ({@code flock} on a descriptor held for the
 * file's whole life) refuses openers in other processes, and a process-wide set of open files (by
 * device and inode, so every name of a file counts) refuses a second opener in this JVM with a
 * clearer message. New files are created owner-only ({@code rw-------}) whatever the umask.
 *
 * <p>{@link #grow(long)} extends the file and its mapping. A writable pool on tmpfs is mapped into
 * reserved address space ({@link ReservedMapping}) and grows in place: it keeps its address and the
 * old segment stays valid for its length. Elsewhere the mapping is replaced and the old segment
 * becomes unusable. Either way callers must ensure no thread is accessing the pool while it runs
 * (the engine does this by draining operations first) and re-read {@link #segment()} afterwards.
 *
 * <p>This class is the file's life: create, publish, open and lock, extend, sync, close. The mapping
 * and its persister are {@link PoolMapping}'s; copies that never replace a file are
 * {@link NoReplaceCopy}'s. Why it is still long: each step refuses what a storage engine must refuse
 * (a file that exists, a link, a lock held elsewhere or in this process, a full file system), with a
 * message naming it, and leaves nothing changed when it does.
 */
public final class PoolFile implements AutoCloseable {

    /** Files (device and inode) open in this process. */
    private static final Set<Object> OPEN_IN_THIS_PROCESS = ConcurrentHashMap.newKeySet();

    private final Path path;
    private final PoolLock lock;
    private final FileChannel channel;
    private final boolean onTmpfs;
    private final boolean readOnly;
    /** Where a file made by {@link #create} lives until {@link #publish()}; null once named. */
    private Path workingName;
    /** The file's mapping and its persister. */
    private final PoolMapping mapping;

    /**
     * Sets the one listener of this file's mapping changes, first telling it of the current mapping
     * ({@link MappingListener#afterMap}), with no growth between the two: a growth on another thread
     * (an engine serving calls while the GPU's side attaches) is then seen whole, once.
     */
    public synchronized void setMappingListener(MappingListener listener) {
        listener.afterMap(segment());
        mapping.setListener(listener);
    }
    private boolean closed;

    private PoolFile(Path path, PoolLock lock, FileChannel channel, boolean preferJdkPersist, boolean readOnly) {
        this.path = path;
        this.channel = channel;
        this.lock = lock;
        this.onTmpfs = isTmpfs(lock.descriptorPath());
        this.readOnly = readOnly;
        this.mapping = new PoolMapping(path, lock.descriptorPath(), channel, readOnly, onTmpfs, preferJdkPersist);
    }

    /**
     * Installs {@code decorator} for every mapping made from now on in this process (tests and the
     * crash harness only; see {@link PersisterDecorator}).
     */
    public static void decoratePersisters(PersisterDecorator decorator) {
        PoolMapping.decoratePersisters(Objects.requireNonNull(decorator, "decorator"));
    }

    private static boolean isTmpfs(Path path) {
        try {
            return "tmpfs".equals(Files.getFileStore(path).type());
        } catch (IOException e) {
            return false;
        }
    }

    /** {@return whether the file lives on tmpfs (memory; also where the GPU engine can register it)} */
    public boolean onTmpfs() {
        return onTmpfs;
    }

    /**
     * Creates a new pool file of {@code size} zero bytes, owner-only, locked exclusively from the
     * moment it exists, and maps it. The file is made under a hidden working name in the same
     * directory; {@link #publish()} gives it its name once the caller has initialised it, so that no
     * other process ever finds a half-made pool at the name (and a crash during create leaves none).
     *
     * @throws PoolExistsException if something is at the path already
     * @throws PoolIoException     if the file cannot be created
     */
    public static PoolFile create(Path path, long size, boolean preferJdkPersist) {
        if (size <= 0) {
            throw new IllegalArgumentException("pool size must be positive: " + size);
        }
        Path absolute = path.toAbsolutePath().normalize();
        Path parent = absolute.getParent();
        if (parent == null || !Files.isDirectory(parent)) {
            throw new PoolIoException("cannot create pool " + absolute + ": directory " + parent + " does not exist");
        }
        if (Files.exists(absolute, LinkOption.NOFOLLOW_LINKS)) {
            throw exists(absolute);
        }
        Path working = parent.resolve("." + absolute.getFileName() + ".creating-"
                + Long.toHexString(new SecureRandom().nextLong()));
        PoolLock lock = PoolLock.createNew(working);
        PoolFile file;
        try {
            claimInProcess(lock.fileKey(), absolute);
        } catch (RuntimeException e) {
            NoReplaceCopy.deleteQuietly(working);
            lock.close();
            throw e;
        }
        try {
            file = wrap(absolute, lock, preferJdkPersist, false);
        } catch (RuntimeException e) {
            OPEN_IN_THIS_PROCESS.remove(lock.fileKey());
            NoReplaceCopy.deleteQuietly(working);
            lock.close();
            throw e;
        }
        file.workingName = working;
        try {
            file.extendTo(size);
            file.mapping.map(size);
            return file;
        } catch (RuntimeException e) {
            file.discardCreated();
            throw e;
        }
    }

    private static PoolExistsException exists(Path absolute) {
        return new PoolExistsException("cannot create pool " + absolute + ": the file already exists (use open)");
    }

    /**
     * Gives a file made by {@link #create} its name, if nothing has taken the name meanwhile (a hard
     * link cannot replace an existing name), and drops the working name. The lock and mapping stay.
     *
     * @throws PoolExistsException if another process created a file at the name first; this file is
     *                             then still under its working name, for {@link #discardCreated()}
     */
    public synchronized void publish() {
        Path working = workingName;
        if (working == null) {
            return;
        }
        try {
            Files.createLink(path, working);
        } catch (FileAlreadyExistsException e) {
            throw exists(path);
        } catch (UnsupportedOperationException | IOException e) {
            // No hard links on this file system: a move that refuses an existing name (checked, not atomic).
            try {
                Files.move(working, path);
                workingName = null;
                return;
            } catch (FileAlreadyExistsException again) {
                throw exists(path);
            } catch (IOException again) {
                throw new PoolIoException("cannot name the new pool " + path + ": " + again, again);
            }
        }
        workingName = null;
        NoReplaceCopy.deleteQuietly(working);
    }

    /**
     * Undoes a {@link #create} whose caller could not finish the pool (no space, a failed first
     * write, a lost race for the name): removes the file, under whichever name it has, if that name
     * still refers to the file this created, and closes. A create that fails leaves nothing behind.
     */
    public synchronized void discardCreated() {
        try {
            Path name = workingName != null ? workingName : path;
            Object key = Files.readAttributes(name, BasicFileAttributes.class,
                    LinkOption.NOFOLLOW_LINKS).fileKey();
            if (lock.fileKey().equals(key)) {
                Files.delete(name);
            }
        } catch (IOException | RuntimeException ignored) {
            // The name is gone or is another file now: nothing of ours to remove.
        } finally {
            close();
        }
    }

    /**
     * Opens and maps an existing pool file exclusively. Nothing is written to the file.
     *
     * @throws PoolIoException if it does not exist, cannot be read, or is open elsewhere
     */
    public static PoolFile open(Path path, boolean preferJdkPersist) {
        return open(path, preferJdkPersist, false);
    }

    /**
     * Opens and maps an existing pool file exclusively. Nothing is written to the file. A symbolic
     * link is refused unless {@code followSymlinks}; a file another user owns, or that group or
     * others may write, is refused always (in a shared directory such as {@code /dev/shm} another
     * user could otherwise plant the pool, or the link to it, that this process then writes into).
     *
     * @throws PoolIoException if it does not exist, cannot be read, is not this user's, or is open elsewhere
     */
    public static PoolFile open(Path path, boolean preferJdkPersist, boolean followSymlinks) {
        return openLocked(path, preferJdkPersist, false, followSymlinks);
    }

    /**
     * Opens an existing pool file for reading only, for offline tools that must prove they change
     * nothing: the channel is opened without write access and mapped read-only, so any store would
     * fail. It takes a shared lock, which excludes every writer (the engine takes an exclusive one)
     * in any process, and claims the file in this process like {@link #open}.
     *
     * @throws PoolIoException if it does not exist or cannot be read; {@link PoolLockedException}
     *                         if an engine has it open
     */
    public static PoolFile openReadOnly(Path path) {
        return openLocked(path, false, true, true);
    }

    private static PoolFile openLocked(Path path, boolean preferJdkPersist, boolean readOnly, boolean followSymlinks) {
        Path absolute = path.toAbsolutePath().normalize();
        if (!Files.exists(absolute)) {
            throw new PoolIoException("cannot open pool " + absolute + ": no such file");
        }
        if (Files.isDirectory(absolute)) {
            throw new PoolIoException("cannot open pool " + absolute + ": it is a directory");
        }
        PoolLock lock = PoolLock.openExisting(absolute, followSymlinks);
        try {
            // Claim the file (by device and inode, so every name of it counts) before locking: a
            // second opener in this process is told so, and nothing it does can touch the first
            // opener's lock, which belongs to the first opener's own descriptor.
            claimInProcess(lock.fileKey(), absolute);
        } catch (RuntimeException e) {
            lock.close();
            throw e;
        }
        PoolFile file;
        try {
            lock.lock(readOnly);
            if (!readOnly) {
                lock.checkOwnedByThisUser();
            }
            file = wrap(absolute, lock, preferJdkPersist, readOnly);
        } catch (RuntimeException e) {
            OPEN_IN_THIS_PROCESS.remove(lock.fileKey());
            lock.close();
            throw e;
        }
        try {
            long size = file.channel.size();
            if (size > 0) {
                file.mapping.map(size);
            }
            return file;
        } catch (IOException e) {
            file.close();
            throw new PoolIoException("cannot open pool " + absolute + ": " + e, e);
        } catch (RuntimeException e) {
            file.close();
            throw e;
        }
    }

    /** {@return whether this file was opened with {@link #openReadOnly}} */
    public boolean readOnly() {
        return readOnly;
    }

    private static void claimInProcess(Object key, Path absolute) {
        if (!OPEN_IN_THIS_PROCESS.add(key)) {
            throw new PoolLockedException("pool " + absolute + " is already open in this process; pools are opened exclusively");
        }
    }

    /** Opens the channel on exactly the locked file (through its descriptor, not its name). */
    private static PoolFile wrap(Path absolute, PoolLock lock, boolean preferJdkPersist, boolean readOnly) {
        FileChannel channel;
        try {
            channel = readOnly ? FileChannel.open(lock.descriptorPath(), StandardOpenOption.READ)
                    : FileChannel.open(lock.descriptorPath(), StandardOpenOption.READ, StandardOpenOption.WRITE);
        } catch (IOException e) {
            // The channel is opened through /proc/self/fd/N: name the pool and the reason, not that path.
            String reason = e instanceof FileSystemException fs && fs.getReason() != null ? fs.getReason()
                    : e instanceof AccessDeniedException ? "permission denied" : e.getMessage();
            throw new PoolIoException("cannot open pool " + absolute + (readOnly ? " for reading: " : " for writing: ")
                    + reason, e);
        }
        return new PoolFile(absolute, lock, channel, preferJdkPersist, readOnly);
    }

    private void extendTo(long size) {
        ensureWritable();
        long old = -1;
        try {
            old = channel.size();
            if (old < size) {
                writeZeros(old, size - old);
            }
        } catch (IOException e) {
            // A full file system fails part-way: give back what was added, so that "nothing was
            // changed" holds and the disk is not left full (issue 27: 8.4 MB stayed behind).
            String undone = "";
            if (old >= 0) {
                try {
                    channel.truncate(old);
                    undone = "; the file was cut back to its " + old + " bytes";
                } catch (IOException again) {
                    e.addSuppressed(again);
                    undone = "; cutting the file back to its " + old + " bytes failed too (" + again.getMessage() + ")";
                }
            }
            throw new PoolSpaceException("cannot extend pool " + path + " to " + size + " bytes: " + e.getMessage() + undone, e);
        }
    }

    /**
     * Writes zeros through the file (not the mapping), so the file system allocates the space now:
     * a full file system then fails here with an {@link IOException} instead of faulting later
     * inside a store to the mapping (which the JVM reports only as an InternalError).
     */
    private void writeZeros(long offset, long length) throws IOException {
        ByteBuffer zeros = ByteBuffer.allocateDirect((int) Math.min(length, 1 << 20));
        long done = 0;
        while (done < length) {
            zeros.clear().limit((int) Math.min(zeros.capacity(), length - done));
            done += channel.write(zeros, offset + done);
        }
    }

    /**
     * Copies the first {@code length} bytes of the pool to {@code target}, which must not exist: into
     * a hidden working file beside it (owner-only), fsynced, then linked to its name only if nothing
     * has taken the name meanwhile (never replacing a file), and the directory fsynced. A crash
     * leaves either no {@code target} or a whole one. The caller keeps writers out meanwhile.
     *
     * @throws PoolExistsException if something is at {@code target}, before or when the copy is done
     * @throws PoolIoException     if the copy cannot be written
     */
    public void copyTo(Path target, long length) {
        ensureOpen();
        NoReplaceCopy.copy(segment(), length, path, target);
    }

    /** Zeroes {@code [offset, offset + length)} of the file, allocating its space. */
    public void zeroRange(long offset, long length) {
        ensureOpen();
        ensureWritable();
        try {
            writeZeros(offset, length);
        } catch (IOException e) {
            throw new PoolSpaceException("cannot zero " + length + " bytes of pool " + path + " at " + offset + ": "
                    + e.getMessage(), e);
        }
    }

    /**
     * Extends the file to {@code newSize} bytes (zero-filled) and remaps it. No other thread may
     * access the old segment during or after this call.
     */
    public synchronized void grow(long newSize) {
        ensureOpen();
        if (newSize <= fileSize() && newSize <= mappedSize()) {
            return;
        }
        if (newSize > fileSize()) {
            extendTo(newSize);
            try {
                channel.force(true);
            } catch (IOException e) {
                throw new PoolIoException("cannot sync pool " + path + " after growing it: " + e, e);
            }
        }
        // Also where the file is long enough but the mapping is not (bytes a growth left past the
        // committed pool): writing there through a short mapping threw IndexOutOfBounds at close.
        mapping.map(Math.max(newSize, mappedSize()));
    }

    /**
     * Extends the file to {@code newSize} bytes ahead of need, but only where that moves nothing: the
     * file grows in place (its reserved address space has room), so other threads may go on reading
     * and writing the pool meanwhile, and the mapping listener is told of the new pages only. An
     * engine calls this off its critical path, so that the growth that later needs the space finds
     * it allocated, mapped and registered. The bytes past the committed pool are ignored by the next
     * open, as a crash during any growth leaves them.
     *
     * @param newSize the length wanted
     * @return true when the file is now at least that long; false, having done nothing, where growing
     *         would remap the file (no reservation, or one without room) or the file is read-only
     */
    public synchronized boolean growAhead(long newSize) {
        ensureOpen();
        if (readOnly) {
            return false;
        }
        if (newSize <= fileSize() && newSize <= mappedSize()) {
            return true;
        }
        if (!mapping.growsInPlaceTo(newSize)) {
            return false;
        }
        grow(newSize);
        return true;
    }

    /** {@return the current mapping of the whole file; replaced by {@link #grow(long)}} */
    public MemorySegment segment() {
        MemorySegment s = mapping.segment();
        if (s == null) {
            throw new PoolIoException("pool " + path + " is empty or closed");
        }
        return s;
    }

    /** {@return the persister chosen for the current mapping} */
    public Persister persister() {
        return mapping.persister();
    }

    /** {@return the file's current length in bytes} */
    public long fileSize() {
        try {
            return channel.size();
        } catch (IOException e) {
            throw new PoolIoException("cannot read size of pool " + path + ": " + e, e);
        }
    }

    /** {@return the mapped length in bytes (0 for an empty file)} */
    public long mappedSize() {
        return mapping.size();
    }

    public Path path() {
        return path;
    }

    /** Forces the whole mapping and the file's metadata to storage (msync + fsync). */
    public void syncAll() {
        ensureOpen();
        if (readOnly) {
            return;
        }
        mapping.sync();
        try {
            channel.force(true);
        } catch (IOException e) {
            throw new PoolIoException("cannot sync pool " + path + ": " + e, e);
        }
    }

    private void ensureWritable() {
        if (readOnly) {
            throw new PoolIoException("pool " + path + " is open read-only");
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new PoolIoException("pool " + path + " is closed");
        }
    }

    /** Unmaps and unlocks. Writes nothing: durability is the caller's business before this. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            mapping.close();
        } finally {
            closeQuietly(channel);
            // Unclaim before unlocking: another opener in this process that sees the claim gone must
            // find the lock free or held by someone else, never still ours.
            OPEN_IN_THIS_PROCESS.remove(lock.fileKey());
            lock.close();
        }
    }

    private static void closeQuietly(FileChannel channel) {
        try {
            channel.close();
        } catch (IOException ignored) {
            // nothing useful to do: the file is being abandoned
        }
    }
}
