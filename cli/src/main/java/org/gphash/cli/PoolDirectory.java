package org.gphash.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;

/**
 * The fresh directory the demo's pool lives in, and its removal.
 *
 * <p>By default it goes under /dev/shm: tmpfs keeps the pool in memory (so the demo measures the
 * engine, not a disk's msync), and a GPU engine could register such a mapping with the device.
 * /dev/shm is skipped when it is missing, read-only, or too small for the pool: writing to a
 * mapped file on a full tmpfs kills the process with SIGBUS rather than failing cleanly, and
 * containers often give /dev/shm only 64 MiB. Then java.io.tmpdir is used.
 *
 * <p>The demo only ever deletes the directory it created itself (never the one named by
 * {@code --dir}, only the fresh one inside it), and does so also when the JVM is interrupted, so
 * an aborted run does not leave hundreds of MiB in /dev/shm.
 */
public final class PoolDirectory implements AutoCloseable {

    private static final Path SHM = Path.of("/dev/shm");

    private final Path path;
    private final String fileSystem;
    private final String note;
    private final boolean keep;
    private final AtomicBoolean removed = new AtomicBoolean();
    private final Thread cleanupOnExit;

    private PoolDirectory(Path path, String note, boolean keep) throws IOException {
        this.path = path;
        this.fileSystem = fileSystemType(path);
        this.note = note;
        this.keep = keep;
        this.cleanupOnExit = new Thread(this::removeQuietly, "gphash-demo-cleanup");
        if (!keep) {
            Runtime.getRuntime().addShutdownHook(cleanupOnExit);
        }
    }

    /**
     * Creates a fresh directory under {@code parent}, or under /dev/shm or java.io.tmpdir when
     * {@code parent} is null. {@code neededBytes} is a generous estimate of the pool's size.
     */
    public static PoolDirectory create(Path parent, long neededBytes, boolean keep) throws IOException {
        String note = null;
        Path base;
        if (parent != null) {
            if (!Files.isDirectory(parent)) {
                throw new NoSuchFileException(parent.toString(), null, "not an existing directory");
            }
            base = parent;
            long free = usableSpace(parent);
            if (free >= 0 && free < neededBytes) {
                note = "warning: " + parent + " has " + Report.bytes(free) + " free, the pool may need "
                        + Report.bytes(neededBytes);
            }
        } else {
            base = Path.of(System.getProperty("java.io.tmpdir"));
            if (Files.isDirectory(SHM) && Files.isWritable(SHM)) {
                long free = usableSpace(SHM);
                if (free >= neededBytes) {
                    base = SHM;
                } else {
                    note = "/dev/shm has only " + Report.bytes(free) + " free (the pool may need "
                            + Report.bytes(neededBytes) + "): using " + base + " instead";
                }
            }
        }
        Path dir = Files.createTempDirectory(base, "gphash-demo-");
        return new PoolDirectory(dir, note, keep);
    }

    public Path path() {
        return path;
    }

    /** The file system type, such as "tmpfs" or "ext4" ("unknown" if it cannot be told). */
    public String fileSystem() {
        return fileSystem;
    }

    /** Whether the pool lives in memory (tmpfs or ramfs), where msync costs next to nothing. */
    public boolean isInMemory() {
        return "tmpfs".equals(fileSystem) || "ramfs".equals(fileSystem);
    }

    /** Why the default location was not used, or a space warning; null when there is nothing to say. */
    public String note() {
        return note;
    }

    public boolean keep() {
        return keep;
    }

    /** Removes the directory and everything in it, unless it is to be kept. */
    @Override
    public void close() throws IOException {
        if (keep) {
            return;
        }
        try {
            Runtime.getRuntime().removeShutdownHook(cleanupOnExit);
        } catch (IllegalStateException shuttingDown) {
            // The hook is running or about to run: it removes the directory itself.
            return;
        }
        remove();
    }

    private void removeQuietly() {
        try {
            remove();
        } catch (IOException | UncheckedIOException e) {
            System.err.println("gphash demo: could not remove " + path + ": " + e.getMessage());
        }
    }

    private void remove() throws IOException {
        if (!removed.compareAndSet(false, true) || !Files.exists(path)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(path)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    private static long usableSpace(Path p) {
        try {
            return Files.getFileStore(p).getUsableSpace();
        } catch (IOException e) {
            return -1;
        }
    }

    private static String fileSystemType(Path p) {
        try {
            FileStore store = Files.getFileStore(p);
            return store.type();
        } catch (IOException e) {
            return "unknown";
        }
    }

    /**
     * A generous upper bound of the pool file for {@code items} items of these key and value sizes:
     * value blocks (the heap grows by doubling, so up to twice what is used), slots at the lowest load
     * factor a resize leaves, and the retired bottom levels handed to the heap. Used to decide
     * whether /dev/shm is big enough.
     */
    public static long estimatePoolBytes(long items, int keySize, int valueSize) {
        long valueStride = (valueSize + 7) & ~7L;
        long slotBytes = 8 + ((keySize + 7) & ~7L);
        return items * (2 * valueStride + 4 * slotBytes) + (32L << 20);
    }
}
