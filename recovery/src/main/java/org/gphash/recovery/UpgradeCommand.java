package org.gphash.recovery;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.Callable;

import org.gphash.cli.Cli;
import org.gphash.cli.ToolVersion;
import org.gphash.format.PoolHeader;
import org.gphash.table.PoolInspector;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code upgrade POOL}: moves a format 2 pool to format 3 (issue 53, item 4) in one command, never
 * silently and never in place: the pool is dumped ({@code dump}, which refuses a pool another process
 * holds and items it cannot vouch for), the dump imported into a new format 3 pool beside it
 * ({@code import --pool-format 3}, with item checksums where the old pool kept them), the new pool
 * checked ({@code check}) and synced, and only then
 * renamed over the old name, the old pool kept beside it as {@code POOL.format2} (or deleted with
 * {@code --delete-old}). Any failure before the rename leaves the old pool where it was and removes what
 * the command made.
 */
@Command(name = "upgrade", versionProvider = ToolVersion.class,
        description = "Moves a format 2 pool to format 3 (values of any length up to its value size): dumps it, "
                + "imports the dump into a new format 3 pool, checks and syncs that pool, then renames it over POOL and "
                + "keeps the old one as POOL.format2. Run it with the pool closed.")
final class UpgradeCommand implements Callable<Integer> {

    @Mixin
    Cli.Help help = new Cli.Help();

    @Spec
    CommandSpec spec;

    @Mixin
    Cli.PoolArgument pool = new Cli.PoolArgument();

    @Option(names = "--delete-old", description = "delete the format 2 pool once the new one is in its place "
            + "(default: keep it as POOL.format2)")
    boolean deleteOld;

    @Override
    public Integer call() throws IOException {
        Path path = pool.path();
        if (ShardedDirectories.isShardedIndex(path)) {
            throw new ToolExit.Failure(path.toAbsolutePath() + " is a sharded index: upgrade its shards' pools one by one");
        }
        PoolHeader header;
        try (PoolInspector in = PoolInspector.open(path)) {
            header = in.header();
        }
        if (header.formatVersion() == PoolHeader.FORMAT_3) {
            spec.commandLine().getOut().println("upgrade: " + path.toAbsolutePath() + " is format 3 already; nothing done");
            return ToolExit.SOUND;
        }
        Path dir = path.toAbsolutePath().getParent();
        String name = path.getFileName().toString();
        Path dump = dir.resolve(name + ".upgrade-dump");
        Path fresh = dir.resolve(name + ".upgrade-pool");
        Path old = dir.resolve(name + ".format2");
        for (Path p : new Path[] {dump, fresh, old}) {
            if (Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
                throw new ToolExit.Failure(p + " exists: an earlier upgrade's file, or another file of that name; "
                        + "move it away first");
            }
        }
        boolean moved = false;
        try {
            step("dump", path.toString(), dump.toString());
            if (header.geometry().itemChecksums()) {  // the new pool keeps them too, in its value headers
                step("import", "--pool-format", "3", "--item-checksums", dump.toString(), fresh.toString());
            } else {
                step("import", "--pool-format", "3", dump.toString(), fresh.toString());
            }
            step("check", fresh.toString());
            sync(fresh);
            // The old pool keeps its name's file until the new one is ready; both renames stay in one
            // directory, each atomic, and the directory is synced after them.
            Files.move(path, old, StandardCopyOption.ATOMIC_MOVE);
            moved = true;
            Files.move(fresh, path, StandardCopyOption.ATOMIC_MOVE);
            moved = false;
            sync(dir);
        } finally {
            if (moved) {
                Files.move(old, path, StandardCopyOption.ATOMIC_MOVE);  // the new pool could not take the name
            }
            Files.deleteIfExists(dump);
            Files.deleteIfExists(fresh);
        }
        if (deleteOld) {
            Files.delete(old);
        }
        spec.commandLine().getOut().println("upgrade: " + path.toAbsolutePath() + " is format 3 now"
                + (deleteOld ? "; the format 2 pool was deleted" : "; the format 2 pool is kept as " + old));
        return ToolExit.SOUND;
    }

    /** Runs one of the tool's commands; a failure stops the upgrade with that command's own message. */
    private void step(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = RecoveryTool.run(args, new PrintWriter(out), new PrintWriter(err));
        if (code != ToolExit.SOUND) {
            throw new ToolExit.Failure("upgrade stopped at '" + args[0] + "' (exit " + code + "), the pool unchanged: "
                    + (err.toString() + out).strip(), code);
        }
    }

    private static void sync(Path p) throws IOException {
        try (FileChannel c = FileChannel.open(p, StandardOpenOption.READ)) {
            c.force(true);
        }
    }
}
