package org.gphash.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.Cursor;
import org.gphash.GPHashIndex;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.index.api.TestPools;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Three real nodes, each its own JVM, on this machine, and a client in the test's JVM: batches and
 * single calls against a plain map; then one node killed (SIGKILL) while a batch is in flight, whose
 * parts must fail naming its shard (that batch's and the next ones') while the others complete, and
 * whose acknowledged writes must be there when it comes back.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterProcessesTest {

    private static final int VALUE = 32;
    private static final long SEED = Long.getLong("gphash.test.seed", 20261129L);
    private static TestPools pools;
    private static Path manifestFile;
    private static ClusterManifest manifest;
    private static final NodeProcess[] NODES = new NodeProcess[3];

    @BeforeAll
    static void startNodes() throws Exception {
        pools = TestPools.create();
        manifestFile = pools.pool("cluster.manifest");
        manifest = ClusterManifest.create("procs", 8, VALUE, NodeProcess.onThisHost(3));
        manifest.writeNew(manifestFile);
        for (int i = 0; i < 3; i++) {
            NODES[i] = NodeProcess.start(manifestFile, "n" + i, pools.pool("n" + i), true, "512m");
        }
        for (NodeProcess n : NODES) {
            n.awaitServing(120);
        }
    }

    @AfterAll
    static void stopNodes() throws Exception {
        for (NodeProcess n : NODES) {
            if (n != null) {
                n.close();
            }
        }
        pools.close();
    }

    private static GPHashIndex client() {
        return GPHashCluster.client(manifestFile).connectTimeout(Duration.ofSeconds(30)).connect();
    }

    private static byte[] value(Random r) {
        byte[] v = new byte[VALUE];
        r.nextBytes(v);
        return v;
    }

    private static int shardOf(long key) {
        byte[] k = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(key).array();
        return manifest.function().shardOf(MemorySegment.ofArray(k), 0, 8);
    }

    @Test
    @Order(1)
    void batchesAndSingleCallsAgreeWithAPlainMap() {
        Random r = new Random(SEED);
        PlainModel model = new PlainModel();
        OpKind[] kinds = OpKind.values();
        try (GPHashIndex index = client()) {
            for (int round = 0; round < 40; round++) {
                String where = "seed " + SEED + " round " + round;
                int n = 1 + r.nextInt(round % 4 == 0 ? 5000 : 300);
                Batch b = index.newBatch(n);
                List<Object[]> ops = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    OpKind k = kinds[r.nextInt(kinds.length)];
                    long key = r.nextInt(2000);
                    byte[] v = value(r);
                    byte[] current = model.get(key);
                    byte[] e = current != null && r.nextBoolean() ? current : value(r);
                    switch (k) {
                        case COMPARE_AND_SET -> b.compareAndSet(key, e, v);
                        case COMPARE_AND_DELETE -> b.compareAndDelete(key, e);
                        case READ_MODIFY_WRITE -> b.readModifyWrite(key, v);
                        case GET -> b.get(key);
                        case DELETE -> b.delete(key);
                        case PUT -> b.put(key, v);
                        case INSERT -> b.insert(key, v);
                        case UPDATE -> b.update(key, v);
                    }
                    ops.add(new Object[] {k, key, v, e});
                }
                BatchResult result = index.execute(b);
                for (int i = 0; i < n; i++) {
                    Object[] op = ops.get(i);
                    long key = (Long) op[1];
                    byte[] old = model.get(key);
                    Outcome expected = model.apply((OpKind) op[0], key, (byte[]) op[2], (byte[]) op[3]);
                    assertEquals(expected, result.outcome(i), where + " op " + i + " " + op[0] + " key " + key);
                    if (expected == Outcome.FOUND || expected == Outcome.REPLACED) {
                        assertArrayEquals(old, result.value(i), where + " op " + i);
                    }
                }
                for (int s = 0; s < 10; s++) {
                    long key = r.nextInt(2000);
                    byte[] v = value(r);
                    switch (r.nextInt(4)) {
                        case 0 -> {
                            byte[] got = index.get(key);
                            byte[] old = model.get(key);
                            assertTrue(old == null ? got == null : java.util.Arrays.equals(old, got), where + " get " + key);
                        }
                        case 1 -> assertEquals(model.apply(OpKind.PUT, key, v, null) == Outcome.INSERTED, index.put(key, v));
                        case 2 -> assertEquals(model.apply(OpKind.DELETE, key, null, null) == Outcome.DELETED, index.delete(key));
                        default -> {
                            byte[] current = model.get(key);
                            byte[] e = current != null ? current : v;
                            assertEquals(model.apply(OpKind.COMPARE_AND_SET, key, v, e) == Outcome.UPDATED,
                                    index.compareAndSet(key, e, v), where + " cas " + key);
                        }
                    }
                }
            }
            Map<Long, byte[]> seen = new HashMap<>();
            Cursor c = index.cursor();
            while (c.next()) {
                assertEquals(null, seen.put(c.longKey(), c.value()), "the cursor returned a key twice");
            }
            assertEquals(model.map.keySet(), seen.keySet());
            model.map.forEach((k, v) -> assertArrayEquals(v, seen.get(k), "key " + k));
            assertEquals(model.map.size(), index.stats().size());
            // Clean up for the next test: the keys of this one are gone.
            Batch wipe = index.newBatch(model.map.size());
            model.map.keySet().forEach(wipe::delete);
            index.execute(wipe);
            assertEquals(0, index.stats().size());
        }
    }

    @Test
    @Order(2)
    void aKilledNodesShardFailsByNameTheOthersCompleteAndItsWritesSurvive() throws Exception {
        Map<Long, byte[]> acknowledged = new HashMap<>();
        // Writes the killed node may have made before it died without a reply: present or absent.
        List<Long> unacknowledged = new ArrayList<>();
        Random r = new Random(SEED + 1);
        long nextKey = 1_000_000;
        int killed = 1;
        boolean sawFailure = false;
        try (GPHashIndex index = client()) {
            for (int round = 0; round < 60; round++) {
                boolean killDuring = round == 20;
                if (round == 40) {
                    NODES[killed] = NodeProcess.start(manifestFile, "n" + killed, pools.pool("n" + killed), false, "512m");
                    NODES[killed].awaitServing(120);
                }
                int n = 3000;
                Batch b = index.newBatch(n);
                long[] keys = new long[n];
                byte[][] values = new byte[n][];
                for (int i = 0; i < n; i++) {
                    keys[i] = nextKey++;
                    values[i] = value(r);
                    b.put(keys[i], values[i]);
                }
                BatchResult result = new BatchResult(VALUE, n);
                boolean failed = false;
                // Round 20: the node is killed (SIGKILL) while the batch is in flight.
                Thread killer = killDuring ? Thread.ofPlatform().start(() -> {
                    try {
                        Thread.sleep(3);
                        NODES[killed].kill();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }) : null;
                try {
                    index.execute(b, result);
                } catch (ShardsUnavailableException e) {
                    failed = true;
                    sawFailure = true;
                    assertEquals(List.of(killed), e.shards(), "round " + round + ": " + e.getMessage());
                    assertTrue(e.getMessage().contains("n" + killed), e.getMessage());
                    assertTrue(round >= 20, "round " + round + " failed before the kill: " + e.getMessage());
                } finally {
                    if (killer != null) {
                        killer.join();
                    }
                }
                for (int i = 0; i < n; i++) {
                    Outcome o = result.outcome(i);
                    if (shardOf(keys[i]) != killed || !failed) {
                        assertEquals(Outcome.INSERTED, o, "round " + round + " key " + keys[i] + " (shard " + shardOf(keys[i]) + ")");
                    }
                    if (o == Outcome.INSERTED) {
                        acknowledged.put(keys[i], values[i]);
                    } else {
                        assertEquals(Outcome.NOT_APPLIED, o);
                        unacknowledged.add(keys[i]);
                    }
                }
                if (round >= 45) {
                    assertTrue(!failed, "round " + round + ": the restarted node serves again");
                }
            }
        }
        assertTrue(sawFailure, "batches after the kill failed on the killed node's shard");
        // A new client (as after a restart of the application): every acknowledged write is there.
        try (GPHashIndex index = client()) {
            Batch check = index.newBatch(acknowledged.size());
            List<Long> keys = new ArrayList<>(acknowledged.keySet());
            keys.forEach(check::get);
            BatchResult got = index.execute(check);
            int onKilled = 0;
            for (int i = 0; i < keys.size(); i++) {
                assertEquals(Outcome.FOUND, got.outcome(i), "acknowledged key " + keys.get(i));
                assertArrayEquals(acknowledged.get(keys.get(i)), got.value(i));
                onKilled += shardOf(keys.get(i)) == killed ? 1 : 0;
            }
            assertNotEquals(0, onKilled, "the killed node held acknowledged writes");
            long size = index.stats().size();
            assertTrue(size >= acknowledged.size() && size <= acknowledged.size() + unacknowledged.size(),
                    size + " items: every acknowledged write, and no more than the unacknowledged ones besides");
            assertNotNull(index.lastRecovery());
        } catch (ShardsUnavailableException e) {
            fail("after the restart every shard serves: " + e.getMessage());
        }
    }
}
