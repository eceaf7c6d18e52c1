package org.gphash.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;

import org.gphash.Batch;
import org.gphash.GPHashIndex;
import org.gphash.Outcome;
import org.gphash.cluster.ClusterManifest;
import org.gphash.cluster.GPHashCluster;
import org.gphash.cluster.NodeProcess;
import org.gphash.index.api.TestPools;
import org.junit.jupiter.api.Test;

/**
 * {@code bench ycsb --cluster}: the store connects to the running cluster (one node, its own JVM),
 * empties it as a fresh pool would be, and refuses sizes the cluster does not hold.
 */
class ClusterStoreTest {

    @Test
    void aClusterIsEmptiedWhenOpenedAndItsSizesAreChecked() throws Exception {
        TestPools pools = TestPools.create();
        Path dir = pools.dir();
        Path manifest = dir.resolve("cluster.manifest");
        ClusterManifest.create("bench-test", 8, 16, NodeProcess.onThisHost(1)).writeNew(manifest);
        String before = System.getProperty(ClusterStore.MANIFEST);
        try (NodeProcess node = NodeProcess.start(manifest, "n0", dir.resolve("n0"), true, "256m").awaitServing(120)) {
            try (GPHashIndex client = GPHashCluster.client(manifest).connect()) {
                Batch load = client.newBatch(70_000);
                for (long k = 0; k < 70_000; k++) {
                    load.put(k, new byte[16]);
                }
                assertEquals(70_000, client.execute(load).count(Outcome.INSERTED));
            }
            System.setProperty(ClusterStore.MANIFEST, manifest.toString());
            try (ClusterStore store = new ClusterStore(new StoreConfig(dir, 8, 16, 1000, 1))) {
                assertEquals("gphash-cluster", store.name());
                assertEquals(0, store.stats().size(), "emptied: more keys than one batch of deletes");
            }
            IllegalArgumentException wrong = assertThrows(IllegalArgumentException.class,
                    () -> new ClusterStore(new StoreConfig(dir, 8, 128, 1000, 1)));
            assertTrue(wrong.getMessage().contains("holds 8-byte keys and 16-byte values"), wrong.getMessage());
        } finally {
            if (before == null) {
                System.clearProperty(ClusterStore.MANIFEST);
            } else {
                System.setProperty(ClusterStore.MANIFEST, before);
            }
            pools.close();
        }
    }
}
