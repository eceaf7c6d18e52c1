package org.gphash.shard;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.OpKind;
import org.gphash.Outcome;

/**
 * A batch split by shard, and the shards' results merged back: the scratch one call of
 * {@link ShardedEngine#execute} uses, kept for the next call (its columns stay allocated, and a GPU
 * shard pins a part it sees again instead of copying it).
 *
 * <p>A parallel partition in three passes over ranges of the batch, each pass safe to run for
 * different ranges on different threads: {@link #assign} computes each operation's shard and counts
 * them per range and shard; {@link #place} (one thread) turns the counts into where each range's
 * operations go in each part; {@link #gather} copies a range's operations into the parts, each in
 * batch order within its part, so each key's operations (which all go to one shard) keep their order.
 * After the parts ran, {@link #scatter} copies a range's outcomes and values back to their positions.
 */
final class BatchPartition {

    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final boolean[] HAS_VALUE = new boolean[OpKind.values().length];
    private static final boolean[] CONDITIONAL = new boolean[OpKind.values().length];

    static {
        for (OpKind k : OpKind.values()) {
            HAS_VALUE[k.ordinal()] = k.hasValue();
            CONDITIONAL[k.ordinal()] = k.isConditional();
        }
    }

    private final ShardFunction function;
    private final int shards;
    private final int valueSize;
    private final Batch[] parts;
    private final BatchResult[] results;
    /** Per operation: its shard, and its position in that shard's part. */
    private byte[] shardOf = new byte[0];
    private int[] slotOf = new int[0];
    /** Per range and shard: how many of the range's operations go to the shard, then where the first goes. */
    private int[][] rangeCounts = new int[0][];
    private final int[] counts;
    private int ranges;
    private int n;
    private boolean withExpected;

    BatchPartition(ShardFunction function, int keySize, int valueSize) {
        this.function = function;
        this.shards = function.shards();
        this.valueSize = valueSize;
        parts = new Batch[shards];
        results = new BatchResult[shards];
        counts = new int[shards];
        for (int s = 0; s < shards; s++) {
            parts[s] = Batch.create(keySize, valueSize, 1);
            results[s] = new BatchResult(valueSize, 1);
        }
    }

    /** Makes room for a batch of {@code n} operations split into {@code ranges} ranges. */
    void prepare(int n, int ranges) {
        this.n = n;
        this.ranges = ranges;
        if (shardOf.length < n) {
            shardOf = new byte[n];  // shard numbers fit a byte: at most 256 shards, read as unsigned
            slotOf = new int[n];
        }
        if (rangeCounts.length < ranges) {
            rangeCounts = new int[ranges][shards];
        }
    }

    /** {@return where range {@code r} starts} */
    private int from(int r) {
        return (int) ((long) n * r / ranges);
    }

    /** Pass 1, range {@code r}: each operation's shard, counted per shard. */
    void assign(Batch batch, int r) {
        MemorySegment keys = batch.keys();
        int keySize = batch.keySize();
        byte[] of = shardOf;
        int[] c = rangeCounts[r];
        java.util.Arrays.fill(c, 0);
        for (int i = from(r), to = from(r + 1); i < to; i++) {
            int s = function.shardOf(keys, (long) i * keySize, keySize);
            of[i] = (byte) s;
            c[s]++;
        }
    }

    /** Pass 2, once: each shard's size, each range's first position in each part, and the parts sized. */
    void place(Batch batch) {
        java.util.Arrays.fill(counts, 0);
        for (int r = 0; r < ranges; r++) {
            int[] c = rangeCounts[r];
            for (int s = 0; s < shards; s++) {
                int k = c[s];
                c[s] = counts[s];  // now where range r's first operation of shard s goes
                counts[s] += k;
            }
        }
        withExpected = batch.hasConditionalOperations();
        for (int s = 0; s < shards; s++) {
            // Both grow with room to spare (a batch by doubling, a result by an eighth), so a shard's
            // part of the next batch, a little larger half the time, stays in the block a GPU pinned.
            parts[s].setSize(counts[s]);
            if (withExpected) {
                parts[s].expectedValues();
            }
            // Every outcome NOT_APPLIED before any part runs: a part that fails, even before its
            // engine starts, leaves exactly what it did not do unapplied for the merge.
            results[s].reset(counts[s]);
        }
    }

    /** {@return how many operations go to {@code shard}} */
    int size(int shard) {
        return counts[shard];
    }

    /** Pass 3, range {@code r}: copies its operations into the parts (kinds, keys, values that carry one, expected values). */
    void gather(Batch batch, int r) {
        int keySize = batch.keySize();
        int valueSize = batch.valueSize();
        MemorySegment kinds = batch.kinds();
        MemorySegment keys = batch.keys();
        MemorySegment values = batch.values();
        MemorySegment expected = withExpected ? batch.expectedValues() : null;
        MemorySegment[] partKinds = new MemorySegment[shards];
        MemorySegment[] partKeys = new MemorySegment[shards];
        MemorySegment[] partValues = new MemorySegment[shards];
        MemorySegment[] partExpected = new MemorySegment[shards];
        for (int s = 0; s < shards; s++) {
            partKinds[s] = parts[s].kinds();
            partKeys[s] = parts[s].keys();
            partValues[s] = parts[s].values();
            partExpected[s] = withExpected ? parts[s].expectedValues() : null;
        }
        int[] next = rangeCounts[r];
        byte[] of = shardOf;
        int[] slots = slotOf;
        for (int i = from(r), to = from(r + 1); i < to; i++) {
            int s = of[i] & 0xFF;
            int j = next[s]++;
            slots[i] = j;
            byte k = kinds.get(ValueLayout.JAVA_BYTE, i);
            partKinds[s].set(ValueLayout.JAVA_BYTE, j, k);
            if (keySize == 8) {
                partKeys[s].set(LONG, (long) j * 8, keys.get(LONG, (long) i * 8));
            } else {
                MemorySegment.copy(keys, (long) i * keySize, partKeys[s], (long) j * keySize, keySize);
            }
            if (HAS_VALUE[k]) {
                MemorySegment.copy(values, (long) i * valueSize, partValues[s], (long) j * valueSize, valueSize);
            }
            if (withExpected && CONDITIONAL[k]) {
                MemorySegment.copy(expected, (long) i * valueSize, partExpected[s], (long) j * valueSize, valueSize);
            }
        }
    }

    /** {@return shard {@code shard}'s part, once every range is gathered (its kinds checked and its conditional operations counted)} */
    Batch part(int shard) {
        return parts[shard].validate();
    }

    /** {@return the result shard {@code shard}'s part runs into (reset to its size by {@link #place})} */
    BatchResult resultOf(int shard) {
        return results[shard];
    }

    /**
     * Pass 4, range {@code r}: copies its operations' outcomes (and the values of those that carry
     * one) from the parts' results to their positions in {@code result}. An operation its shard did
     * not reach stays NOT_APPLIED.
     */
    void scatter(BatchResult result, int r) {
        MemorySegment[] codes = new MemorySegment[shards];
        MemorySegment[] values = new MemorySegment[shards];
        for (int s = 0; s < shards; s++) {
            codes[s] = results[s].outcomeCodes();
            values[s] = results[s].values();
        }
        MemorySegment toCodes = result.outcomeCodes();
        MemorySegment toValues = result.values();
        byte found = Outcome.FOUND.code();
        byte replaced = Outcome.REPLACED.code();
        byte[] of = shardOf;
        int[] slots = slotOf;
        for (int i = from(r), to = from(r + 1); i < to; i++) {
            int s = of[i] & 0xFF;
            int j = slots[i];
            byte code = codes[s].get(ValueLayout.JAVA_BYTE, j);
            toCodes.set(ValueLayout.JAVA_BYTE, i, code);
            if (code == found || code == replaced) {
                MemorySegment.copy(values[s], (long) j * valueSize, toValues, (long) i * valueSize, valueSize);
            }
        }
    }
}
