package org.gphash.cluster;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.UnaryOperator;

import com.hazelcast.internal.serialization.Data;
import com.hazelcast.internal.serialization.SerializationService;
import com.hazelcast.internal.serialization.impl.DefaultSerializationServiceBuilder;
import org.gphash.Coalescing;
import org.gphash.GPHashIndex;
import org.gphash.index.api.TestPools;

/**
 * A cluster without Hazelcast's members: nodes' services over CPU indexes in this JVM, reached by a
 * transport that passes every call and reply through Hazelcast's serialization (so the messages'
 * own writing and reading is tested too) and can take a shard's node down.
 */
final class InProcessCluster implements AutoCloseable {

    final ClusterManifest manifest;
    final NodeService[] nodes;
    final Set<Integer> down = ConcurrentHashMap.newKeySet();
    private final TestPools pools = TestPools.create();
    private final ExecutorService pool = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "in-process-node");
        t.setDaemon(true);
        return t;
    });
    private final SerializationService serialization = new DefaultSerializationServiceBuilder().build();

    InProcessCluster(int shards, int valueSize) {
        this(shards, valueSize, b -> b.initialCapacity(4096));
    }

    /** With each node's index built with {@code settings} as well (sizes and shards are set). */
    InProcessCluster(int shards, int valueSize, UnaryOperator<GPHashIndex.Builder> settings) {
        List<ClusterManifest.Node> list = new ArrayList<>();
        for (int s = 0; s < shards; s++) {
            list.add(new ClusterManifest.Node("n" + s, "127.0.0.1", 6000 + s));
        }
        manifest = ClusterManifest.create("test", 8, valueSize, list);
        nodes = new NodeService[shards];
        for (int s = 0; s < shards; s++) {
            Path dir = pools.pool("n" + s);
            GPHashIndex index = settings.apply(GPHashIndex.builder(dir).keySize(8).valueSize(valueSize).shards(1)).create();
            nodes[s] = new NodeService(manifest, s, index);
            nodes[s].startServing();
        }
    }

    /** A client's index over these nodes; a shard's part of more than {@code messageOps} operations travels as several messages. */
    GPHashIndex client(int messageOps) {
        ClusterEngine engine = new ClusterEngine(manifest, new Transport(), messageOps);
        return GPHashIndex.overEngine(engine, GPHashIndex.builder(pools.pool("client")).keySize(8)
                .valueSize(manifest.valueSize()).coalescing(Coalescing.OFF).config());
    }

    private final class Transport implements NodeTransport {
        @Override
        public <R> CompletableFuture<R> call(int shard, NodeCall<R> call) {
            if (down.contains(shard)) {
                return CompletableFuture.failedFuture(new NodeUnavailableException("node n" + shard + " is not in the cluster",
                        null));
            }
            Data wire = serialization.toData(call);
            return CompletableFuture.supplyAsync(() -> {
                NodeCall<R> received = serialization.toObject(wire);
                Data reply = serialization.toData(nodes[shard].serve(received));
                return serialization.<R>toObject(reply);
            }, pool);
        }

        @Override
        public void close() {
        }
    }

    @Override
    public void close() {
        for (NodeService n : nodes) {
            n.index().close();
        }
        pool.shutdown();
        pools.close();
    }
}
