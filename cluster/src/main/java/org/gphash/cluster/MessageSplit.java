package org.gphash.cluster;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.Executor;

import org.gphash.Batch;
import org.gphash.shard.ShardFunction;
import org.gphash.shard.ShardTasks;

/**
 * A batch split into the messages that carry it to the nodes: per message, its node's shard, the
 * positions of its operations in the batch, and the message with its columns packed (the client's
 * part of {@link ClusterEngine#execute}).
 *
 * @param shardOf   per message, the shard whose node it goes to
 * @param positions per message, its operations' positions in the batch, in batch order (null: none)
 * @param parts     per message, the message (null: none)
 */
record MessageSplit(int[] shardOf, int[][] positions, PartCall[] parts) {

    private static final boolean[] HAS_VALUE = OpKindTables.HAS_VALUE;
    private static final boolean[] CONDITIONAL = OpKindTables.CONDITIONAL;

    /**
     * The most operations of one message by default: a shard's part larger than this travels as several
     * messages at once, each with the keys of some hash range of the shard (so no key is in two of
     * them, and each key's operations stay in order in one), which its node runs at once. Bounded
     * messages keep Hazelcast's buffers reusable, and the transfer of one overlaps the run of another.
     */
    static final int MESSAGE_OPS = 1 << 16;
    /** An odd constant: a key's hash times it puts the hash's low bits on top, independent of the shard's. */
    private static final long SUB_MIX = 0x9E3779B97F4A7C15L;

    /** {@return messages per shard for a batch of {@code n} operations: the same for every shard (the hash spreads keys evenly)} */
    static int messagesPerShard(long n, int shards, int messageOps) {
        return (int) Math.max(1, (n + (long) shards * messageOps - 1) / ((long) shards * messageOps));
    }

    /**
     * Operations a range of the split covers at least ... A batch below twice this is split on the
     * caller's thread alone: at 2^16 operations the split in ranges measured many times slower than
     * on one thread on many-core hosts (the cause is not found yet; docs/lab/2026-11-29-cluster.md).
     */
    static final int RANGE_MIN = 1 << 17;
    /** ... and the most ranges a split runs at once. */
    static final int MAX_RANGES = 8;

    /**
     * Each operation's message (its shard's, and within a shard, a hash range's when the part is
     * split into several: {@link #MESSAGE_OPS}), then each message's columns packed and its
     * operations' positions. Two passes over ranges of the batch, each range on its own thread (the
     * first on the caller's): the first finds each operation's message and counts per range and
     * message; then each range's place in each message follows, and the second pass fills the
     * messages. A message holds its operations in batch order (range by range, in order in each).
     */
    static MessageSplit of(Batch batch, ShardFunction function, int messageOps, long clusterId, Executor workers) {
        int n = batch.size();
        int ks = batch.keySize();
        int vs = batch.valueSize();
        int shards = function.shards();
        int perShard = messagesPerShard(n, shards, messageOps);
        int messages = shards * perShard;
        int ranges = (int) Math.max(1, Math.min(MAX_RANGES, n / RANGE_MIN));
        int[] messageOf = new int[n];
        int[][] counts = new int[ranges][];
        long[][] valueBytes = new long[ranges][];
        long[][] expectedBytes = new long[ranges][];
        // Each range counts in arrays of its own and stores them once: the ranges' rows, allocated one
        // after another, share cache lines, and counting in place from several cores made a split
        // many times slower (docs/lab/2026-11-29-cluster.md).
        ShardTasks.inRanges(ranges, workers, r -> {
            MemorySegment kinds = batch.kinds();
            MemorySegment keys = batch.keys();
            int[] c = new int[messages];
            long[] v = new long[messages];
            long[] e = new long[messages];
            for (int i = from(n, ranges, r), to = from(n, ranges, r + 1); i < to; i++) {
                long h = function.hashOf(keys, (long) i * ks, ks);
                int m = function.shardOfHash(h) * perShard
                        + (perShard == 1 ? 0 : (int) Math.unsignedMultiplyHigh(h * SUB_MIX, perShard));
                messageOf[i] = m;
                c[m]++;
                int k = kinds.get(ValueLayout.JAVA_BYTE, i);
                if (HAS_VALUE[k]) {
                    v[m] += vs;
                }
                if (CONDITIONAL[k]) {
                    e[m] += vs;
                }
            }
            counts[r] = c;
            valueBytes[r] = v;
            expectedBytes[r] = e;
        });
        int[] shardOf = new int[messages];
        int[][] positions = new int[messages][];
        PartCall[] parts = new PartCall[messages];
        for (int m = 0; m < messages; m++) {
            shardOf[m] = m / perShard;
            int count = 0;
            long values = 0;
            long expected = 0;
            // Each range's counts become where its first operation (and value bytes) go in message m.
            for (int r = 0; r < ranges; r++) {
                int c = counts[r][m];
                counts[r][m] = count;
                count += c;
                long v = valueBytes[r][m];
                valueBytes[r][m] = values;
                values += v;
                long e = expectedBytes[r][m];
                expectedBytes[r][m] = expected;
                expected += e;
            }
            if (count > 0) {
                positions[m] = new int[count];
                parts[m] = new PartCall(clusterId, shardOf[m], count, Math.multiplyExact(count, ks), Math.toIntExact(values),
                        Math.toIntExact(expected));
            }
        }
        boolean conditional = batch.hasConditionalOperations();
        ShardTasks.inRanges(ranges, workers, r -> {
            MemorySegment kinds = batch.kinds();
            MemorySegment keys = batch.keys();
            MemorySegment values = batch.values();
            MemorySegment expected = conditional ? batch.expectedValues() : null;
            int[] next = counts[r].clone();  // this range's own, as in the first pass
            long[] valueAt = valueBytes[r].clone();
            long[] expectedAt = expectedBytes[r].clone();
            for (int i = from(n, ranges, r), to = from(n, ranges, r + 1); i < to; i++) {
                int m = messageOf[i];
                int j = next[m]++;
                PartCall part = parts[m];
                positions[m][j] = i;
                byte k = kinds.get(ValueLayout.JAVA_BYTE, i);
                part.kinds[j] = k;
                MemorySegment.copy(keys, ValueLayout.JAVA_BYTE, (long) i * ks, part.keys, j * ks, ks);
                if (HAS_VALUE[k]) {
                    MemorySegment.copy(values, ValueLayout.JAVA_BYTE, (long) i * vs, part.values, (int) valueAt[m], vs);
                    valueAt[m] += vs;
                }
                if (CONDITIONAL[k]) {
                    MemorySegment.copy(expected, ValueLayout.JAVA_BYTE, (long) i * vs, part.expected, (int) expectedAt[m], vs);
                    expectedAt[m] += vs;
                }
            }
        });
        return new MessageSplit(shardOf, positions, parts);
    }

    /** {@return where range {@code r} of {@code ranges} over {@code n} operations starts} */
    private static int from(int n, int ranges, int r) {
        return (int) ((long) n * r / ranges);
    }
}
