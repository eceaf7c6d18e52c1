package org.gphash.bench;

import java.nio.file.Path;
import java.util.List;

import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.Cursor;
import org.gphash.GPHashIndex;
import org.gphash.cluster.GPHashCluster;

/**
 * A running cluster ({@code gphash node}) as the system under test of {@code bench ycsb --cluster
 * MANIFEST}: a client's index, emptied when opened, so that every workload starts from nothing as a
 * fresh pool does. The manifest comes in the system property {@value #MANIFEST}, which {@code
 * --cluster} sets, as the other stores take their settings ({@code gphash.bench.coalescing}).
 */
final class ClusterStore extends GPHashStore {

    /** The system property naming the cluster's manifest. */
    static final String MANIFEST = "gphash.bench.cluster";
    /** The system's name in tables. */
    static final String NAME = "gphash-cluster";

    private final Path manifest;

    ClusterStore(StoreConfig config) {
        this(connect(config));
    }

    private ClusterStore(Connected c) {
        super(c.index(), Backend.CPU);
        this.manifest = c.manifest();
        empty(index);
    }

    private record Connected(GPHashIndex index, Path manifest) {
    }

    private static Connected connect(StoreConfig config) {
        config.requireFixedLengths("a cluster");   // its nodes' requests carry values of the value size
        String file = System.getProperty(MANIFEST);
        if (file == null) {
            throw new IllegalStateException(NAME + " needs a cluster's manifest: bench ycsb --cluster MANIFEST");
        }
        Path manifest = Path.of(file);
        GPHashIndex index = GPHashCluster.client(manifest).connect();
        if (index.keySize() != config.keySize() || index.valueSize() != config.valueSize()) {
            int ks = index.keySize();
            int vs = index.valueSize();
            index.close();
            throw new IllegalArgumentException("the cluster of " + manifest + " holds " + ks + "-byte keys and " + vs
                    + "-byte values; the benchmark asks for " + config.keySize() + " and " + config.valueSize()
                    + " (--key-size, --value-size)");
        }
        return new Connected(index, manifest);
    }

    /** Deletes every key, in batches, read through a cursor first (a scan while deleting would skip keys). */
    private static void empty(GPHashIndex index) {
        while (index.size() > 0) {
            Batch batch = index.newBatch(1 << 16);
            Cursor c = index.cursor();
            while (c.next() && batch.size() < 1 << 16) {
                batch.delete(c.key());
            }
            index.execute(batch);
        }
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String description() {
        List<?> shards = GPHashCluster.shardStatus(index);
        return "GPHash cluster of " + shards.size() + " nodes (" + manifest + "), its CPU or GPU nodes as started";
    }
}
