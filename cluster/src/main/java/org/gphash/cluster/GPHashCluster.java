package org.gphash.cluster;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import org.gphash.Coalescing;
import org.gphash.GPHashIndex;

/**
 * The client of a cluster index: a {@link GPHashIndex} whose shards are served by the cluster's
 * nodes ({@link ClusterNode}), from a process that holds no shard. Batches, single calls, the typed
 * map and cursors work as on one host; what differs is failure ({@link ShardsUnavailableException})
 * and that snapshots are taken per node.
 *
 * <pre>{@code
 * try (GPHashIndex index = GPHashCluster.client(Path.of("cluster.manifest")).connect()) {
 *     index.put(42L, value);
 * }
 * }</pre>
 */
public final class GPHashCluster {

    private GPHashCluster() {
    }

    /**
     * A client of the cluster the manifest file describes.
     *
     * @param manifestFile the cluster's manifest (the file every node was given)
     * @return the client's builder
     */
    public static Client client(Path manifestFile) {
        return new Client(Objects.requireNonNull(manifestFile, "manifestFile"));
    }

    /** A client's settings; {@link #connect()} makes the index. */
    public static final class Client {
        private final Path manifestFile;
        private Duration connectTimeout = Duration.ofSeconds(20);
        private Coalescing coalescing = Coalescing.OFF;
        private int messageOps = MessageSplit.MESSAGE_OPS;

        private Client(Path manifestFile) {
            this.manifestFile = manifestFile;
        }

        /**
         * How long {@link #connect()} tries the nodes' addresses before it gives up.
         *
         * @param timeout 20 seconds by default
         * @return this client
         */
        public Client connectTimeout(Duration timeout) {
            this.connectTimeout = Objects.requireNonNull(timeout, "timeout");
            return this;
        }

        /**
         * Whether single calls from many threads are gathered into batches (one message per node
         * for many calls) before they travel; off by default.
         *
         * @param coalescing the front end's settings (needs gphash-frontend)
         * @return this client
         */
        public Client coalescing(Coalescing coalescing) {
            this.coalescing = Objects.requireNonNull(coalescing, "coalescing");
            return this;
        }

        /**
         * The most operations one message carries: a shard's part of a batch larger than this
         * travels as several messages of disjoint keys, which its node runs at once (a CPU node on
         * several cores) while the next ones travel. 65,536 by default; GPU nodes run larger
         * batches better.
         *
         * @param ops 1 or more
         * @return this client
         */
        public Client messageOps(int ops) {
            if (ops < 1) {
                throw new IllegalArgumentException("messageOps must be at least 1, got " + ops);
            }
            this.messageOps = ops;
            return this;
        }

        /**
         * Connects: reads the manifest, joins the cluster as a client, checks that the cluster runs
         * this manifest, and asks the nodes for their geometry.
         *
         * @return the index over the cluster
         * @throws ClusterRefusedException     when the running cluster has another manifest
         * @throws ShardsUnavailableException  when no node answers
         */
        public GPHashIndex connect() {
            ClusterManifest manifest = ClusterManifest.read(manifestFile);
            HazelcastInstance hz;
            try {
                hz = ClusterMembers.client(manifest, connectTimeout.toMillis());
            } catch (RuntimeException e) {
                throw new ShardsUnavailableException(manifest.shardNumbers(),
                        "no node of cluster " + manifest.name() + " answered at " + addresses(manifest) + " within "
                                + connectTimeout.toSeconds() + " s (" + e.getMessage() + ")", null, e);
            }
            try {
                IMap<String, Long> facts = hz.getMap(ClusterMembers.CLUSTER_MAP);
                Long theirs = facts.get(ClusterMembers.DIGEST_KEY);
                if (theirs != null && theirs != manifest.digest()) {
                    throw new ClusterRefusedException("the running cluster " + manifest.name() + " was started with another "
                            + "manifest than " + manifestFile + " (digest " + Long.toHexString(theirs) + ", this file's "
                            + Long.toHexString(manifest.digest()) + ")");
                }
                ClusterEngine engine = new ClusterEngine(manifest, new HazelcastTransport(hz, manifest), messageOps);
                return GPHashIndex.overEngine(engine, GPHashIndex.builder(manifestFile).keySize(manifest.keySize())
                        .valueSize(manifest.valueSize()).coalescing(coalescing).config());
            } catch (RuntimeException | Error e) {
                hz.shutdown();
                throw e;
            }
        }
    }

    /**
     * Where a cluster client's batches spent their time since the last reset (for the cluster
     * benchmark): split, wait for the replies, the busiest node's time in its index (its messages'
     * runs summed), merge, in nanoseconds summed over batches, then the number of batches.
     *
     * @param index a client's index ({@link Client#connect()})
     * @param reset whether to start counting again
     * @return the five figures
     * @throws IllegalArgumentException when {@code index} is not a cluster client's
     */
    public static long[] batchStages(GPHashIndex index, boolean reset) {
        return engineOf(index).stageNanos(reset);
    }

    /**
     * The transport alone, for the cluster benchmark: the messages a batch of {@code batchOps}
     * operations is split into, {@code bytesPerOpOut} bytes an operation, sent at once and answered
     * with {@code bytesPerOpBack} bytes an operation, nothing run.
     *
     * @param index          a client's index
     * @param batchOps       the batch's operations
     * @param bytesPerOpOut  bytes an operation sends
     * @param bytesPerOpBack bytes an operation's reply carries
     * @return the nanoseconds until every reply was in
     */
    public static long echo(GPHashIndex index, int batchOps, int bytesPerOpOut, int bytesPerOpBack) {
        return engineOf(index).echo(batchOps, bytesPerOpOut, bytesPerOpBack);
    }

    /**
     * Each shard's figures, or why its node did not answer (a String), in shard order: a view of a
     * cluster with some nodes down, for {@code gphash cluster status}.
     *
     * @param index a client's index
     * @return per shard, its {@code IndexStats} or the reason
     */
    public static List<Object> shardStatus(GPHashIndex index) {
        return engineOf(index).shardStatsOrReasons();
    }

    private static ClusterEngine engineOf(GPHashIndex index) {
        if (!(index.engine() instanceof ClusterEngine engine)) {
            throw new IllegalArgumentException(index + " is not a cluster client's index");
        }
        return engine;
    }

    private static String addresses(ClusterManifest manifest) {
        StringBuilder b = new StringBuilder();
        for (ClusterManifest.Node n : manifest.nodes()) {
            b.append(b.isEmpty() ? "" : ", ").append(n.address());
        }
        return b.toString();
    }
}
