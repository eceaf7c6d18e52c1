package org.gphash.recovery;

import java.nio.file.Path;
import java.util.concurrent.Callable;

import org.gphash.cli.Cli;
import org.gphash.cli.ToolVersion;
import org.gphash.error.PoolExistsException;
import org.gphash.shard.ShardManifest;
import org.gphash.shard.ShardedIndexes;
import org.gphash.table.PoolInspector;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code snapshot POOL FILE}: a consistent copy of a pool on durable storage. Consistent because the
 * pool is locked against every writer while it is copied; durable because the copy is written to a
 * working file, fsynced, linked into place (never over a file that appeared meanwhile) and its
 * directory fsynced, so a crash leaves either no FILE or a whole one ({@code PoolFile.copyTo}, which
 * {@code GPHashIndex.snapshot} uses on an open pool too). Only the committed length is copied (bytes of an interrupted growth are
 * not part of the pool).
 */
@Command(name = "snapshot", versionProvider = ToolVersion.class,
        description = "Copies a pool (locked, unchanged) to FILE, which must not exist, and fsyncs it, e.g. from "
                + "tmpfs onto durable storage. The copy opens like the original. A sharded index's directory is "
                + "copied whole, every shard held at once.")
final class SnapshotCommand implements Callable<Integer> {

    @Mixin
    Cli.Help help = new Cli.Help();

    @Spec
    CommandSpec spec;

    @Mixin
    Cli.PoolArgument pool = new Cli.PoolArgument();

    @Parameters(index = "1", paramLabel = "FILE", description = "where to write the copy")
    Path file;

    @Override
    public Integer call() {
        Path target = file.toAbsolutePath();
        if (ShardedDirectories.isShardedIndex(pool.path())) {
            ShardedDirectories.manifest(pool.path());  // the tools' one-line error for what is no index
            try {
                ShardManifest m = ShardedIndexes.copyIndex(pool.path(), target);
                spec.commandLine().getOut().println("snapshot: the " + m.shards() + " shards and the manifest of "
                        + pool.path().toAbsolutePath() + " copied to " + target + " and fsynced");
                return ToolExit.SOUND;
            } catch (PoolExistsException e) {
                throw new ToolExit.Failure(e.getMessage());
            }
        }
        long length;
        boolean clean;
        try (PoolInspector in = PoolInspector.open(pool.path())) {
            length = in.header().fileLength();
            clean = in.header().cleanShutdown();
            in.copyTo(target);
        } catch (PoolExistsException e) {
            throw new ToolExit.Failure("cannot snapshot to " + target + ": it exists");
        }
        try (PoolInspector copy = PoolInspector.open(target)) {
            copy.header();
        }
        spec.commandLine().getOut().println("snapshot: " + length + " bytes of " + pool.path().toAbsolutePath() + " copied to "
                + target + " and fsynced" + (clean ? "" : " (the pool was not cleanly shut down; opening the copy "
                + "runs recovery, as opening the original would)"));
        return ToolExit.SOUND;
    }
}
