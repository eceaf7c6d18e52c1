package org.gphash.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.stream.Stream;

import org.gphash.GPHashIndex;
import org.gphash.shard.ShardManifest;

/**
 * A node's directory: its sharded index and the identity that ties it to one shard of one cluster
 * ({@link NodeIdentity}). The check reads only, and runs before the node joins its cluster; the
 * open (or the create, which writes the identity once the index is whole) runs after the cluster
 * has accepted the node, so a refused start writes nothing. A directory left without an identity (a create that stopped between
 * the two) is refused, never adopted: it could as well be another index put there by hand.
 */
final class NodeDirectory {

    private NodeDirectory() {
    }

    /**
     * Checks that {@code dir} is node {@code name}'s directory, or (with {@code create}) a place to
     * create one: absent or empty. Reads only.
     *
     * @return whether the directory exists (open it) rather than is to be created
     * @throws ClusterRefusedException when the directory is not this node's
     */
    static boolean check(ClusterManifest manifest, String name, Path dir, boolean create) {
        int shard = manifest.shardOf(name);
        if (Files.exists(NodeIdentity.file(dir), LinkOption.NOFOLLOW_LINKS)) {
            NodeIdentity.read(dir).check(dir, manifest, shard, name);
            return true;
        }
        if (!create) {
            throw new ClusterRefusedException(dir + " is not node " + name + "'s directory (no " + NodeIdentity.FILE_NAME
                    + "): start the node with --create to create one there, or give it the directory it created");
        }
        if (Files.exists(dir, LinkOption.NOFOLLOW_LINKS) && !emptyDirectory(dir)) {
            throw new ClusterRefusedException(dir + " exists and is not a node's directory (no " + NodeIdentity.FILE_NAME
                    + "; a create that stopped before its end leaves one so): remove it and start again with --create; "
                    + "nothing was opened");
        }
        return false;
    }

    /**
     * Opens the directory {@link #check} found, or creates the index and then its identity.
     *
     * @param exists   what {@link #check} returned
     * @param settings the builder of the index at {@code dir} (sizes from the manifest)
     * @return the open index
     */
    static GPHashIndex openOrCreate(ClusterManifest manifest, String name, Path dir, boolean exists, GPHashIndex.Builder settings) {
        if (exists) {
            return settings.open();
        }
        GPHashIndex created = settings.create();
        try {
            new NodeIdentity(manifest.id(), manifest.shardOf(name), name, ShardManifest.read(dir).indexId()).write(dir);
        } catch (RuntimeException e) {
            created.close();
            throw e;
        }
        return created;
    }

    /** {@link #check}, then {@link #openOrCreate}: for a start that needs no cluster's consent between them. */
    static GPHashIndex checkAndOpen(ClusterManifest manifest, String name, Path dir, boolean create, GPHashIndex.Builder settings) {
        return openOrCreate(manifest, name, dir, check(manifest, name, dir, create), settings);
    }

    private static boolean emptyDirectory(Path dir) {
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            return false;
        }
        try (Stream<Path> entries = Files.list(dir)) {
            return entries.findAny().isEmpty();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + dir + ": " + e.getMessage(), e);
        }
    }
}
