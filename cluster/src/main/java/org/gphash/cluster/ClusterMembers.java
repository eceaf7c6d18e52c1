package org.gphash.cluster;

import java.util.logging.Level;
import java.util.logging.Logger;

import com.hazelcast.client.HazelcastClient;
import com.hazelcast.client.config.ClientConfig;
import com.hazelcast.cluster.Member;
import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.core.HazelcastInstance;

/**
 * How gphash uses Hazelcast, in one place: the configuration of a node's member and of a client, the
 * names of the executor and maps, and which member serves a node.
 *
 * <p>gphash uses Hazelcast for membership, discovery, failure detection and the transport only. The
 * shards are not Hazelcast partitions: a shard is pinned to its node by the manifest and never moves,
 * and Hazelcast's own partitions hold only two small maps (the manifest's digest and who serves each
 * shard), which its rebalancing may move freely.
 */
final class ClusterMembers {

    /** The member attribute naming the node a member is. */
    static final String NODE_ATTRIBUTE = "gphash.node";
    /** The executor that runs the calls on the nodes. */
    static final String EXECUTOR = "gphash";
    /** The map of the cluster's facts: the manifest's digest. */
    static final String CLUSTER_MAP = "gphash.cluster";
    /** The map from shard to the UUID of the member that serves it. */
    static final String SHARDS_MAP = "gphash.shards";
    /** The key of the manifest's digest in {@link #CLUSTER_MAP}. */
    static final String DIGEST_KEY = "manifest-digest";

    /** Held here: java.util.logging keeps loggers weakly, and a collected one forgets its level. */
    private static final Logger HAZELCAST_LOG = Logger.getLogger("com.hazelcast");

    private ClusterMembers() {
    }

    /**
     * Settings both a member and a client take: no phone-home (no network but the cluster's), JDK
     * logging at {@code level} (a member's warnings are worth seeing; a client's are each failed
     * connection to a node that is down, which its calls report themselves).
     */
    static void quietLogging(Level level) {
        System.setProperty("hazelcast.logging.type", "jdk");
        System.setProperty("hazelcast.phone.home.enabled", "false");
        HAZELCAST_LOG.setLevel(level);
    }

    /**
     * A node's member: the manifest's cluster name, its address (no other port tried), joining the
     * other nodes' addresses over TCP (no multicast), its name as an attribute.
     *
     * @param heartbeatSeconds how long a member may be silent before the others drop it
     */
    static Config memberConfig(ClusterManifest manifest, ClusterManifest.Node self, int executorThreads, int heartbeatSeconds) {
        quietLogging(Level.WARNING);
        Config c = new Config();
        c.setClusterName(manifest.name());
        c.setInstanceName("gphash-" + manifest.name() + "-" + self.name());
        c.setProperty("hazelcast.shutdownhook.enabled", "false");
        c.setProperty("hazelcast.phone.home.enabled", "false");
        c.setProperty("hazelcast.heartbeat.interval.seconds", "1");
        c.setProperty("hazelcast.max.no.heartbeat.seconds", Integer.toString(heartbeatSeconds));
        c.getNetworkConfig().setPort(self.port()).setPortAutoIncrement(false).setPublicAddress(self.address());
        JoinConfig join = c.getNetworkConfig().getJoin();
        join.getMulticastConfig().setEnabled(false);
        join.getAutoDetectionConfig().setEnabled(false);
        join.getTcpIpConfig().setEnabled(true);
        for (ClusterManifest.Node n : manifest.nodes()) {
            join.getTcpIpConfig().addMember(n.address());
        }
        c.getMemberAttributeConfig().setAttribute(NODE_ATTRIBUTE, self.name());
        c.getExecutorConfig(EXECUTOR).setPoolSize(executorThreads);
        return c;
    }

    /** A client of the manifest's cluster, trying every node's address for up to {@code connectMillis}. */
    static HazelcastInstance client(ClusterManifest manifest, long connectMillis) {
        quietLogging(Level.SEVERE);
        ClientConfig c = new ClientConfig();
        c.setClusterName(manifest.name());
        c.setProperty("hazelcast.phone.home.enabled", "false");
        c.setProperty("hazelcast.client.heartbeat.interval", "1000");
        for (ClusterManifest.Node n : manifest.nodes()) {
            c.getNetworkConfig().addAddress(n.address());
        }
        c.getConnectionStrategyConfig().getConnectionRetryConfig().setClusterConnectTimeoutMillis(connectMillis);
        return HazelcastClient.newHazelcastClient(c);
    }

    /** {@return the member that is node {@code name} now, or null} */
    static Member memberOf(HazelcastInstance instance, String name) {
        for (Member m : instance.getCluster().getMembers()) {
            if (name.equals(m.getAttribute(NODE_ATTRIBUTE))) {
                return m;
            }
        }
        return null;
    }
}
