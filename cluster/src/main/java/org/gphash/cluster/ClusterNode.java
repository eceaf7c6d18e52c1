package org.gphash.cluster;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.UUID;
import java.util.function.UnaryOperator;

import com.hazelcast.cluster.Member;
import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import org.gphash.GPHashIndex;

/**
 * A node of a cluster index: the process that serves one shard, its host's index (a sharded index
 * directory: one shard pool per GPU of the host, or CPU shards), as a Hazelcast member.
 *
 * <p>Start, in order, each step refusing with nothing written: (1) the manifest names this node; (2)
 * the directory is this node's ({@link NodeIdentity}: this cluster, this shard, the index it
 * created), or with {@link Builder#create} there is none yet; (3) the member joins, and the
 * cluster's manifest digest must equal this node's; (4) the node claims its shard, refused while
 * another live member serves it; (5) the index opens (its recovery runs), or is created with its
 * identity. Only then does it answer calls (a call before gets an error naming the node). Shards never move: a node that is down leaves its shard unavailable until it, or
 * a node started over a copy of its directory, comes back.
 */
public final class ClusterNode implements AutoCloseable {

    /** How long a closing node waits for the calls running on it. */
    static final Duration STOP_PATIENCE = Duration.ofSeconds(30);
    private static final System.Logger LOG = System.getLogger("org.gphash.cluster");

    private final ClusterManifest manifest;
    private final int shard;
    private final Path dir;
    private final NodeService service;
    private final HazelcastInstance member;
    private volatile boolean closed;

    private ClusterNode(ClusterManifest manifest, int shard, Path dir, NodeService service, HazelcastInstance member) {
        this.manifest = manifest;
        this.shard = shard;
        this.dir = dir;
        this.service = service;
        this.member = member;
    }

    /**
     * A builder for node {@code name} of the cluster {@code manifest} describes, its index in {@code dir}.
     *
     * @param manifest the cluster's manifest
     * @param name     this node's name in it
     * @param dir      the node's directory (the sharded index's)
     * @return the builder
     */
    public static Builder builder(ClusterManifest manifest, String name, Path dir) {
        return new Builder(manifest, name, dir);
    }

    /** How a node starts: the builder is its configuration. */
    public static final class Builder {
        private final ClusterManifest manifest;
        private final String name;
        private final Path dir;
        private boolean create;
        private int localShards = 1;
        private UnaryOperator<GPHashIndex.Builder> index = UnaryOperator.identity();
        private int executorThreads = Math.max(4, Runtime.getRuntime().availableProcessors());
        private int heartbeatSeconds = 10;

        private Builder(ClusterManifest manifest, String name, Path dir) {
            this.manifest = Objects.requireNonNull(manifest, "manifest");
            this.name = Objects.requireNonNull(name, "name");
            this.dir = Objects.requireNonNull(dir, "dir");
        }

        /**
         * Creates the node's directory and index when there is none (refused when the path exists
         * and is not this node's directory).
         *
         * @param create whether to
         * @return this builder
         */
        public Builder create(boolean create) {
            this.create = create;
            return this;
        }

        /**
         * How many shard pools the node's own index has when created (one per GPU with the GPU
         * backend's {@code devices}, which the index settings set): 1 by default.
         *
         * @param n 1 to 256
         * @return this builder
         */
        public Builder localShards(int n) {
            if (n < 1 || n > 256) {
                throw new IllegalArgumentException("localShards must be 1 to 256, got " + n);
            }
            this.localShards = n;
            return this;
        }

        /**
         * Further settings of the node's index (backend, devices, durability, journal ...), applied to
         * the builder that opens or creates it; key and value sizes come from the manifest.
         *
         * @param settings the settings
         * @return this builder
         */
        public Builder index(UnaryOperator<GPHashIndex.Builder> settings) {
            this.index = Objects.requireNonNull(settings, "settings");
            return this;
        }

        /**
         * Threads that run calls at once on this node (Hazelcast's executor).
         *
         * @param n 1 or more
         * @return this builder
         */
        public Builder executorThreads(int n) {
            if (n < 1) {
                throw new IllegalArgumentException("executorThreads must be at least 1, got " + n);
            }
            this.executorThreads = n;
            return this;
        }

        /**
         * How long the other members wait for a silent member before they drop it (a killed process
         * is dropped sooner: its connections close).
         *
         * @param seconds 2 or more; 10 by default
         * @return this builder
         */
        public Builder heartbeatSeconds(int seconds) {
            if (seconds < 2) {
                throw new IllegalArgumentException("heartbeatSeconds must be at least 2, got " + seconds);
            }
            this.heartbeatSeconds = seconds;
            return this;
        }

        /**
         * Starts the node: checks, opens, joins, claims (see the class comment).
         *
         * @return the serving node
         * @throws ClusterRefusedException when a check refuses
         */
        public ClusterNode start() {
            int shard = manifest.shardOf(name);
            boolean exists = NodeDirectory.check(manifest, name, dir, create);
            HazelcastInstance hz = Hazelcast.newHazelcastInstance(ClusterMembers.memberConfig(manifest,
                    manifest.nodes().get(shard), executorThreads, heartbeatSeconds));
            GPHashIndex idx = null;
            try {
                agreeOnManifest(hz);
                claim(hz, shard);
                idx = NodeDirectory.openOrCreate(manifest, name, dir, exists, index.apply(GPHashIndex.builder(dir)
                        .keySize(manifest.keySize()).valueSize(manifest.valueSize()).shards(localShards)));
                NodeService service = new NodeService(manifest, shard, idx);
                hz.getUserContext().put(NodeService.CONTEXT_KEY, service);
                service.startServing();
                return new ClusterNode(manifest, shard, dir, service, hz);
            } catch (RuntimeException | Error e) {
                try {
                    hz.shutdown();
                } catch (RuntimeException ignored) {
                    // the refusal is what the caller needs to see
                } finally {
                    if (idx != null) {
                        idx.close();
                    }
                }
                throw e;
            }
        }

        /** Every member must run the same manifest: the first to join publishes its digest. */
        private void agreeOnManifest(HazelcastInstance hz) {
            IMap<String, Long> facts = hz.getMap(ClusterMembers.CLUSTER_MAP);
            Long digest = manifest.digest();
            Long theirs = facts.putIfAbsent(ClusterMembers.DIGEST_KEY, digest);
            if (theirs != null && !theirs.equals(digest)) {
                throw new ClusterRefusedException("the running cluster " + manifest.name() + " was started with another "
                        + "manifest (digest " + Long.toHexString(theirs) + ", this node's " + Long.toHexString(digest)
                        + "): give every node the same manifest file; nothing was served");
            }
        }

        /** Claims the shard; refused while a live member claims it. */
        private void claim(HazelcastInstance hz, int shard) {
            IMap<Integer, UUID> owners = hz.getMap(ClusterMembers.SHARDS_MAP);
            UUID mine = hz.getCluster().getLocalMember().getUuid();
            UUID theirs = owners.putIfAbsent(shard, mine);
            if (theirs == null || theirs.equals(mine)) {
                return;
            }
            for (Member m : hz.getCluster().getMembers()) {
                if (m.getUuid().equals(theirs)) {
                    throw new ClusterRefusedException("shard " + shard + " is already served by node "
                            + m.getAttribute(ClusterMembers.NODE_ATTRIBUTE) + " (member " + m.getAddress() + "): two nodes "
                            + "claim one shard; stop one of them; nothing was served");
                }
            }
            // The claim of a member that has left: take it over, unless another node did meanwhile.
            if (!owners.replace(shard, theirs, mine)) {
                throw new ClusterRefusedException("shard " + shard + " was claimed by another member while node " + name
                        + " started; nothing was served");
            }
        }
    }

    /** {@return the shard this node serves} */
    public int shard() {
        return shard;
    }

    /** {@return the node's directory} */
    public Path directory() {
        return dir;
    }

    /** {@return the index the node serves (for tools run in the node's process)} */
    public GPHashIndex index() {
        return service.index();
    }

    /** {@return the cluster's manifest} */
    public ClusterManifest manifest() {
        return manifest;
    }

    /**
     * Refuses new calls and waits for those running (at most {@link #STOP_PATIENCE}), leaves the
     * cluster, then closes the index cleanly.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (!service.stopServing(STOP_PATIENCE)) {
            LOG.log(System.Logger.Level.WARNING, this + ": calls still running after " + STOP_PATIENCE.toSeconds()
                    + " s; closing the index under them (their clients see their shard unavailable)");
        }
        try {
            IMap<Integer, UUID> owners = member.getMap(ClusterMembers.SHARDS_MAP);
            owners.remove(shard, member.getCluster().getLocalMember().getUuid());
        } catch (RuntimeException ignored) {
            // the cluster may be gone already; the claim of a member that left is taken over anyway
        } finally {
            try {
                member.shutdown();
            } finally {
                service.index().close();
            }
        }
    }

    @Override
    public String toString() {
        ClusterManifest.Node n = manifest.nodes().get(shard);
        return "node " + n.name() + " (shard " + shard + " of cluster " + manifest.name() + ", " + n.address() + ", " + dir + ")";
    }
}
