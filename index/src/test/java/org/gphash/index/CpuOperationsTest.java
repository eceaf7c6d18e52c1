package org.gphash.index;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Random;

import org.gphash.Backend;
import org.gphash.GPHashConfig;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.bktcache.BktCacheConfig;
import org.gphash.index.api.TestPools;
import org.gphash.spi.CrashHook;
import org.gphash.table.PoolTable;
import org.gphash.table.Probe;
import org.gphash.table.TableLayout;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The CPU engine's operations on a pool another engine owns (the GPU engine's host writes): the same
 * outcomes as the CPU engine against a plain map, nothing done where a write needs the table or the
 * heap grown, and the buckets each write names holding every slot it changed.
 */
class CpuOperationsTest {

    private static final int VS = 16;
    private final TestPools pools = TestPools.create();

    @AfterEach
    void cleanUp() {
        pools.close();
    }

    private GPHashConfig config(String name, long capacity) {
        return Configs.of(pools.pool(name), 8, VS, 0, 0, 0, capacity, Long.MAX_VALUE, Backend.CPU, false, OptionalLong.of(7),
                CrashHook.NONE, BktCacheConfig.DISABLED);
    }

    private static MemorySegment key(long k) {
        return CrashPointTest.key(k);
    }

    private static MemorySegment value(long k, int version) {
        byte[] v = new byte[VS];
        Arrays.fill(v, (byte) (k * 31 + version));
        return MemorySegment.ofArray(v);
    }

    /** The global bucket holding pool offset {@code slot}. */
    private static long bucketOf(TableLayout layout, long slot) {
        return CpuOperations.globalBucket(layout, slot);
    }

    private static boolean named(long[] buckets, int n, long bucket) {
        for (int i = 0; i < n; i++) {
            if (buckets[i] == bucket) {
                return true;
            }
        }
        return false;
    }

    /** What a plain map answers to {@code kind} on a key whose value is {@code current} (null: absent). */
    private static Outcome outcome(OpKind kind, MemorySegment current, MemorySegment expected) {
        return switch (kind) {
            case GET -> current == null ? Outcome.NOT_FOUND : Outcome.FOUND;
            case PUT -> current == null ? Outcome.INSERTED : Outcome.UPDATED;
            case INSERT -> current == null ? Outcome.INSERTED : Outcome.EXISTS;
            case UPDATE -> current == null ? Outcome.NOT_FOUND : Outcome.UPDATED;
            case READ_MODIFY_WRITE -> current == null ? Outcome.NOT_FOUND : Outcome.REPLACED;
            case DELETE -> current == null ? Outcome.NOT_FOUND : Outcome.DELETED;
            case COMPARE_AND_SET -> current == null ? Outcome.NOT_FOUND
                    : current.mismatch(expected) == -1 ? Outcome.UPDATED : Outcome.EXISTS;
            case COMPARE_AND_DELETE -> current == null ? Outcome.NOT_FOUND
                    : current.mismatch(expected) == -1 ? Outcome.DELETED : Outcome.EXISTS;
        };
    }

    @Test
    void writesMatchAPlainMapAndNameTheBucketsTheyChanged() {
        PoolTable pool = PoolTable.create(config("ops.pool", 4096), null);
        try {
            CpuOperations ops = CpuOperations.on(pool);
            DirtyBuckets dirty = new DirtyBuckets(ops.bucketCount());
            long[] touched = new long[64];
            Map<Long, MemorySegment> model = new HashMap<>();
            Random random = new Random(11);
            MemorySegment out = MemorySegment.ofArray(new byte[VS]);
            OpKind[] kinds = {OpKind.PUT, OpKind.INSERT, OpKind.UPDATE, OpKind.DELETE, OpKind.COMPARE_AND_SET,
                    OpKind.COMPARE_AND_DELETE};
            for (int step = 0; step < 3000; step++) {
                long k = random.nextInt(500);
                OpKind kind = kinds[random.nextInt(kinds.length)];
                MemorySegment v = value(k, step);
                MemorySegment current = model.get(k);
                MemorySegment expected = current != null && random.nextBoolean() ? current : value(k, -1);
                int code = ops.write(kind, key(k), 0, v, 0, expected, 0);
                Outcome want = outcome(kind, current, expected);
                assertEquals(want, Outcome.ofCode(code), kind + " of key " + k + " at step " + step);
                if (want == Outcome.INSERTED || want == Outcome.UPDATED) {
                    model.put(k, v);
                } else if (want == Outcome.DELETED) {
                    model.remove(k);
                }
                ops.markTouched(dirty);
                int n = dirty.drainTo(touched);
                assertTrue(n >= 1 && n <= (pool.geometry().levels() + 1) * pool.geometry().hashes(), n + " buckets");
                assertEquals(0, dirty.drainTo(touched), "a drain empties the set");
                Probe probe = pool.reader().probes().get();
                TableLayout layout = pool.layout();
                for (int m = 0; m < probe.matchCount; m++) {
                    assertTrue(named(touched, n, bucketOf(layout, probe.matchSlot[m])),
                            "the bucket of slot " + probe.matchSlot[m] + " the write found is named");
                }
                for (int b = 0; b < n; b++) {
                    assertTrue(touched[b] >= 0 && touched[b] < layout.totalBuckets(), "bucket " + touched[b]);
                }
            }
            for (Map.Entry<Long, MemorySegment> e : model.entrySet()) {
                assertEquals(Outcome.FOUND.code(), ops.get(key(e.getKey()), 0, out, 0));
                assertEquals(-1, out.mismatch(e.getValue()), "key " + e.getKey());
            }
            assertEquals(model.size(), pool.size());
            assertThrows(IllegalArgumentException.class, () -> ops.write(OpKind.GET, key(1), 0, null, 0, null, 0));
        } finally {
            pool.close();
        }
    }

    @Test
    void aWriteThatNeedsTheTableOrHeapGrownChangesNothingAndSaysSo() {
        PoolTable pool = PoolTable.create(config("full.pool", 16), null);
        try {
            CpuOperations ops = CpuOperations.on(pool);
            long resizes = pool.layout().totalBuckets();
            long blocks = pool.totalBlocks();
            long k = 0;
            int code;
            while ((code = ops.write(OpKind.INSERT, key(k), 0, value(k, 0), 0, null, 0)) != CpuOperations.NEEDS_OWNER) {
                assertEquals(Outcome.INSERTED.code(), code);
                k++;
                assertTrue(k < 100_000, "a pool sized for 16 items never needed its owner");
            }
            long size = pool.size();
            assertEquals(k, size, "every insert before the one refused is there");
            assertEquals(resizes, pool.layout().totalBuckets(), "the table was not resized");
            assertEquals(blocks, pool.totalBlocks(), "the heap did not grow");
            MemorySegment out = MemorySegment.ofArray(new byte[VS]);
            assertEquals(Outcome.NOT_FOUND.code(), ops.get(key(k), 0, out, 0), "the refused insert left nothing");
            assertEquals(CpuOperations.NEEDS_OWNER, ops.write(OpKind.PUT, key(k), 0, value(k, 0), 0, null, 0));
            assertEquals(size, pool.size());
            pool.reclaimRetired();  // nothing was retired: a no-op that must not throw
        } finally {
            pool.close();
        }
    }

    /**
     * Batches run as the CPU engine runs them ({@link CpuOperations#run}) give every operation, in
     * batch order, the outcome a plain map gives, and name every candidate bucket of each key they
     * wrote; a batch that reaches a write needing the owner stops there, that write and every later
     * one not applied (NOT_APPLIED, nothing in the pool).
     */
    @Test
    void batchesMatchAPlainMapNameTheBucketsTheyChangedAndStopWhereTheOwnerMustGrow() {
        PoolTable pool = PoolTable.create(config("batches.pool", 4096), null);
        try {
            CpuOperations ops = CpuOperations.on(pool);
            DirtyBuckets dirty = new DirtyBuckets(ops.bucketCount());
            long[] touched = new long[1 << 16];
            Map<Long, MemorySegment> model = new HashMap<>();
            Random random = new Random(17);
            MemorySegment out = MemorySegment.ofArray(new byte[VS]);
            OpKind[] kinds = {OpKind.GET, OpKind.PUT, OpKind.INSERT, OpKind.UPDATE, OpKind.DELETE, OpKind.COMPARE_AND_SET,
                    OpKind.COMPARE_AND_DELETE, OpKind.READ_MODIFY_WRITE};
            for (int round = 0; round < 60; round++) {
                int n = 1 + random.nextInt(200);
                org.gphash.Batch batch = org.gphash.Batch.create(8, VS, n);
                Outcome[] want = new Outcome[n];
                MemorySegment[] wantValue = new MemorySegment[n];
                long[] keys = new long[n];
                for (int i = 0; i < n; i++) {
                    long k = random.nextInt(300);
                    keys[i] = k;
                    OpKind kind = kinds[random.nextInt(kinds.length)];
                    MemorySegment v = value(k, round * 1000 + i);
                    MemorySegment current = model.get(k);
                    MemorySegment expected = current != null && random.nextBoolean() ? current : value(k, -1);
                    byte[] kb = key(k).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
                    byte[] vb = v.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
                    byte[] eb = expected.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
                    switch (kind) {
                        case COMPARE_AND_SET -> batch.compareAndSet(kb, eb, vb);
                        case COMPARE_AND_DELETE -> batch.compareAndDelete(kb, eb);
                        default -> batch.add(kind, kb, kind.hasValue() ? vb : null);
                    }
                    want[i] = outcome(kind, current, expected);
                    wantValue[i] = kind == OpKind.GET || kind == OpKind.READ_MODIFY_WRITE ? current : null;
                    if (want[i] == Outcome.INSERTED || want[i] == Outcome.UPDATED || want[i] == Outcome.REPLACED) {
                        model.put(k, v);
                    } else if (want[i] == Outcome.DELETED) {
                        model.remove(k);
                    }
                }
                org.gphash.BatchResult result = new org.gphash.BatchResult(VS, n);
                result.reset(n);
                assertEquals(n, ops.run(batch, result, dirty), "a pool with room runs the whole batch");
                for (int i = 0; i < n; i++) {
                    assertEquals(want[i], result.outcome(i), batch.kind(i) + " of key " + keys[i] + ", operation " + i);
                    if (wantValue[i] != null) {
                        assertEquals(-1, wantValue[i].mismatch(MemorySegment.ofArray(result.value(i))), "value of operation " + i);
                    }
                }
                int marked = dirty.drainTo(touched);
                TableLayout layout = pool.layout();
                Probe probe = pool.reader().probes().get();
                for (int i = 0; i < n; i++) {
                    if (batch.kind(i) == OpKind.GET) {
                        continue;
                    }
                    ops.get(key(keys[i]), 0, out, 0);  // leaves the key's candidate buckets in the thread's probe
                    for (int b = 0; b < probe.bucketCount; b++) {
                        assertTrue(named(touched, marked, bucketOf(layout, probe.bucketOffset[b])),
                                "candidate bucket " + b + " of key " + keys[i] + " written by operation " + i + " is named");
                    }
                }
            }
            for (Map.Entry<Long, MemorySegment> e : model.entrySet()) {
                assertEquals(Outcome.FOUND.code(), ops.get(key(e.getKey()), 0, out, 0));
                assertEquals(-1, out.mismatch(e.getValue()), "key " + e.getKey());
            }
            assertEquals(model.size(), pool.size());
        } finally {
            pool.close();
        }
        PoolTable small = PoolTable.create(config("small.pool", 16), null);
        try {
            CpuOperations ops = CpuOperations.on(small);
            long buckets = small.layout().totalBuckets();
            long blocks = small.totalBlocks();
            int n = 5000;
            org.gphash.Batch batch = org.gphash.Batch.create(8, VS, n);
            for (int k = 0; k < n; k++) {
                batch.add(OpKind.INSERT, key(k).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE),
                        value(k, 0).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
            }
            org.gphash.BatchResult result = new org.gphash.BatchResult(VS, n);
            result.reset(n);
            int done = ops.run(batch, result, new DirtyBuckets(ops.bucketCount()));
            assertTrue(done > 0 && done < n, "a pool sized for 16 items stopped the batch at " + done);
            assertEquals(done, small.size(), "every insert before the stop is there, none after");
            assertEquals(buckets, small.layout().totalBuckets(), "the table was not resized");
            assertEquals(blocks, small.totalBlocks(), "the heap did not grow");
            MemorySegment out = MemorySegment.ofArray(new byte[VS]);
            for (int k = 0; k < n; k++) {
                assertEquals(k < done ? Outcome.INSERTED : Outcome.NOT_APPLIED, result.outcome(k), "insert " + k);
                assertEquals(k < done ? Outcome.FOUND.code() : Outcome.NOT_FOUND.code(), ops.get(key(k), 0, out, 0), "key " + k);
            }
        } finally {
            small.close();
        }
    }
}
