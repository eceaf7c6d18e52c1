package org.gphash.cuda;

import static org.gphash.cuda.GpuTestSupport.key;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;

import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.GPHashIndex;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Values of any length through the GPU backend's own API on a format 3 pool (issue 53): single calls
 * (run on the host with the CPU engine's code, or as batches of one where a write needs the table or
 * the heap grown), the conditional ones among them, and batches of every size and kind, conditional
 * ones included (the packed route: each chunk staged as a device batch's columns with a lengths
 * column), against a plain map, from a small table that resizes and a heap that grows; BktCache on (its
 * default). The pool the GPU closes then opens on the CPU backend with every value at its length.
 */
class ValuesOfAnyLengthThroughTheApiOnGpuTest {

    private static final int VS = 600;
    private static final int KEYS = 6_000;

    @BeforeEach
    void gpu() {
        GpuTestSupport.assumeGpu();
    }

    /** A length from 0 to the value size, the edges and the block sizes' neighbours often. */
    private static byte[] value(Random r) {
        int[] edges = {0, 1, 7, 8, 24, 25, 120, 128, 136, 248, 256, 257, VS - 1, VS};
        byte[] v = new byte[r.nextInt(3) == 0 ? edges[r.nextInt(edges.length)] : r.nextInt(VS + 1)];
        r.nextBytes(v);
        return v;
    }

    @Test
    void singleCallsAndBatchesOfAnyLengthAgreeWithAMap() {
        try (GpuTestSupport t = GpuTestSupport.create()) {
            Path p = t.pool("lengths-api");
            Random r = new Random(5353);
            Map<Long, byte[]> model = new HashMap<>();
            try (GPHashIndex index = GPHashIndex.builder(p).backend(Backend.GPU).keySize(8).valueSize(VS).poolFormat(3)
                    .initialCapacity(500).seed(3).create();
                 Arena arena = Arena.ofConfined()) {
                assertTrue(index.valueLengths(), "a format 3 pool on the GPU backend takes values of any length");
                MemorySegment out = arena.allocate(VS);
                for (int round = 0; round < 40; round++) {
                    // Single calls.
                    for (int c = 0; c < 300; c++) {
                        long k = r.nextInt(KEYS);
                        byte[] old = model.get(k);
                        byte[] v = value(r);
                        switch (r.nextInt(7)) {
                            case 0 -> {
                                assertEquals(old == null, index.put(k, v), "put " + k);
                                model.put(k, v);
                            }
                            case 1 -> {
                                assertEquals(old == null, index.insert(k, v), "insert " + k);
                                model.putIfAbsent(k, v);
                            }
                            case 2 -> {
                                assertEquals(old != null, index.update(k, v), "update " + k);
                                model.computeIfPresent(k, (x, y) -> v);
                            }
                            case 3 -> {
                                assertEquals(old != null, index.delete(k), "delete " + k);
                                model.remove(k);
                            }
                            case 4 -> {
                                byte[] expected = old != null && r.nextBoolean() ? old : value(r);
                                boolean acts = old != null && Arrays.equals(old, expected);
                                assertEquals(acts, index.compareAndSet(k, expected, v), "compareAndSet " + k);
                                if (acts) {
                                    model.put(k, v);
                                }
                            }
                            case 5 -> {
                                byte[] expected = old != null && r.nextBoolean() ? old : value(r);
                                boolean acts = old != null && Arrays.equals(old, expected);
                                assertEquals(acts, index.compareAndDelete(k, expected), "compareAndDelete " + k);
                                if (acts) {
                                    model.remove(k);
                                }
                            }
                            default -> {
                                assertArrayEquals(old, index.get(k), "get " + k);
                                int length = index.read(MemorySegment.ofArray(key(k, 8)), out);
                                assertEquals(old == null ? -1 : old.length, length, "read " + k + ": its length");
                            }
                        }
                    }
                    // A batch: small ones (the host or the packed route) and large ones (several chunks).
                    int n = 1 + r.nextInt(round % 4 == 3 ? 40_000 : 400);
                    runBatch(index, model, r, n, round);
                }
                // Writes of empty values only: no value bytes cross, and the route still has a column.
                for (int n : new int[] {1, 5_000}) {
                    Batch empties = index.newBatch(n);
                    for (int i = 0; i < n; i++) {
                        empties.put((long) i, new byte[0]);
                        model.put((long) i, new byte[0]);
                    }
                    BatchResult done = index.execute(empties);
                    for (int i = 0; i < n; i++) {
                        assertTrue(done.outcome(i) == Outcome.INSERTED || done.outcome(i) == Outcome.UPDATED, "empty put " + i);
                    }
                    assertArrayEquals(new byte[0], index.get(0L), "an empty value, its length 0");
                }
            }
            try (GPHashIndex cpu = GPHashIndex.builder(p).backend(Backend.CPU).open()) {
                assertEquals(model.size(), cpu.size());
                for (Map.Entry<Long, byte[]> e : model.entrySet()) {
                    assertArrayEquals(e.getValue(), cpu.get(e.getKey()), "key " + e.getKey() + " on the CPU backend");
                }
            }
        }
    }

    /** A batch of {@code n} random operations, its outcomes and values checked against {@code model} run in order. */
    private static void runBatch(GPHashIndex index, Map<Long, byte[]> model, Random r, int n, int round) {
        Batch batch = index.newBatch(n);
        Outcome[] want = new Outcome[n];
        byte[][] wantValue = new byte[n][];
        OpKind[] kinds = OpKind.values();
        for (int i = 0; i < n; i++) {
            long k = r.nextInt(n < 1000 ? 200 : KEYS);  // small batches repeat keys often
            OpKind kind = kinds[r.nextInt(kinds.length)];
            byte[] old = model.get(k);
            byte[] v = value(r);
            switch (kind) {
                case COMPARE_AND_SET -> {
                    byte[] expected = old != null && r.nextBoolean() ? old : value(r);
                    batch.compareAndSet(k, expected, v);
                    want[i] = old == null ? Outcome.NOT_FOUND : !Arrays.equals(old, expected) ? Outcome.EXISTS : Outcome.UPDATED;
                    if (want[i] == Outcome.UPDATED) {
                        model.put(k, v);
                    }
                }
                case COMPARE_AND_DELETE -> {
                    byte[] expected = old != null && r.nextBoolean() ? old : value(r);
                    batch.compareAndDelete(k, expected);
                    want[i] = old == null ? Outcome.NOT_FOUND : !Arrays.equals(old, expected) ? Outcome.EXISTS : Outcome.DELETED;
                    if (want[i] == Outcome.DELETED) {
                        model.remove(k);
                    }
                }
                default -> {
                    batch.add(kind, key(k, 8), kind.hasValue() ? v : null);
                    PlainOperationModel.apply(model, kind, k, v, want, wantValue, i);
                }
            }
        }
        PlainOperationModel.check(batch, index.execute(batch), want, wantValue, "round " + round);
    }
}
