package org.gphash.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.UUID;

import com.hazelcast.core.Hazelcast;
import com.hazelcast.map.IMap;
import org.gphash.GPHashIndex;
import org.gphash.index.api.TestPools;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A node's start refuses what is not its own, with nothing written: a directory of another cluster,
 * another node's directory, a directory with its index replaced, none without --create, a cluster
 * running another manifest, a shard another live member serves. The directory checks run without
 * Hazelcast; the last two start members in this JVM.
 */
class ClusterNodeTest {

    private final TestPools pools = TestPools.create();

    @AfterEach
    void cleanUp() {
        Hazelcast.shutdownAll();
        pools.close();
    }

    private static GPHashIndex.Builder settings(ClusterManifest m, Path dir) {
        return GPHashIndex.builder(dir).keySize(m.keySize()).valueSize(m.valueSize()).shards(1).initialCapacity(1024);
    }

    private static byte[] contents(Path dir) throws IOException {
        try (var files = Files.walk(dir)) {
            StringBuilder b = new StringBuilder();
            for (Path p : files.sorted().toList()) {
                b.append(p).append(Files.isRegularFile(p) ? Files.size(p) + ":" + Arrays.hashCode(Files.readAllBytes(p)) : "")
                        .append('\n');
            }
            return b.toString().getBytes();
        }
    }

    @Test
    void aDirectoryThatIsNotThisNodesIsRefusedWithNothingWritten() throws Exception {
        ClusterManifest m = ClusterManifest.create("c1", 8, 16, NodeProcess.onThisHost(2));
        ClusterManifest other = ClusterManifest.create("c1", 8, 16, m.nodes());
        Path a = pools.pool("a");
        Path b = pools.pool("b");
        NodeDirectory.checkAndOpen(m, "n0", a, true, settings(m, a)).close();
        NodeDirectory.checkAndOpen(m, "n1", b, true, settings(m, b)).close();
        byte[] before = contents(a);

        ClusterRefusedException foreign = assertThrows(ClusterRefusedException.class,
                () -> NodeDirectory.checkAndOpen(other, "n0", a, false, settings(other, a)));
        assertTrue(foreign.getMessage().contains("belongs to another cluster"), foreign.getMessage());
        ClusterRefusedException swapped = assertThrows(ClusterRefusedException.class,
                () -> NodeDirectory.checkAndOpen(m, "n1", a, false, settings(m, a)));
        assertTrue(swapped.getMessage().contains("holds shard 0 (node n0), but node n1 serves shard 1"), swapped.getMessage());
        assertArrayEquals(before, contents(a), "a refused open writes nothing");

        // The index replaced by another one (its own manifest, another identity): refused.
        Path c = pools.pool("c");
        settings(m, c).create().close();
        Files.copy(a.resolve(NodeIdentity.FILE_NAME), c.resolve(NodeIdentity.FILE_NAME));
        ClusterRefusedException replaced = assertThrows(ClusterRefusedException.class,
                () -> NodeDirectory.checkAndOpen(m, "n0", c, false, settings(m, c)));
        assertTrue(replaced.getMessage().contains("its pools were replaced"), replaced.getMessage());

        ClusterRefusedException none = assertThrows(ClusterRefusedException.class,
                () -> NodeDirectory.checkAndOpen(m, "n0", pools.pool("absent"), false, settings(m, pools.pool("absent"))));
        assertTrue(none.getMessage().contains("--create"), none.getMessage());
        assertFalse(Files.exists(pools.pool("absent")));

        // An index without an identity (a create cut short, or a hand-made one) is not adopted.
        ClusterRefusedException unadopted = assertThrows(ClusterRefusedException.class, () -> {
            Files.delete(c.resolve(NodeIdentity.FILE_NAME));
            NodeDirectory.checkAndOpen(m, "n0", c, true, settings(m, c));
        });
        assertTrue(unadopted.getMessage().contains("is not a node's directory"), unadopted.getMessage());

        // The node's own directory opens, and a damaged identity is refused.
        NodeDirectory.checkAndOpen(m, "n0", a, false, settings(m, a)).close();
        Files.writeString(a.resolve(NodeIdentity.FILE_NAME), Files.readString(a.resolve(NodeIdentity.FILE_NAME)).replace(" 0 n0 ", " 1 n0 "));
        assertTrue(assertThrows(ClusterRefusedException.class, () -> NodeDirectory.checkAndOpen(m, "n0", a, false, settings(m, a)))
                .getMessage().contains("damaged"));
    }

    @Test
    void aNodeWithAnotherManifestIsRefusedByTheRunningCluster() {
        ClusterManifest m = ClusterManifest.create("c2", 8, 16, NodeProcess.onThisHost(2));
        ClusterManifest other = ClusterManifest.create("c2", 8, 16, m.nodes());
        try (ClusterNode n0 = ClusterNode.builder(m, "n0", pools.pool("n0")).create(true).start()) {
            ClusterRefusedException e = assertThrows(ClusterRefusedException.class,
                    () -> ClusterNode.builder(other, "n1", pools.pool("n1")).create(true).start());
            assertTrue(e.getMessage().contains("was started with another manifest"), e.getMessage());
            assertEquals(0, n0.shard());
        }
    }

    @Test
    void aShardThatALiveMemberServesIsNotClaimedTwice() {
        ClusterManifest m = ClusterManifest.create("c3", 8, 16, NodeProcess.onThisHost(3));
        try (ClusterNode n0 = ClusterNode.builder(m, "n0", pools.pool("n0")).create(true).start()) {
            // As if n0 had claimed shard 2 too (a second process of one node, or a stale claim of a live member).
            IMap<Integer, UUID> owners = Hazelcast.getHazelcastInstanceByName("gphash-c3-n0").getMap(ClusterMembers.SHARDS_MAP);
            owners.put(2, Hazelcast.getHazelcastInstanceByName("gphash-c3-n0").getCluster().getLocalMember().getUuid());
            ClusterRefusedException e = assertThrows(ClusterRefusedException.class,
                    () -> ClusterNode.builder(m, "n2", pools.pool("n2")).create(true).start());
            assertTrue(e.getMessage().contains("shard 2 is already served by node n0"), e.getMessage());
            assertFalse(Files.exists(pools.pool("n2")), "a refused start creates nothing");
            // The claim of a member that left is taken over.
            owners.put(2, UUID.randomUUID());
            try (ClusterNode n2 = ClusterNode.builder(m, "n2", pools.pool("n2")).create(true).start()) {
                assertEquals(2, n2.shard());
            }
        }
    }
}
