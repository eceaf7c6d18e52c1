package org.gphash.cluster;

import java.util.concurrent.CompletableFuture;

/**
 * How a client reaches the node that serves a shard. The cluster's is Hazelcast's executor
 * ({@link HazelcastTransport}); tests of the split and merge run the calls on in-process nodes.
 */
interface NodeTransport extends AutoCloseable {

    /**
     * Sends {@code call} to the node of {@code shard}.
     *
     * @return the reply, or a failure: {@link NodeUnavailableException} when no member serves the
     *         shard or it left while running the call, or the node's own exception
     */
    <R> CompletableFuture<R> call(int shard, NodeCall<R> call);

    @Override
    void close();
}
