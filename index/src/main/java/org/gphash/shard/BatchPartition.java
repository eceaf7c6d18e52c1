package org.gphash.shard;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.OpKind;
import org.gphash.Outcome;

/**
 * A batch split by shard: the scratch one call of {@link ShardedEngine#execute} uses, kept for the
 * next call (its memory stays allocated).
 *
 * <p>The split lists, per shard, the positions of the shard's operations in the batch, in batch
 * order, so each key's operations (which all go to one shard) keep their order. A shard runs its part
 * where it lies, from those positions ({@code Engine.executeInPlace}: a GPU shard gathers and
 * scatters on the GPU), or, where its engine does not, the part is copied out into a batch of its own
 * ({@link #copyOut}) and its results back to their positions ({@link #copyBack}).
 *
 * <p>The listing is a parallel partition in three passes over ranges of the batch, each pass safe to
 * run for different ranges on different threads: {@link #assign} computes each operation's shard and
 * counts them per range and shard; {@link #place} (one thread) turns the counts into where each
 * range's operations go in each shard's list; {@link #list} writes a range's positions. The copies
 * of one shard's part run on that shard's thread.
 */
final class BatchPartition {

    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;
    // Unaligned: no alignment check per access (the lists are 4-byte aligned all the same).
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;
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
    private final int keySize;
    private final int valueSize;
    /** Whether the shards' values have any length: parts and results then keep each one's. */
    private final boolean valueLengths;
    /** Per shard: the positions of its operations in the batch (4-byte ints), and its part when copied out. */
    private final MemorySegment[] positions;
    private final Batch[] parts;
    private final BatchResult[] results;
    /** Per operation: its shard. */
    private byte[] shardOf = new byte[0];
    /** Per range and shard: how many of the range's operations go to the shard, then where the first goes. */
    private int[][] rangeCounts = new int[0][];
    private final int[] counts;
    private int ranges;
    private int n;

    BatchPartition(ShardFunction function, int keySize, int valueSize, boolean valueLengths) {
        this.function = function;
        this.shards = function.shards();
        this.keySize = keySize;
        this.valueSize = valueSize;
        this.valueLengths = valueLengths;
        positions = new MemorySegment[shards];
        parts = new Batch[shards];
        results = new BatchResult[shards];
        counts = new int[shards];
        for (int s = 0; s < shards; s++) {
            positions[s] = MemorySegment.NULL;
        }
    }

    /** Makes room for a batch of {@code n} operations split into {@code ranges} ranges. */
    void prepare(int n, int ranges) {
        this.n = n;
        this.ranges = ranges;
        if (shardOf.length < n) {
            shardOf = new byte[n];  // shard numbers fit a byte: at most 256 shards, read as unsigned
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
        int ks = batch.keySize();
        byte[] of = shardOf;
        // Counted in an array of this call's own, stored once: the ranges' rows of rangeCounts lie side
        // by side in memory, and ranges on different cores would write neighbouring cache lines for
        // every operation.
        int[] c = new int[shards];
        for (int i = from(r), to = from(r + 1); i < to; i++) {
            int s = function.shardOf(keys, (long) i * ks, ks);
            of[i] = (byte) s;
            c[s]++;
        }
        System.arraycopy(c, 0, rangeCounts[r], 0, shards);
    }

    /** Pass 2, once: each shard's size, each range's first place in each shard's list, and the lists sized. */
    void place() {
        Arrays.fill(counts, 0);
        for (int r = 0; r < ranges; r++) {
            int[] c = rangeCounts[r];
            for (int s = 0; s < shards; s++) {
                int k = c[s];
                c[s] = counts[s];  // now where range r's first operation of shard s goes
                counts[s] += k;
            }
        }
        for (int s = 0; s < shards; s++) {
            long bytes = 4L * counts[s];
            if (positions[s].byteSize() < bytes) {
                // With room to spare: a shard's share of the next batch is a little larger half the time.
                positions[s] = Arena.ofAuto().allocate(bytes + bytes / 8, 4);
            }
        }
    }

    /** Pass 3, range {@code r}: the positions of its operations, into their shards' lists. */
    void list(int r) {
        int[] next = rangeCounts[r].clone();  // this call's own, as in assign
        byte[] of = shardOf;
        MemorySegment[] lists = positions;
        for (int i = from(r), to = from(r + 1); i < to; i++) {
            int s = of[i] & 0xFF;
            lists[s].setAtIndex(INT, next[s]++, i);
        }
    }

    /** {@return how many operations go to {@code shard}} */
    int size(int shard) {
        return counts[shard];
    }

    /** {@return the positions of {@code shard}'s operations in the batch, 4-byte ints, {@link #size} of them} */
    MemorySegment positions(int shard) {
        return positions[shard];
    }

    /**
     * Copies {@code shard}'s operations (kinds, keys, the values and expected values they carry) out
     * of {@code batch} into a batch of their own, and returns it, checked, with the result it runs
     * into ({@link #resultOf}) reset to its size: every outcome NOT_APPLIED before it runs, so a part
     * that fails, even before its engine starts, leaves exactly what it did not do unapplied.
     */
    Batch copyOut(Batch batch, int shard) {
        int m = counts[shard];
        boolean packed = batch.valuesPacked();  // a part, and its result, lie as the batch does
        if (parts[shard] == null || parts[shard].valuesPacked() != packed) {
            parts[shard] = Batch.create(keySize, valueSize, Math.max(1, m), packed);
            results[shard] = BatchResult.create(valueSize, Math.max(1, m), packed);
        }
        Batch part = parts[shard];
        results[shard].reset(m);
        if (packed) {
            return copyOutPacked(batch, part, shard, m);
        }
        // Both grow with room to spare (a batch by doubling, a result by an eighth), so a shard's
        // part of the next batch, a little larger half the time, stays in the block an engine pinned.
        // Emptied first: a part reused keeps no length of a batch before.
        part.setSize(0);
        part.setSize(m);
        boolean withExpected = batch.hasConditionalOperations();
        if (withExpected) {
            part.expectedValues();
        }
        MemorySegment kinds = batch.kinds();
        MemorySegment keys = batch.keys();
        MemorySegment values = batch.values();
        MemorySegment expected = withExpected ? batch.expectedValues() : null;
        MemorySegment partKinds = part.kinds();
        MemorySegment partKeys = part.keys();
        MemorySegment partValues = part.values();
        MemorySegment partExpected = withExpected ? part.expectedValues() : null;
        MemorySegment list = positions[shard];
        for (int j = 0; j < m; j++) {
            int i = list.getAtIndex(INT, j);
            byte k = kinds.get(ValueLayout.JAVA_BYTE, i);
            partKinds.set(ValueLayout.JAVA_BYTE, j, k);
            if (keySize == 8) {
                partKeys.set(LONG, (long) j * 8, keys.get(LONG, (long) i * 8));
            } else {
                MemorySegment.copy(keys, (long) i * keySize, partKeys, (long) j * keySize, keySize);
            }
            if (HAS_VALUE[k]) {
                MemorySegment.copy(values, (long) i * valueSize, partValues, (long) j * valueSize, valueSize);
            }
            if (withExpected && CONDITIONAL[k]) {
                MemorySegment.copy(expected, (long) i * valueSize, partExpected, (long) j * valueSize, valueSize);
            }
        }
        return part.validate();
    }

    /**
     * {@link #copyOut} for a batch whose values lie packed, each at its length: each operation
     * appended with its values, one at a time.
     */
    private Batch copyOutPacked(Batch batch, Batch part, int shard, int m) {
        part.clear();
        MemorySegment list = positions[shard];
        for (int j = 0; j < m; j++) {
            int i = list.getAtIndex(INT, j);
            part.addRange(batch, i, i + 1);
        }
        return part;
    }

    /** {@return the result a part copied out runs into} */
    BatchResult resultOf(int shard) {
        return results[shard];
    }

    /**
     * Copies a part's outcomes (and the values of those that carry one) from its result back to
     * their positions in {@code result}; an operation its shard did not reach stays NOT_APPLIED.
     * Shards copy back at once: values with lengths of their own (packed after one another, or with a
     * length column made at the first shorter one) are copied back one shard at a time.
     */
    void copyBack(BatchResult result, int shard) {
        BatchResult from = results[shard];
        if (valueLengths || from.valuesPacked()) {
            synchronized (result) {
                copyBack(result, shard, true);
            }
        } else {
            copyBack(result, shard, false);
        }
    }

    private void copyBack(BatchResult result, int shard, boolean lengths) {
        BatchResult from = results[shard];
        MemorySegment codes = from.outcomeCodes();
        MemorySegment values = from.valueBlock();
        MemorySegment toCodes = result.outcomeCodes();
        MemorySegment toValues = result.valueBlock();
        byte found = Outcome.FOUND.code();
        byte replaced = Outcome.REPLACED.code();
        MemorySegment list = positions[shard];
        for (int j = 0, m = counts[shard]; j < m; j++) {
            int i = list.getAtIndex(INT, j);
            byte code = codes.get(ValueLayout.JAVA_BYTE, j);
            toCodes.set(ValueLayout.JAVA_BYTE, i, code);
            if (code == found || code == replaced) {
                if (lengths) {
                    result.putValue(i, values, from.valueOffset(j), from.valueLength(j));
                } else {
                    MemorySegment.copy(values, (long) j * valueSize, toValues, (long) i * valueSize, valueSize);
                }
            }
        }
    }
}
