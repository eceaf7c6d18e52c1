package org.gphash.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.zip.CRC32C;

import org.gphash.shard.ShardManifest;

/**
 * What a node's directory belongs to: the file {@value #FILE_NAME} beside the sharded index's own
 * manifest, saying which cluster (its identity), which shard and node, and which index (the sharded
 * index's identity, random at its create). A node checks it against the cluster manifest before it
 * joins, so a directory of another cluster, of another shard, or with its index replaced is refused
 * before the node serves a key from it.
 *
 * <p>One line of text, {@code gphash-cluster-node 1 CLUSTER_ID SHARD NAME INDEX_ID CRC}, the CRC32C
 * over what precedes it; written to a temporary name and renamed, owner-only.
 *
 * @param clusterId the cluster's identity
 * @param shard     the shard the directory holds
 * @param node      the node's name
 * @param indexId   the identity of the sharded index in the directory
 */
record NodeIdentity(long clusterId, int shard, String node, long indexId) {

    /** The file's name in the node's directory. */
    static final String FILE_NAME = "gphash-cluster.node";
    private static final String MAGIC = "gphash-cluster-node 1";

    /** {@return where a node directory's identity lies} */
    static Path file(Path dir) {
        return dir.resolve(FILE_NAME);
    }

    /** Writes the identity into {@code dir} (replacing none: a directory gets its identity once, at create). */
    void write(Path dir) {
        String body = MAGIC + " " + Long.toHexString(clusterId) + " " + shard + " " + node + " " + Long.toHexString(indexId);
        Path tmp = dir.resolve("." + FILE_NAME + ".tmp");
        try {
            Files.deleteIfExists(tmp);
            Files.createFile(tmp, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            Files.writeString(tmp, body + " " + Integer.toHexString(crc(body)) + "\n", StandardCharsets.UTF_8);
            Files.move(tmp, file(dir), StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file(dir) + ": " + e.getMessage(), e);
        }
    }

    /**
     * Reads the identity of {@code dir}.
     *
     * @return it
     * @throws ClusterRefusedException when it is missing or not sound
     */
    static NodeIdentity read(Path dir) {
        Path f = file(dir);
        if (!Files.isRegularFile(f)) {
            throw new ClusterRefusedException(dir + " is not a cluster node's directory (no " + FILE_NAME + "): start "
                    + "the node with --create to make one, or give it the directory it created");
        }
        try {
            String text = Files.readString(f, StandardCharsets.UTF_8).strip();
            int last = text.lastIndexOf(' ');
            String body = last < 0 ? "" : text.substring(0, last);
            if (!body.startsWith(MAGIC + " ") || !text.substring(last + 1).equals(Integer.toHexString(crc(body)))) {
                throw new ClusterRefusedException(f + " is damaged (its checksum does not match)");
            }
            String[] p = body.substring(MAGIC.length() + 1).split(" ");
            return new NodeIdentity(Long.parseUnsignedLong(p[0], 16), Integer.parseInt(p[1]), p[2], Long.parseUnsignedLong(p[3], 16));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + f + ": " + e.getMessage(), e);
        } catch (RuntimeException e) {
            if (e instanceof ClusterRefusedException c) {
                throw c;
            }
            throw new ClusterRefusedException(f + " is damaged (" + e.getMessage() + ")");
        }
    }

    /**
     * Checks that {@code dir} holds shard {@code shard} of {@code manifest}'s cluster for node {@code node}.
     *
     * @throws ClusterRefusedException naming what differs
     */
    void check(Path dir, ClusterManifest manifest, int expectedShard, String expectedNode) {
        if (clusterId != manifest.id()) {
            throw new ClusterRefusedException(dir + " belongs to another cluster (identity " + Long.toHexString(clusterId)
                    + ", the manifest's is " + Long.toHexString(manifest.id()) + " for cluster " + manifest.name()
                    + "); nothing was opened");
        }
        if (shard != expectedShard || !node.equals(expectedNode)) {
            throw new ClusterRefusedException(dir + " holds shard " + shard + " (node " + node + "), but node "
                    + expectedNode + " serves shard " + expectedShard + " in the manifest; give each node its own "
                    + "directory; nothing was opened");
        }
        long actual = ShardManifest.read(dir).indexId();
        if (actual != indexId) {
            throw new ClusterRefusedException(dir + "'s index is not the one this node created (identity "
                    + Long.toHexString(actual) + ", expected " + Long.toHexString(indexId) + "): its pools were replaced; "
                    + "nothing was opened");
        }
    }

    private static int crc(String text) {
        CRC32C crc = new CRC32C();
        crc.update(text.getBytes(StandardCharsets.UTF_8));
        return (int) crc.getValue();
    }
}
