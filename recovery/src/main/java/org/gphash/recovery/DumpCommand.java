package org.gphash.recovery;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.Callable;

import org.gphash.EntryChunk;
import org.gphash.index.EntryScan;
import org.gphash.format.Geometry;
import org.gphash.index.PoolInspector;

import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code dump POOL FILE}: streams every key's valid item out, read-only. Slots a recovery would
 * clear (INSERT, torn, duplicate, bad value offset) are skipped and counted, so a dump of a crashed
 * pool holds exactly what opening it would show.
 */
@Command(name = "dump", mixinStandardHelpOptions = true,
        description = "Streams every key and value of a pool into FILE (which must not exist), without changing "
                + "the pool; fsyncs FILE. 'gphash import' reads it back.")
final class DumpCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "POOL", description = "the pool file")
    Path pool;

    @Parameters(index = "1", paramLabel = "FILE", description = "the dump file to write")
    Path file;

    /**
     * A new file, owner-only ({@code rw-------}) whatever the umask: a dump holds every value of the
     * pool, and pools themselves are owner-only.
     */
    static FileChannel createOwnerOnly(Path file) throws IOException {
        return FileChannel.open(file, java.util.Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
                java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
                        java.nio.file.attribute.PosixFilePermissions.fromString("rw-------")));
    }

    @Override
    public Integer call() throws IOException {
        if (java.nio.file.Files.exists(file, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            throw new RecoveryTool.ToolException("dump file " + file.toAbsolutePath() + " already exists");
        }
        long skipped = 0;
        long failedChecksum = 0;
        long count;
        boolean written = false;
        boolean created = false;
        try (PoolInspector in = PoolInspector.open(pool);
             FileChannel ch = createOwnerOnly(file)) {
            created = true;
            OutputStream os = new BufferedOutputStream(Channels.newOutputStream(ch), 1 << 16);
            Geometry g = in.geometry();
            DumpFormat.Writer w = new DumpFormat.Writer(os, g);
            HeapMap heap = new HeapMap(in.header().heapChunks(), g.valueStride());
            // The same walk as the engines' cursors: every key's valid item, bottom level first.
            EntryScan.State state = new EntryScan.State();
            EntryChunk chunk = new EntryChunk(g.keySize(), g.valueSize(), 4096);
            while (!state.done()) {
                in.readEntries(state, chunk, offset -> heap.blockOf(offset) >= 0);
                for (int i = 0; i < chunk.size(); i++) {
                    w.item(chunk.key(i), chunk.value(i));
                }
            }
            skipped = state.skipped();
            failedChecksum = state.checksumFailures();
            count = w.finish();
            os.flush();
            ch.force(true);
            written = true;
        } catch (java.nio.file.FileAlreadyExistsException e) {
            throw new RecoveryTool.ToolException("dump file " + file.toAbsolutePath() + " already exists");
        } finally {
            if (!written && created) {
                // A dump without its trailer is refused by import anyway; do not leave one behind. Only
                // what this command created: never a file or link that was there before.
                java.nio.file.Files.deleteIfExists(file);
            }
        }
        spec.commandLine().getOut().println("dump: " + count + " items from " + pool.toAbsolutePath() + " to "
                + file.toAbsolutePath() + (skipped > 0 ? " (" + skipped + " slots skipped that recovery would clear)" : "")
                + (failedChecksum > 0 ? "; " + failedChecksum + " items LEFT OUT because they fail their checksums" : ""));
        return failedChecksum > 0 ? RecoveryTool.UNSOUND : RecoveryTool.SOUND;
    }
}
