package org.gphash.journal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

import org.gphash.error.PoolIoException;

/**
 * The journal directory's files and the few file-system steps that make them durable: names, an
 * owner-only directory, a file that is fsynced before it gets its name, and the directory fsynced
 * after a name changes (without that a power cut can take back a create, a rename or a delete).
 */
final class JournalFiles {

    static final String STATE = "journal.state";
    static final String LOCK = "journal.lock";
    private static final String SEGMENT_PREFIX = "journal-";
    private static final String SEGMENT_SUFFIX = ".seg";
    private static final String CHECKPOINT_PREFIX = "checkpoint-";
    private static final String CHECKPOINT_SUFFIX = ".ckpt";
    static final String TEMP_SUFFIX = ".tmp";

    private JournalFiles() {
    }

    /** The segment whose first record has sequence number {@code firstSeq}. */
    static Path segment(Path dir, long firstSeq) {
        return dir.resolve(SEGMENT_PREFIX + String.format(Locale.ROOT, "%016x", firstSeq) + SEGMENT_SUFFIX);
    }

    /** The checkpoint consistent as of sequence number {@code seq}. */
    static Path checkpoint(Path dir, long seq) {
        return dir.resolve(CHECKPOINT_PREFIX + String.format(Locale.ROOT, "%016x", seq) + CHECKPOINT_SUFFIX);
    }

    /** The sequence number in a segment's or checkpoint's name, or -1 for any other file. */
    static long seqOf(Path file, boolean checkpoint) {
        String name = file.getFileName().toString();
        String prefix = checkpoint ? CHECKPOINT_PREFIX : SEGMENT_PREFIX;
        String suffix = checkpoint ? CHECKPOINT_SUFFIX : SEGMENT_SUFFIX;
        if (!name.startsWith(prefix) || !name.endsWith(suffix) || name.length() != prefix.length() + 16 + suffix.length()) {
            return -1;
        }
        try {
            return Long.parseUnsignedLong(name.substring(prefix.length(), prefix.length() + 16), 16);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** The segments (or checkpoints) in {@code dir}, by ascending sequence number. */
    static List<Path> list(Path dir, boolean checkpoints) {
        List<Path> out = new ArrayList<>();
        try (var files = Files.list(dir)) {
            files.filter(f -> seqOf(f, checkpoints) >= 0).forEach(out::add);
        } catch (IOException e) {
            throw new PoolIoException("cannot list journal directory " + dir + ": " + e.getMessage(), e);
        }
        out.sort((a, b) -> Long.compareUnsigned(seqOf(a, checkpoints), seqOf(b, checkpoints)));
        return out;
    }

    /**
     * Makes {@code dir} if missing, owner-only; refuses a symbolic link or a directory another user
     * owns or others can write (a journal there could be changed under the index).
     */
    static void prepareDirectory(Path dir) {
        try {
            if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
                Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
                fsyncDirectory(dir.toAbsolutePath().getParent());
            }
            if (Files.isSymbolicLink(dir) || !Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
                throw new IllegalArgumentException("journal directory " + dir + " is not a directory (or is a symbolic link)");
            }
            var perms = Files.getPosixFilePermissions(dir, LinkOption.NOFOLLOW_LINKS);
            if (perms.contains(PosixFilePermission.GROUP_WRITE)
                    || perms.contains(PosixFilePermission.OTHERS_WRITE)) {
                throw new IllegalArgumentException("journal directory " + dir + " can be written by others ("
                        + PosixFilePermissions.toString(perms) + "): make it owner-only (chmod 700)");
            }
            String owner = Files.getOwner(dir, LinkOption.NOFOLLOW_LINKS).getName();
            String me = System.getProperty("user.name");
            if (me != null && !owner.equals(me) && !"root".equals(me)) {
                throw new IllegalArgumentException("journal directory " + dir + " belongs to " + owner + ", not " + me);
            }
        } catch (IOException e) {
            throw new PoolIoException("cannot prepare journal directory " + dir + ": " + e.getMessage(), e);
        }
    }

    /** A new owner-only file, open for writing; fails if it exists. */
    static FileChannel createNew(Path file) throws IOException {
        return FileChannel.open(file, Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE,
                StandardOpenOption.READ), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    }

    /** Makes the directory's entries (creates, renames, deletes) durable. */
    static void fsyncDirectory(Path dir) {
        if (dir == null) {
            return;
        }
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot fsync directory " + dir, e);
        }
    }

    /** Writes {@code bytes} to {@code target} whole or not at all: a fsynced temporary file renamed over it, then the directory fsynced. */
    static void writeAtomically(Path target, ByteBuffer bytes) {
        Path tmp = target.resolveSibling(target.getFileName() + TEMP_SUFFIX);
        try {
            Files.deleteIfExists(tmp);
            try (FileChannel ch = createNew(tmp)) {
                while (bytes.hasRemaining()) {
                    ch.write(bytes);
                }
                ch.force(true);
            }
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            fsyncDirectory(target.getParent());
        } catch (IOException e) {
            throw new PoolIoException("cannot write " + target + ": " + e.getMessage(), e);
        }
    }

    /** Reads {@code b}'s remaining bytes from {@code ch} at {@code at}; an end of file before them is an error. */
    static void readFully(FileChannel ch, ByteBuffer b, long at) throws IOException {
        long pos = at;
        while (b.hasRemaining()) {
            int n = ch.read(b, pos);
            if (n < 0) {
                throw new IOException("unexpected end of file at " + pos);
            }
            pos += n;
        }
    }

    /** Removes temporary files an interrupted checkpoint or state write left. */
    static void removeTemporaries(Path dir) {
        try (var files = Files.list(dir)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                if (f.getFileName().toString().endsWith(TEMP_SUFFIX)) {
                    Files.deleteIfExists(f);
                }
            }
        } catch (IOException e) {
            throw new PoolIoException("cannot clean journal directory " + dir + ": " + e.getMessage(), e);
        }
    }
}
