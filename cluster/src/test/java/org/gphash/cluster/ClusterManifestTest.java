package org.gphash.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ClusterManifestTest {

    private static final List<ClusterManifest.Node> NODES = List.of(ClusterManifest.Node.parse("a=127.0.0.1:5701"),
            ClusterManifest.Node.parse("b=127.0.0.1:5702"), ClusterManifest.Node.parse("c=host-c.example:5701"));

    @Test
    void roundTripsThroughItsFileOwnerOnly(@TempDir Path dir) throws Exception {
        ClusterManifest m = ClusterManifest.create("demo", 8, 128, NODES);
        Path f = dir.resolve("cluster.manifest");
        m.writeNew(f);
        ClusterManifest back = ClusterManifest.read(f);
        assertEquals(m, back);
        assertEquals(m.digest(), back.digest());
        assertEquals(3, back.shards());
        assertEquals(1, back.shardOf("b"));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(f)));
        assertThrows(IllegalArgumentException.class, () -> m.writeNew(f), "written once");
    }

    @Test
    void anEditedOrDamagedFileIsRefused(@TempDir Path dir) throws Exception {
        ClusterManifest m = ClusterManifest.create("demo", 8, 128, NODES);
        Path f = dir.resolve("cluster.manifest");
        m.writeNew(f);
        // Swapping two nodes' lines would send their keys to the other's shard: the checksum refuses it.
        String swapped = Files.readString(f).replace("shard.0=a", "shard.0=x").replace("shard.1=b", "shard.1=a")
                .replace("shard.0=x", "shard.0=b");
        Files.writeString(f, swapped);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ClusterManifest.read(f));
        assertTrue(e.getMessage().contains("checksum"), e.getMessage());
        Files.writeString(f, "name=demo\n");
        assertTrue(assertThrows(IllegalArgumentException.class, () -> ClusterManifest.read(f)).getMessage()
                .contains("not a gphash cluster manifest"));
    }

    @Test
    void twoClustersDifferInIdentityAndDigest() {
        ClusterManifest a = ClusterManifest.create("demo", 8, 128, NODES);
        ClusterManifest b = ClusterManifest.create("demo", 8, 128, NODES);
        assertNotEquals(a.id(), b.id());
        assertNotEquals(a.digest(), b.digest());
    }

    @Test
    void badNodesAreRefusedByName() {
        assertThrows(IllegalArgumentException.class, () -> ClusterManifest.Node.parse("a:5701"));
        assertThrows(IllegalArgumentException.class, () -> ClusterManifest.Node.parse("a=host:port"));
        assertThrows(IllegalArgumentException.class, () -> ClusterManifest.Node.parse("a b=host:1"));
        IllegalArgumentException twice = assertThrows(IllegalArgumentException.class, () -> ClusterManifest.create("demo", 8, 128,
                List.of(ClusterManifest.Node.parse("a=h:1"), ClusterManifest.Node.parse("a=h:2"))));
        assertTrue(twice.getMessage().contains("two nodes are named a"), twice.getMessage());
        IllegalArgumentException unknown = assertThrows(IllegalArgumentException.class,
                () -> ClusterManifest.create("demo", 8, 128, NODES).shardOf("z"));
        assertTrue(unknown.getMessage().contains("[a, b, c]"), unknown.getMessage());
    }
}
