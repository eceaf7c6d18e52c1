package org.gphash.persistence;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

import org.gphash.error.PoolExistsException;
import org.gphash.error.PoolIoException;

/**
 * Files written whole or not at all, and never over another file: a copy goes to a hidden working
 * file beside its target (owner-only), is fsynced, and only then takes the target's name, and only if
 * nothing has taken the name meanwhile; the directory is fsynced after. A crash leaves no target or a
 * whole one. Snapshots of a pool ({@link PoolFile#copyTo}) and the recovery tool's output files use it.
 */
public final class NoReplaceCopy {

    private NoReplaceCopy() {
    }

    /**
     * Copies the first {@code length} bytes of {@code from} (the mapping of {@code source}) to
     * {@code target}, which must not exist. The caller keeps writers out meanwhile.
     *
     * @throws PoolExistsException if something is at {@code target}, before or when the copy is done
     * @throws PoolIoException     if the copy cannot be written
     */
    static void copy(MemorySegment from, long length, Path source, Path target) {
        Path to = target.toAbsolutePath().normalize();
        if (Files.exists(to, LinkOption.NOFOLLOW_LINKS)) {
            throw new PoolExistsException("copy target " + to + " already exists");
        }
        Path dir = to.getParent();
        Path working = dir.resolve("." + to.getFileName() + ".partial");
        FileChannel out;
        try {
            out = FileChannel.open(working, Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
                    PosixFilePermissions.asFileAttribute(
                            PosixFilePermissions.fromString("rw-------")));
        } catch (FileAlreadyExistsException e) {
            throw new PoolIoException("copy working file " + working + " exists: another copy to " + to
                    + " is running, or one was interrupted (then remove the file)", e);
        } catch (IOException e) {
            throw new PoolIoException("cannot create " + working + ": " + e, e);
        }
        boolean named = false;
        try (out) {
            long chunk = 8L << 20;
            for (long pos = 0; pos < length; pos += chunk) {
                ByteBuffer buf = from.asSlice(pos, Math.min(chunk, length - pos)).asByteBuffer();
                while (buf.hasRemaining()) {
                    out.write(buf, pos + buf.position());
                }
            }
            out.force(true);
            publish(working, to);
            named = true;
            try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
                d.force(true);
            }
        } catch (IOException e) {
            throw new PoolIoException("cannot copy pool " + source + " to " + to + ": " + e, e);
        } finally {
            if (!named) {
                deleteQuietly(working);
            }
        }
    }

    /**
     * Gives the finished file at {@code working} the name {@code target} only if nothing is there: a
     * hard link fails if the name exists (a rename would silently replace a file that appeared
     * meanwhile), then the working name goes. Without hard links, a move that refuses an existing name.
     *
     * @param working the finished file
     * @param target  its name
     * @throws PoolExistsException if something is at {@code target}
     * @throws IOException         if the file system refuses the link or move
     */
    public static void publish(Path working, Path target) throws IOException {
        try {
            Files.createLink(target, working);
        } catch (FileAlreadyExistsException e) {
            throw appeared(target);
        } catch (UnsupportedOperationException | FileSystemException e) {
            try {
                Files.move(working, target);
            } catch (FileAlreadyExistsException again) {
                throw appeared(target);
            }
            return;
        }
        Files.delete(working);
    }

    private static PoolExistsException appeared(Path target) {
        return new PoolExistsException(target + " appeared while the copy was made; it was left as it is and the copy "
                + "discarded");
    }

    /** Removes a working name, if it is there; one left behind is harmless (it starts with a dot and is never opened). */
    static void deleteQuietly(Path p) {
        try {
            Files.deleteIfExists(p);
        } catch (IOException ignored) {
            // a working name left behind is harmless: it starts with a dot and is never opened
        }
    }
}
