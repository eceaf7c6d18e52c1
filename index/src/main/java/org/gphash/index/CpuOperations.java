package org.gphash.index;

import java.lang.foreign.MemorySegment;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.OpKind;
import org.gphash.table.OpStatus;
import org.gphash.table.PoolTable;
import org.gphash.table.Probe;
import org.gphash.table.TableLayout;

/**
 * The CPU engine's single-key operations, run by host threads on a pool another engine owns (the
 * GPU engine, between its own batches): the same code, slot protocol and persists as the CPU
 * engine's, lock-free among host threads. What only the owner may do, it leaves to the owner: an
 * operation that would resize the table or grow the heap changes nothing and answers
 * {@link #NEEDS_OWNER}. The owner keeps its copies of the table coherent by the buckets each write
 * names ({@link #markTouched}), and takes back the blocks retired meanwhile ({@link
 * PoolTable#reclaimRetired}) before it keeps the heap's free space elsewhere again.
 */
public final class CpuOperations {

    /** An operation's answer when it needs a resize or heap growth: it did nothing; run it on the owner. */
    public static final int NEEDS_OWNER = -1;

    private final CpuTable table;
    private final ThreadLocal<PhasedBatch> phased;
    private final int valueSize;

    private CpuOperations(PoolTable pool) {
        this.table = new CpuTable(pool.reader(), false);
        this.valueSize = pool.geometry().valueSize();
        this.phased = ThreadLocal.withInitial(() -> new PhasedBatch(table));
    }

    /** The CPU engine's operations on {@code pool}, which must already be open (by its owner). */
    public static CpuOperations on(PoolTable pool) {
        return new CpuOperations(pool);
    }

    /**
     * Runs one write of {@code kind} (not a get).
     *
     * @param value    the new value, for the kinds that write one (else ignored)
     * @param expected the value compared, for the conditional kinds (else ignored); for
     *                 {@link OpKind#READ_MODIFY_WRITE}, where the previous value goes
     * @return the outcome's code ({@link org.gphash.Outcome#ofCode}), or {@link #NEEDS_OWNER}, having changed nothing
     */
    public int write(OpKind kind, MemorySegment key, long keyOffset, MemorySegment value, long valueOffset,
                     MemorySegment expected, long expectedOffset) {
        if (kind == OpKind.GET) {
            throw new IllegalArgumentException("a get is a read: CpuOperations.get");
        }
        int r = table.run(kind, key, keyOffset, value, valueOffset, expected, expectedOffset);
        return r == OpStatus.NEED_RESIZE || r == OpStatus.NEED_HEAP ? NEEDS_OWNER : r;
    }

    /**
     * As {@link #write(OpKind, MemorySegment, long, MemorySegment, long, MemorySegment, long)}, for a
     * pool whose values have lengths of their own (format 3): the value of {@code valueLength} bytes,
     * the expected one of {@code expectedLength}.
     */
    public int write(OpKind kind, MemorySegment key, long keyOffset, MemorySegment value, long valueOffset, int valueLength,
                     MemorySegment expected, long expectedOffset, int expectedLength) {
        if (kind == OpKind.GET) {
            throw new IllegalArgumentException("a get is a read: CpuOperations.get");
        }
        int r = table.run(kind, key, keyOffset, value, valueOffset, valueLength, expected, expectedOffset, expectedLength);
        return r == OpStatus.NEED_RESIZE || r == OpStatus.NEED_HEAP ? NEEDS_OWNER : r;
    }

    /**
     * A get of the key at {@code keyOffset} of {@code keys} into result {@code i}, in the result's
     * layout: packed at the value's length, or in its place of the value size in {@code out} (the
     * result's {@link BatchResult#values()}, taken once by the caller for a whole batch; null for a
     * packed result) with zeros after a shorter value and its length recorded
     * ({@link BatchResult#valueLength}). FOUND or NOT_FOUND's code.
     */
    public int getInto(MemorySegment keys, long keyOffset, BatchResult result, MemorySegment out, int i) {
        int v = valueSize;
        if (result.valuesPacked()) {
            long at = result.reserveValue(v);
            int code = table.get(keys, keyOffset, result.valueBlock(), at);
            if (code == OpStatus.FOUND) {
                result.commitValue(i, table.lastReadLength());
            }
            return code;
        }
        int code = table.get(keys, keyOffset, out, (long) i * v);
        if (code == OpStatus.FOUND) {
            PhasedBatch.keepRead(result, false, out, i, v, table.lastReadLength());
        }
        return code;
    }

    /**
     * Runs a batch as the CPU engine runs one ({@link PhasedBatch}: its values persisted together, then
     * its meta words, its cache misses overlapped), marking in {@code dirty} the buckets each write may
     * have changed ({@link #markTouched}). Operation by operation, a batch of 64 writes from 16 threads
     * ran at about half the CPU engine's rate on the same machine (bench ycsb, issue 57).
     *
     * @return {@code batch.size()}, or the first operation that needs the owner (a resize or heap
     *         growth): it and those after it were not run, and changed nothing
     */
    public int run(Batch batch, BatchResult result, DirtyBuckets dirty) {
        return phased.get().run(batch, result, dirty);
    }

    /** A get, inside the epoch that keeps blocks from being reused under the copy: FOUND or NOT_FOUND's code. */
    public int get(MemorySegment key, long keyOffset, MemorySegment out, long outOffset) {
        return table.get(key, keyOffset, out, outOffset);
    }

    /** {@return the length of the value this thread's last found {@link #get} copied out} */
    public int lastReadLength() {
        return table.lastReadLength();
    }

    /**
     * Marks in {@code dirty} the buckets the calling thread's last write may have changed, numbered
     * across levels as the GPU's copies number them (top level first: bucket b of level d follows every
     * bucket of the levels above): every candidate bucket of its key, which holds every slot it
     * claimed, swapped or cleared.
     */
    public void markTouched(DirtyBuckets dirty) {
        markTouched(table.probes.get(), table.layout(), dirty);
    }

    /** Marks in {@code dirty} the candidate buckets of {@code probe}'s last key ({@link #markTouched(DirtyBuckets)}). */
    static void markTouched(Probe probe, TableLayout layout, DirtyBuckets dirty) {
        for (int i = 0; i < probe.bucketCount; i++) {
            dirty.mark(globalBucket(layout, probe.bucketOffset[i]));
        }
    }

    /** The table's buckets across levels now: what a {@link DirtyBuckets} for it must hold. */
    public long bucketCount() {
        return table.layout().totalBuckets();
    }

    /** Bucket number across levels of the bucket at pool offset {@code offset}. */
    static long globalBucket(TableLayout layout, long offset) {
        long base = 0;
        for (int d = 0; d < layout.levelCount(); d++) {
            long start = layout.levelOffset(d);
            long buckets = layout.bucketsAtDepth(d);
            if (offset >= start && offset < start + buckets * layout.bucketSize()) {
                return base + (offset - start) / layout.bucketSize();
            }
            base += buckets;
        }
        throw new IllegalStateException("pool offset " + offset + " is in no level of " + layout);
    }
}
