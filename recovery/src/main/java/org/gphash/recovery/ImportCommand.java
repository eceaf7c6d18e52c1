package org.gphash.recovery;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Arrays;
import java.util.concurrent.Callable;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.GPHashIndex;
import org.gphash.Geometry;
import org.gphash.Outcome;
import org.gphash.cli.Cli;
import org.gphash.cli.Progress;
import org.gphash.cli.ToolVersion;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code import FILE POOL}: builds a new pool with the dump's geometry and inserts every item in
 * batches. A damaged or truncated dump is refused and the half-built pool deleted, so an import
 * either yields every item or no pool at all.
 */
@Command(name = "import", versionProvider = ToolVersion.class,
        description = "Creates POOL (which must not exist) from a dump written by 'gphash dump', verifying the dump's "
                + "checksum; on any error the new pool is deleted.")
final class ImportCommand implements Callable<Integer> {

    @Mixin
    Cli.Help help = new Cli.Help();

    private static final int BATCH = 4096;

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "FILE", description = "the dump file")
    Path file;

    @Parameters(index = "1", paramLabel = "POOL", description = "the pool file to create")
    Path pool;

    @Option(names = "--seed", description = "hash seed of the new pool (default: random)")
    Long seed;

    @Option(names = "--item-checksums", description = "the new pool keeps a checksum of every item (see check --deep)")
    boolean itemChecksums;

    @Option(names = "--pool-format", description = "format of the new pool: 2 (default) or 3 (values framed in a heap "
            + "of size classes, of any length up to the value size; the CPU backend runs it): a dump of a format 2 pool imported "
            + "with 3 moves it to format 3", defaultValue = "2")
    int poolFormat;

    @Override
    public Integer call() throws IOException {
        if (Files.exists(pool, LinkOption.NOFOLLOW_LINKS)) {
            throw new ToolExit.Failure("pool " + pool.toAbsolutePath() + " already exists; import creates a new pool");
        }
        long count = 0;
        boolean ok = false;
        Object created = null;  // the new pool's identity (device, inode) once this command made it
        try (InputStream is = new BufferedInputStream(Files.newInputStream(file), 1 << 16)) {
            DumpFormat.Reader r = new DumpFormat.Reader(is);
            Geometry g = r.geometry();
            long record = 1L + g.keySize() + g.valueSize();
            long expected = Math.max(1, (Files.size(file) - DumpFormat.HEADER_BYTES - DumpFormat.TRAILER_BYTES) / record);
            GPHashIndex.Builder b = GPHashIndex.builder(pool).keySize(g.keySize()).valueSize(g.valueSize())
                    .levels(g.levels()).hashes(g.hashes()).slotsPerBucket(g.slotsPerBucket()).initialCapacity(expected)
                    .itemChecksums(itemChecksums).poolFormat(poolFormat)
                    // A new pool that a failed import deletes: nothing needs to be durable before the
                    // close, which syncs everything (200k items into ext4 took 15 min flushing per operation).
                    .durability(org.gphash.Durability.ON_CLOSE_OR_SYNC);
            if (seed != null) {
                b.seed(seed);
            }
            try (GPHashIndex index = b.create()) {
                created = fileKey(pool);
                byte[] key = new byte[g.keySize()];
                byte[] value = new byte[g.valueSize()];
                Batch batch = index.newBatch(BATCH);
                Progress progress = Progress.forTerminal();
                progress.start("importing", expected);
                for (int length; (length = r.next(key, value)) >= 0;) {
                    if (length < value.length && !index.valueLengths()) {
                        throw new ToolExit.Failure("the dump holds a value of " + length + " bytes, shorter than its "
                                + value.length + "-byte value size: only a format 3 pool holds such values "
                                + "(--pool-format 3)");
                    }
                    batch.insert(key, length == value.length ? value : Arrays.copyOf(value, length));
                    if (batch.size() == BATCH) {
                        count += run(index, batch);
                        progress.advance(BATCH);
                    }
                }
                count += run(index, batch);
                progress.finish();
            }
            ok = true;
        } catch (IOException e) {
            throw new ToolExit.Failure("cannot import " + file.toAbsolutePath() + ": "
                    + ToolExit.describe(e), e);
        } finally {
            // Remove only the pool this command created: whatever else is at the name (a pool another
            // process created after the check above, a symbolic link) is not ours to delete.
            if (!ok && created != null && created.equals(fileKey(pool))) {
                Files.deleteIfExists(pool);
            }
        }
        spec.commandLine().getOut().println("import: " + count + " items from " + file.toAbsolutePath() + " into "
                + pool.toAbsolutePath());
        return ToolExit.SOUND;
    }

    /** The identity (device and inode) of the file at {@code p}, not following links; null if none. */
    static Object fileKey(Path p) {
        try {
            return Files.readAttributes(p, BasicFileAttributes.class,
                    LinkOption.NOFOLLOW_LINKS).fileKey();
        } catch (IOException e) {
            return null;
        }
    }

    private static long run(GPHashIndex index, Batch batch) {
        if (batch.size() == 0) {
            return 0;
        }
        BatchResult res = index.execute(batch);
        for (int i = 0; i < batch.size(); i++) {
            if (res.outcome(i) != Outcome.INSERTED) {
                throw new ToolExit.Failure("dump holds a key twice (outcome " + res.outcome(i)
                        + "); it was not written by 'gphash dump'");
            }
        }
        int n = batch.size();
        batch.clear();
        return n;
    }
}
