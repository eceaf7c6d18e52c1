package org.gphash.recovery;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;

import org.gphash.shard.ShardManifest;

/**
 * The tools' view of a sharded index (issue 55: {@code stats}, {@code dump} and {@code snapshot}
 * refused a directory that {@code check} and {@code recover} accept): what makes a path one, and its
 * manifest read with the tools' one-line error.
 */
final class ShardedDirectories {

    private ShardedDirectories() {
    }

    /** A directory: a sharded index, or something that is not one (its manifest read then says so). */
    static boolean isShardedIndex(Path path) {
        return Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS);
    }

    /** The manifest of the index at {@code dir}, checked as open checks it. */
    static ShardManifest manifest(Path dir) {
        try {
            return ShardManifest.read(dir);
        } catch (RuntimeException e) {
            throw new ToolExit.Failure(e.getMessage());
        }
    }
}
