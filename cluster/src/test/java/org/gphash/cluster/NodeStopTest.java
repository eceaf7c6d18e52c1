package org.gphash.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import com.hazelcast.nio.ObjectDataInput;
import com.hazelcast.nio.ObjectDataOutput;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A node that stops refuses new calls and waits for the ones running, so that their replies go out
 * before it closes its index (a close under a running part would fail it half-run).
 */
class NodeStopTest {

    /** Threads of the test's own: the common pool has one thread on a 2-core machine, which a blocked call holds. */
    private final ExecutorService threads = Executors.newCachedThreadPool();

    @AfterEach
    void stopThreads() {
        threads.shutdownNow();
    }

    /** A call that runs until released. */
    static final class BlockingCall extends NodeCall<String> {
        final CountDownLatch started = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);

        BlockingCall(long clusterId, int shard) {
            super(clusterId, shard);
        }

        @Override
        String runOn(NodeService node) {
            started.countDown();
            try {
                release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return "done";
        }

        @Override
        void writeFields(ObjectDataOutput out) throws IOException {
        }

        @Override
        void readFields(ObjectDataInput in) throws IOException {
        }
    }

    @Test
    void stoppingWaitsForRunningCallsAndRefusesNewOnes() throws Exception {
        try (InProcessCluster cluster = new InProcessCluster(1, 16)) {
            NodeService node = cluster.nodes[0];
            BlockingCall running = new BlockingCall(cluster.manifest.id(), 0);
            CompletableFuture<String> reply = CompletableFuture.supplyAsync(() -> node.serve(running), threads);
            assertTrue(running.started.await(10, TimeUnit.SECONDS));
            CompletableFuture<Boolean> stopped = CompletableFuture.supplyAsync(() -> node.stopServing(Duration.ofSeconds(20)), threads);
            Thread.sleep(300);
            assertFalse(stopped.isDone(), "the stop waits while a call runs");
            IllegalStateException refused = assertThrows(IllegalStateException.class,
                    () -> node.serve(new BlockingCall(cluster.manifest.id(), 0)));
            assertTrue(refused.getMessage().contains("is stopping"), refused.getMessage());
            running.release.countDown();
            assertEquals("done", reply.get(10, TimeUnit.SECONDS), "the running call's reply goes out");
            assertTrue(stopped.get(10, TimeUnit.SECONDS), "then the stop returns, drained");
        }
    }

    @Test
    void aStopGivesUpAfterItsPatience() throws Exception {
        try (InProcessCluster cluster = new InProcessCluster(1, 16)) {
            NodeService node = cluster.nodes[0];
            BlockingCall running = new BlockingCall(cluster.manifest.id(), 0);
            CompletableFuture<String> reply = CompletableFuture.supplyAsync(() -> node.serve(running), threads);
            assertTrue(running.started.await(10, TimeUnit.SECONDS));
            assertFalse(node.stopServing(Duration.ofMillis(200)), "not drained in 200 ms");
            running.release.countDown();
            reply.get(10, TimeUnit.SECONDS);
        }
    }
}
