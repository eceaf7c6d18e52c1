package org.gphash.recovery;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.Callable;

import org.gphash.index.PoolInspector;

import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code snapshot POOL FILE}: a consistent copy of a pool on durable storage. Consistent because the
 * pool is locked against every writer while it is copied; durable because the copy is written to a
 * temporary file, fsynced, renamed into place and its directory fsynced, so a crash leaves either
 * no FILE or a whole one. Only the committed length is copied (bytes of an interrupted growth are
 * not part of the pool).
 */
@Command(name = "snapshot", mixinStandardHelpOptions = true,
        description = "Copies a pool (locked, unchanged) to FILE, which must not exist, and fsyncs it, e.g. from "
                + "tmpfs onto durable storage. The copy opens like the original.")
final class SnapshotCommand implements Callable<Integer> {

    private static final long CHUNK = 8L << 20;

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "POOL", description = "the pool file")
    Path pool;

    @Parameters(index = "1", paramLabel = "FILE", description = "where to write the copy")
    Path file;

    /**
     * Puts the finished copy at {@code target} only if nothing is there: a hard link fails if the
     * name exists (a rename would silently replace a file that appeared during the copy), then the
     * working name goes. Where the file system has no hard links, a plain move that refuses an
     * existing target.
     */
    static void publishNoReplace(Path tmp, Path target) throws IOException {
        try {
            Files.createLink(target, tmp);
        } catch (java.nio.file.FileAlreadyExistsException e) {
            throw appeared(tmp, target);
        } catch (UnsupportedOperationException | java.nio.file.FileSystemException e) {
            try {
                Files.move(tmp, target);
            } catch (java.nio.file.FileAlreadyExistsException again) {
                throw appeared(tmp, target);
            }
            return;
        }
        Files.delete(tmp);
    }

    /** Discards the copy and says why: something took the target's name while it was made. */
    private static RecoveryTool.ToolException appeared(Path tmp, Path target) throws IOException {
        Files.deleteIfExists(tmp);
        return new RecoveryTool.ToolException("snapshot target " + target + " appeared while the copy was made; "
                + "it was left as it is and the copy discarded");
    }

    @Override
    public Integer call() throws IOException {
        Path target = file.toAbsolutePath();
        if (Files.exists(target, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            throw new RecoveryTool.ToolException("snapshot target " + target + " already exists");
        }
        Path dir = target.getParent();
        Path tmp = dir.resolve("." + target.getFileName() + ".partial");
        long length;
        boolean clean;
        boolean tmpCreated = false;
        try (PoolInspector in = PoolInspector.open(pool)) {
            length = in.header().fileLength();
            clean = in.header().cleanShutdown();
            MemorySegment seg = in.segment();
            FileChannel opened;
            try {
                opened = FileChannel.open(tmp, java.util.Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
                        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            } catch (java.nio.file.FileAlreadyExistsException e) {
                // Not ours to delete: another snapshot to the same name may be writing it.
                throw new RecoveryTool.ToolException("snapshot working file " + tmp + " exists: another snapshot to "
                        + target + " is running, or one was interrupted (then remove the file)");
            }
            tmpCreated = true;
            try (FileChannel out = opened) {
                Progress progress = Progress.forTerminal();
                progress.start("copying", length);
                for (long pos = 0; pos < length; pos += CHUNK) {
                    long n = Math.min(CHUNK, length - pos);
                    var buf = seg.asSlice(pos, n).asByteBuffer();
                    while (buf.hasRemaining()) {
                        out.write(buf, pos + buf.position());
                    }
                    progress.advance(n);
                }
                progress.finish();
                out.force(true);
            }
        } catch (IOException | RuntimeException e) {
            if (tmpCreated) {
                Files.deleteIfExists(tmp);
            }
            throw e;
        }
        publishNoReplace(tmp, target);
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        }
        try (PoolInspector copy = PoolInspector.open(target)) {
            copy.header();
        }
        spec.commandLine().getOut().println("snapshot: " + length + " bytes of " + pool.toAbsolutePath() + " copied to "
                + target + " and fsynced" + (clean ? "" : " (the pool was not cleanly shut down; opening the copy "
                + "runs recovery, as opening the original would)"));
        return RecoveryTool.SOUND;
    }
}
