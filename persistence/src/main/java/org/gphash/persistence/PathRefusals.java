package org.gphash.persistence;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Map;

import org.gphash.posix.LibC;

/**
 * What makes a path unfit to be opened for writing, said before anything reads it: for a pool file,
 * what {@link PoolFile#open} refuses; for a sharded index's directory, the same ownership and mode
 * rules. Null means no objection here (or no POSIX attributes to judge by): the open then says what it
 * finds.
 */
public final class PathRefusals {

    private PathRefusals() {
    }

    /**
     * Why {@link PoolFile#open} (with symbolic links refused, as by default) would refuse the file at
     * {@code path} before reading it, or null: a symbolic link, not a regular file, another user's
     * file, or one that group or others may write. For tools that open read-only, where these
     * checks do not apply, so that they can say what open would say (issue 28: {@code check} called
     * sound a group-writable pool that open refuses).
     */
    public static String ofPoolFile(Path path) {
        Path absolute = path.toAbsolutePath().normalize();
        if (Files.isSymbolicLink(absolute)) {
            return "it is a symbolic link, which open refuses unless followSymlinks(true) is set";
        }
        Map<String, Object> a = attributes(absolute);
        if (a == null) {
            return null;
        }
        int mode = (Integer) a.get("mode");
        String type = PoolLock.typeRefusal(mode);
        return type != null ? type : PoolLock.ownerRefusal((Integer) a.get("uid"), mode);
    }

    /**
     * Why the directory of a sharded index at {@code dir} must not be used, or null: a symbolic link,
     * not a directory, another user's, or one that group or others may write (anyone who can write it
     * can swap its shard files or its manifest: issue 52).
     */
    public static String ofIndexDirectory(Path dir) {
        Path absolute = dir.toAbsolutePath().normalize();
        if (Files.isSymbolicLink(absolute)) {
            return "it is a symbolic link; open the directory it points to";
        }
        Map<String, Object> a = attributes(absolute);
        if (a == null) {
            return null;
        }
        int mode = (Integer) a.get("mode");
        if ((mode & 0170000) != 0040000) {
            return "it is not a directory";
        }
        int owner = (Integer) a.get("uid");
        int me = LibC.getuid();
        if (owner != me) {
            return "it belongs to user " + owner + ", not to this user (" + me + "); an index is opened only by its owner";
        }
        if ((mode & 022) != 0) {
            return "group or others may write it (mode " + String.format("%04o", mode & 07777) + "), and so swap its "
                    + "shards or its manifest; an index's directory is owner-only: chmod 700 it first";
        }
        return null;
    }

    /** The owner and mode of {@code absolute}, not following a link; null without POSIX attributes (or no file). */
    private static Map<String, Object> attributes(Path absolute) {
        try {
            return Files.readAttributes(absolute, "unix:uid,mode", LinkOption.NOFOLLOW_LINKS);
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return null;
        }
    }
}
