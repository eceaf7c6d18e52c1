package org.gphash.cluster;

import java.util.concurrent.CompletableFuture;

import com.hazelcast.cluster.Member;
import com.hazelcast.core.ExecutionCallback;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.core.IExecutorService;

/**
 * The cluster's transport: Hazelcast's executor runs each call on the member whose node serves the
 * shard (the member attribute {@value ClusterMembers#NODE_ATTRIBUTE} names the node). A shard whose
 * node is not a member now fails at once, without a message; one whose node leaves while running a
 * call fails when Hazelcast notices (the connection closes: at once for a killed process).
 */
final class HazelcastTransport implements NodeTransport {

    private final HazelcastInstance client;
    private final IExecutorService executor;
    private final ClusterManifest manifest;

    HazelcastTransport(HazelcastInstance client, ClusterManifest manifest) {
        this.client = client;
        this.executor = client.getExecutorService(ClusterMembers.EXECUTOR);
        this.manifest = manifest;
    }

    @Override
    public <R> CompletableFuture<R> call(int shard, NodeCall<R> call) {
        CompletableFuture<R> reply = new CompletableFuture<>();
        ClusterManifest.Node node = manifest.nodes().get(shard);
        Member member;
        try {
            member = ClusterMembers.memberOf(client, node.name());
        } catch (RuntimeException e) {
            reply.completeExceptionally(new NodeUnavailableException("the client cannot reach the cluster: " + e.getMessage(), e));
            return reply;
        }
        if (member == null) {
            reply.completeExceptionally(new NodeUnavailableException("node " + node.name() + " is not in the cluster", null));
            return reply;
        }
        try {
            executor.submitToMember(call, member, new ExecutionCallback<R>() {
                @Override
                public void onResponse(R response) {
                    reply.complete(response);
                }

                @Override
                public void onFailure(Throwable t) {
                    reply.completeExceptionally(classify(node, t));
                }
            });
        } catch (RuntimeException e) {
            reply.completeExceptionally(classify(node, e));
        }
        return reply;
    }

    /** Hazelcast's own failures (a member gone, the client shut down) say the node is unavailable; the node's own pass through. */
    private static Throwable classify(ClusterManifest.Node node, Throwable t) {
        if (t.getClass().getName().startsWith("com.hazelcast.")) {
            return new NodeUnavailableException("node " + node.name() + " left or cannot be reached (" + t.getClass().getSimpleName()
                    + ": " + t.getMessage() + ")", t);
        }
        return t;
    }

    @Override
    public void close() {
        client.shutdown();
    }
}
