package org.gphash.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.Cursor;
import org.gphash.GPHashIndex;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.junit.jupiter.api.Test;

/**
 * The cluster client's split and merge against a plain map: batches of every kind (conditional ones
 * included) and single calls over three in-process nodes, some batches with a node down, every
 * outcome and value checked, and at the end a cursor over the cluster and the figures' size. The
 * messages pass through Hazelcast's serialization ({@link InProcessCluster}); the real cluster, three
 * node processes, is {@link ClusterProcessesTest}.
 */
class ClusterEngineProperties {

    private static final int VALUE = 16;
    private static final int SHARDS = 3;

    /** One operation: its kind, key, value seed, and whether a conditional one expects the current value. */
    record Op(OpKind kind, long key, long seed, boolean expectCurrent) {
    }

    /** A batch (with one node down while it runs, or none: -1), or a single call (a batch of one, single = true). */
    record Action(List<Op> ops, boolean single, int down) {
    }

    /** Operations per message: small, so that parts travel as several messages of disjoint keys, or the default. */
    @Provide
    Arbitrary<Integer> messageOps() {
        return Arbitraries.of(1, 7, 40, MessageSplit.MESSAGE_OPS);
    }

    @Provide
    Arbitrary<List<Action>> actions() {
        Arbitrary<Op> op = Combinators.combine(Arbitraries.of(OpKind.values()), Arbitraries.longs().between(0, 150),
                Arbitraries.longs(), Arbitraries.of(true, true, false)).as(Op::new);
        Arbitrary<Action> batch = Combinators.combine(op.list().ofMinSize(0).ofMaxSize(300),
                Arbitraries.frequency(Tuple.of(12, -1), Tuple.of(2, 0), Tuple.of(2, 1), Tuple.of(2, 2)))
                .as((ops, down) -> new Action(ops, false, down));
        Arbitrary<Action> single = op.filter(o -> o.kind() != OpKind.READ_MODIFY_WRITE)
                .map(o -> new Action(List.of(o), true, -1));
        return Arbitraries.frequencyOf(
                Tuple.of(3, batch), Tuple.of(2, single)).list().ofMinSize(1).ofMaxSize(25);
    }

    @Property(tries = 25)
    void batchesAndSingleCallsMatchAPlainMap(@ForAll("actions") List<Action> actions,
                                             @ForAll("messageOps") int messageOps) {
        try (InProcessCluster cluster = new InProcessCluster(SHARDS, VALUE); GPHashIndex index = cluster.client(messageOps)) {
            PlainModel model = new PlainModel();
            int step = 0;
            for (Action a : actions) {
                String where = "action " + step++;
                if (a.single()) {
                    single(index, model, a.ops().get(0), where);
                } else {
                    batch(cluster, index, model, a, where);
                }
            }
            Map<Long, byte[]> seen = new HashMap<>();
            Cursor c = index.cursor();
            while (c.next()) {
                if (seen.put(c.longKey(), c.value()) != null) {
                    fail("the cursor returned key " + c.longKey() + " twice");
                }
            }
            assertEquals(model.map.keySet(), seen.keySet(), "the cursor's keys");
            model.map.forEach((k, v) -> assertArrayEquals(v, seen.get(k), "the cursor's value of " + k));
            assertEquals(model.map.size(), index.stats().size(), "the figures' size");
            assertEquals(SHARDS, index.shardStats().size());
        }
    }

    private static byte[] value(long seed) {
        byte[] v = new byte[VALUE];
        new Random(seed).nextBytes(v);
        return v;
    }

    private static byte[] expected(PlainModel model, Op op) {
        byte[] current = model.get(op.key());
        return op.expectCurrent() && current != null ? current.clone() : value(op.seed() ^ 0x5555);
    }

    private static int shardOf(InProcessCluster cluster, long key) {
        byte[] k = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(key).array();
        return cluster.manifest.function().shardOf(MemorySegment.ofArray(k), 0, 8);
    }

    private static void batch(InProcessCluster cluster, GPHashIndex index, PlainModel model, Action a, String where) {
        Batch b = index.newBatch(a.ops().size());
        List<byte[]> expectedValues = new ArrayList<>();
        for (Op op : a.ops()) {
            byte[] v = value(op.seed());
            byte[] e = expected(model, op);
            expectedValues.add(e);
            switch (op.kind()) {
                case COMPARE_AND_SET -> b.compareAndSet(op.key(), e, v);
                case COMPARE_AND_DELETE -> b.compareAndDelete(op.key(), e);
                case READ_MODIFY_WRITE -> b.readModifyWrite(op.key(), v);
                case GET -> b.get(op.key());
                case DELETE -> b.delete(op.key());
                case PUT -> b.put(op.key(), v);
                case INSERT -> b.insert(op.key(), v);
                case UPDATE -> b.update(op.key(), v);
            }
        }
        BatchResult result = new BatchResult(VALUE, Math.max(1, a.ops().size()));
        boolean touchesDown = false;
        if (a.down() >= 0) {
            cluster.down.add(a.down());
        }
        try {
            index.execute(b, result);
        } catch (ShardsUnavailableException e) {
            assertEquals(List.of(a.down()), e.shards(), where + ": " + e.getMessage());
            assertTrue(e.getMessage().contains("node n" + a.down()), e.getMessage());
            touchesDown = true;
        } finally {
            cluster.down.clear();
        }
        assertEquals(a.ops().size(), result.size(), where);
        boolean shouldTouch = false;
        for (int i = 0; i < a.ops().size(); i++) {
            Op op = a.ops().get(i);
            String what = where + " op " + i + " " + op;
            if (shardOf(cluster, op.key()) == a.down()) {
                shouldTouch = true;
                assertEquals(Outcome.NOT_APPLIED, result.outcome(i), what + " (its node was down)");
                continue;
            }
            byte[] old = model.get(op.key());
            Outcome expected = model.apply(op.kind(), op.key(), value(op.seed()), expectedValues.get(i));
            assertEquals(expected, result.outcome(i), what);
            if (expected == Outcome.FOUND || expected == Outcome.REPLACED) {
                assertArrayEquals(old, result.value(i), what + ": the value");
            }
        }
        assertEquals(shouldTouch, touchesDown, where + ": an exception exactly when a part's node was down");
    }

    private static void single(GPHashIndex index, PlainModel model, Op op, String where) {
        byte[] v = value(op.seed());
        byte[] e = expected(model, op);
        byte[] old = model.get(op.key());
        Outcome expected = model.apply(op.kind(), op.key(), v, e);
        String what = where + " " + op;
        switch (op.kind()) {
            case GET -> {
                byte[] got = index.get(op.key());
                if (old == null) {
                    assertNull(got, what);
                } else {
                    assertNotNull(got, what);
                    assertArrayEquals(old, got, what);
                }
            }
            case PUT -> assertEquals(expected == Outcome.INSERTED, index.put(op.key(), v), what);
            case INSERT -> assertEquals(expected == Outcome.INSERTED, index.insert(op.key(), v), what);
            case UPDATE -> assertEquals(expected == Outcome.UPDATED, index.update(op.key(), v), what);
            case DELETE -> assertEquals(expected == Outcome.DELETED, index.delete(op.key()), what);
            case COMPARE_AND_SET -> assertEquals(expected == Outcome.UPDATED, index.compareAndSet(op.key(), e, v), what);
            case COMPARE_AND_DELETE -> assertEquals(expected == Outcome.DELETED, index.compareAndDelete(op.key(), e), what);
            case READ_MODIFY_WRITE -> throw new AssertionError("no single call");
        }
    }

    /**
     * A batch large enough that the split runs in several ranges on several threads ({@code
     * MessageSplit.RANGE_MIN}), each key in it hundreds of times across the ranges, into many messages:
     * every key's operations still run in batch order.
     */
    @Test
    void aLargeBatchSplitInRangesKeepsEachKeysOrder() {
        try (InProcessCluster cluster = new InProcessCluster(SHARDS, VALUE); GPHashIndex index = cluster.client(1000)) {
            PlainModel model = new PlainModel();
            Random r = new Random(56);
            OpKind[] kinds = OpKind.values();
            for (int round = 0; round < 3; round++) {
                int n = 2 * MessageSplit.RANGE_MIN + r.nextInt(1000);
                List<Op> ops = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    ops.add(new Op(kinds[r.nextInt(kinds.length)], r.nextInt(1000), r.nextLong(), r.nextBoolean()));
                }
                batch(cluster, index, model, new Action(ops, false, -1), "large batch " + round);
            }
            assertEquals(model.map.size(), index.stats().size());
        }
    }

    @Test
    void aSingleCallToADownShardNamesItAndChangesNothing() {
        try (InProcessCluster cluster = new InProcessCluster(SHARDS, VALUE); GPHashIndex index = cluster.client(MessageSplit.MESSAGE_OPS)) {
            long key = 7;
            int shard = shardOf(cluster, key);
            cluster.down.add(shard);
            ShardsUnavailableException e = assertThrows(ShardsUnavailableException.class, () -> index.put(key, value(1)));
            assertEquals(List.of(shard), e.shards());
            assertTrue(e.getMessage().contains("node n" + shard), e.getMessage());
            cluster.down.clear();
            assertNull(index.get(key));
        }
    }

    /**
     * A node whose pool fills stops its part there: the batch names its shard and what stopped it,
     * the outcomes say exactly which operations ran (as the node's index holds them), the other
     * shard's part ran whole, and every write reported is there to read.
     */
    @Test
    void aNodeWhosePoolFillsReportsWhatRanAndLosesNothing() {
        try (InProcessCluster cluster = new InProcessCluster(2, VALUE, b -> b.initialCapacity(16).maxPoolBytes(1L << 20));
             GPHashIndex index = cluster.client(MessageSplit.MESSAGE_OPS)) {
            int n = 200_000;
            Batch batch = index.newBatch(n);
            for (long k = 0; k < n; k++) {
                batch.insert(k, value(k));
            }
            BatchResult result = new BatchResult(VALUE, n);
            ShardsUnavailableException e = assertThrows(ShardsUnavailableException.class, () -> index.execute(batch, result));
            assertTrue(e.getMessage().contains("PoolFullException"), e.getMessage());
            assertTrue(e.shards().size() >= 1, e.getMessage());
            int inserted = 0;
            for (int i = 0; i < n; i++) {
                Outcome o = result.outcome(i);
                if (!e.shards().contains(shardOf(cluster, i))) {
                    assertEquals(Outcome.INSERTED, o, "operation " + i + " of a shard that did not fill");
                }
                assertTrue(o == Outcome.INSERTED || o == Outcome.NOT_APPLIED, "operation " + i + ": " + o);
                inserted += o == Outcome.INSERTED ? 1 : 0;
            }
            assertEquals(inserted, index.stats().size(), "the outcomes say exactly what the nodes hold");
            for (int i = 0; i < n; i++) {
                if (result.outcome(i) == Outcome.INSERTED) {
                    assertArrayEquals(value(i), index.get((long) i), "key " + i);
                }
            }
        }
    }

    /** A malformed message (lengths that do not match its operations) is refused by the node before it runs anything. */
    @Test
    void aMalformedPartIsRefusedAndChangesNothing() {
        try (InProcessCluster cluster = new InProcessCluster(1, VALUE)) {
            NodeService node = cluster.nodes[0];
            PartCall shortValues = new PartCall(cluster.manifest.id(), 0, 2, 16, VALUE, 0);
            shortValues.kinds[0] = (byte) OpKind.PUT.ordinal();
            shortValues.kinds[1] = (byte) OpKind.PUT.ordinal();
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> node.serve(shortValues));
            assertTrue(e.getMessage().contains("ends in its values"), e.getMessage());
            PartCall badKind = new PartCall(cluster.manifest.id(), 0, 1, 8, 0, 0);
            badKind.kinds[0] = 42;
            assertTrue(assertThrows(IllegalArgumentException.class, () -> node.serve(badKind)).getMessage()
                    .contains("not an OpKind ordinal"));
            PartCall wrongKeys = new PartCall(cluster.manifest.id(), 0, 1, 7, 0, 0);
            assertTrue(assertThrows(IllegalArgumentException.class, () -> node.serve(wrongKeys)).getMessage()
                    .contains("bytes of keys"));
            assertEquals(0, node.index().size(), "nothing was applied");
        }
    }

    @Test
    void aCallForAnotherClusterOrShardIsRefusedByTheNode() {
        try (InProcessCluster cluster = new InProcessCluster(2, VALUE)) {
            NodeService n = cluster.nodes[0];
            assertThrows(ClusterRefusedException.class, () -> n.checkCall(cluster.manifest.id() + 1, 0));
            ClusterRefusedException other = assertThrows(ClusterRefusedException.class,
                    () -> n.checkCall(cluster.manifest.id(), 1));
            assertTrue(other.getMessage().contains("serves shard 0, not shard 1"), other.getMessage());
        }
    }
}
