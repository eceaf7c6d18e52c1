package org.gphash.shard;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.Outcome;

/**
 * A batch split by shard, and the shards' results merged back: the scratch one call of
 * {@link ShardedEngine#execute} uses, kept for the next call (its columns stay allocated, and a GPU
 * shard pins a batch it sees again instead of copying it).
 *
 * <p>The split keeps each shard's operations in batch order, so the operations on one key (which
 * all go to one shard) keep theirs. Steps, each safe to run for different ranges or shards on
 * different threads: {@link #assign} a range of positions to shards, {@link #count}, then per shard
 * {@link #gather}, run, {@link #scatter}.
 */
final class BatchPartition {

    private final ShardFunction function;
    private final Batch[] parts;
    private final BatchResult[] results;
    private final int[][] positions;
    private final int[] counts;
    private byte[] shardOf = new byte[0];

    BatchPartition(ShardFunction function, int keySize, int valueSize) {
        this.function = function;
        int n = function.shards();
        parts = new Batch[n];
        results = new BatchResult[n];
        positions = new int[n][];
        counts = new int[n];
        for (int s = 0; s < n; s++) {
            parts[s] = Batch.create(keySize, valueSize, 1);
            results[s] = new BatchResult(valueSize, 1);
            positions[s] = new int[0];
        }
    }

    /** Makes room for a batch of {@code n} operations. */
    void prepare(int n) {
        if (shardOf.length < n) {
            shardOf = new byte[n];  // shard numbers fit a byte: at most 256 shards, read as unsigned
        }
    }

    /** Computes the shard of operations {@code from} to {@code to - 1} of {@code batch}. */
    void assign(Batch batch, int from, int to) {
        MemorySegment keys = batch.keys();
        int keySize = batch.keySize();
        byte[] of = shardOf;
        for (int i = from; i < to; i++) {
            of[i] = (byte) function.shardOf(keys, (long) i * keySize, keySize);
        }
    }

    /** Counts each shard's operations among the first {@code n} (after every range is assigned). */
    void count(int n) {
        java.util.Arrays.fill(counts, 0);
        byte[] of = shardOf;
        for (int i = 0; i < n; i++) {
            counts[of[i] & 0xFF]++;
        }
    }

    /** {@return how many operations go to {@code shard}} */
    int size(int shard) {
        return counts[shard];
    }

    /** {@return shard {@code shard}'s part, filled with its operations of {@code batch} in batch order} */
    Batch gather(int shard, Batch batch) {
        int c = counts[shard];
        int[] at = positions[shard];
        if (at.length < c) {
            at = new int[Math.max(c, at.length + (at.length >> 1))];
            positions[shard] = at;
        }
        byte[] of = shardOf;
        byte s = (byte) shard;
        int k = 0;
        for (int i = 0, n = batch.size(); k < c && i < n; i++) {
            if (of[i] == s) {
                at[k++] = i;
            }
        }
        return parts[shard].gather(batch, at, c);
    }

    /** {@return the result shard {@code shard}'s part runs into, reset to its size} */
    BatchResult resultOf(int shard) {
        BatchResult r = results[shard];
        r.reset(counts[shard]);
        return r;
    }

    /**
     * Copies shard {@code shard}'s outcomes (and the values of those that carry one) to their
     * positions in {@code result}. Outcomes the shard did not reach stay NOT_APPLIED.
     */
    void scatter(int shard, BatchResult result, int valueSize) {
        int c = counts[shard];
        int[] at = positions[shard];
        BatchResult r = results[shard];
        MemorySegment codes = r.outcomeCodes();
        MemorySegment values = r.values();
        MemorySegment toCodes = result.outcomeCodes();
        MemorySegment toValues = result.values();
        byte found = Outcome.FOUND.code();
        byte replaced = Outcome.REPLACED.code();
        for (int j = 0; j < c; j++) {
            byte code = codes.get(ValueLayout.JAVA_BYTE, j);
            int i = at[j];
            toCodes.set(ValueLayout.JAVA_BYTE, i, code);
            if (code == found || code == replaced) {
                MemorySegment.copy(values, (long) j * valueSize, toValues, (long) i * valueSize, valueSize);
            }
        }
    }
}
