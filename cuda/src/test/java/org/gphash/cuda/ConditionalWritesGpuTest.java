package org.gphash.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.Codec;
import org.gphash.GPHashIndex;
import org.gphash.GPHashMap;
import org.gphash.OpKind;
import org.gphash.index.CpuEngine;
import org.gphash.spi.Engine;
import org.junit.jupiter.api.Test;

/**
 * Issue 28 on the GPU engine: compareAndSet and compareAndDelete atomic against every other writer,
 * and two map views plus direct writes that lose no update (the engine's lock holds the compare and
 * the write together).
 */
class ConditionalWritesGpuTest {

    private static byte[] longBytes(long v) {
        return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(0, v).array();
    }

    @Test
    void conditionalWritesAndTwoViewsOnTheGpu() throws Exception {
        GpuTestSupport.assumeGpu();
        try (GpuTestSupport t = GpuTestSupport.create();
             GPHashIndex index = GPHashIndex.builder(t.pool("cas")).backend(Backend.GPU).keySize(8).valueSize(8)
                     .initialCapacity(1024).create()) {
            assertFalse(index.compareAndSet(1L, longBytes(0), longBytes(1)));
            index.put(1L, longBytes(5));
            assertFalse(index.compareAndSet(1L, longBytes(4), longBytes(6)));
            assertTrue(index.compareAndSet(1L, longBytes(5), longBytes(6)));
            assertArrayEquals(longBytes(6), index.get(1L));
            assertFalse(index.compareAndDelete(1L, longBytes(5)));
            assertTrue(index.compareAndDelete(1L, longBytes(6)));
            assertNull(index.get(1L));

            List<ConcurrentMap<Long, Long>> views = List.of(GPHashMap.of(index, Codec.longs(), Codec.longs()),
                    GPHashMap.of(index, Codec.longs(), Codec.longs()));
            int threads = 4;
            int perThread = 400;
            AtomicInteger winners = new AtomicInteger();
            CountDownLatch start = new CountDownLatch(1);
            List<Thread> all = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                int id = i;
                all.add(Thread.ofPlatform().start(() -> {
                    try {
                        start.await();
                    } catch (InterruptedException e) {
                        return;
                    }
                    for (int n = 0; n < perThread; n++) {
                        views.get((id + n) % 2).merge((long) (n % 4), 1L, Long::sum);
                    }
                    if (views.get(id % 2).putIfAbsent(99L, (long) id) == null) {
                        winners.incrementAndGet();
                    }
                }));
            }
            start.countDown();
            for (Thread th : all) {
                th.join();
            }
            long sum = 0;
            for (long k = 0; k < 4; k++) {
                sum += views.get(1).get(k);
            }
            assertEquals((long) threads * perThread, sum, "updates were lost");
            assertEquals(1, winners.get(), "putIfAbsent winners");
        }
    }

    /**
     * Conditional operations in batches, among other operations on the same few keys (on the index
     * mirror), against the CPU engine on the same batches: same outcomes, values and contents (the
     * GPU engine runs them in segments of plain batches, ConditionalBatches; the CPU engine one by one).
     */
    @Test
    void conditionalBatchesWithRepeatedKeysMatchTheCpuEngine() {
        GpuTestSupport.assumeGpu();
        try (GpuTestSupport t = GpuTestSupport.create();
             Engine cpu = CpuEngine.create(
                     GpuTestSupport.config(t.pool("cpu"), Backend.CPU, 8, 2, 2, 8, 512, 5));
             GpuEngine gpu = GpuEngines.create(GpuTestSupport.config(t.pool("gpu"), Backend.GPU, 8, 2, 2, 8, 512, 5))) {
            Random random = new Random(28);
            Map<Long, byte[]> lastWritten = new HashMap<>();
            BatchResult rc = new BatchResult(GpuTestSupport.VALUE_SIZE, 1);
            BatchResult rg = new BatchResult(GpuTestSupport.VALUE_SIZE, 1);
            OpKind[] kinds = OpKind.values();
            long version = 0;
            int conditionals = 0;
            // The index mirror keeps batch order per key; the pool path (mirror OFF) does not, so
            // there each batch touches a key once (still one segment of gets and one plain batch).
            boolean ordered = gpu.ordersOperationsOnAKey();
            for (int round = 0; round < 25; round++) {
                int n = 1 + random.nextInt(round % 5 == 4 ? 3000 : 300);
                Batch batch = Batch.create(8, GpuTestSupport.VALUE_SIZE, n);
                java.util.Set<Long> used = new java.util.HashSet<>();
                for (int i = 0; i < n; i++) {
                    long k = random.nextInt(round % 2 == 0 ? 40 : 4000);
                    if (!ordered && !used.add(k)) {
                        continue;  // the pool path runs one key's operations of a batch in any order
                    }
                    OpKind kind = kinds[random.nextInt(kinds.length)];
                    byte[] v = kind.hasValue() ? GpuTestSupport.value(k, ++version) : null;
                    byte[] key = GpuTestSupport.key(k, 8);
                    if (kind.isConditional()) {
                        conditionals++;
                        byte[] e = random.nextInt(4) > 0 && lastWritten.containsKey(k) ? lastWritten.get(k)
                                : GpuTestSupport.value(k, 0);
                        if (kind == OpKind.COMPARE_AND_SET) {
                            batch.compareAndSet(key, e, v);
                        } else {
                            batch.compareAndDelete(key, e);
                        }
                    } else {
                        batch.add(kind, key, v);
                    }
                    if (v != null) {
                        lastWritten.put(k, v);
                    }
                }
                cpu.execute(batch, rc);
                gpu.execute(batch, rg);
                GpuTestSupport.assertSameResults(batch, rc, rg, "round " + round);
                assertEquals(cpu.stats().size(), gpu.stats().size(), "round " + round + ": item count");
            }
            assertTrue(conditionals > (ordered ? 1000 : 300), "the batches held conditional operations: " + conditionals);
            for (long k = 0; k < 4000; k++) {
                byte[] key = GpuTestSupport.key(k, 8);
                MemorySegment fromCpu = MemorySegment.ofArray(new byte[GpuTestSupport.VALUE_SIZE]);
                MemorySegment fromGpu = MemorySegment.ofArray(new byte[GpuTestSupport.VALUE_SIZE]);
                assertEquals(cpu.get(MemorySegment.ofArray(key), fromCpu), gpu.get(MemorySegment.ofArray(key), fromGpu),
                        "key " + k);
                assertArrayEquals(fromCpu.toArray(ValueLayout.JAVA_BYTE), fromGpu.toArray(ValueLayout.JAVA_BYTE), "key " + k);
            }
        }
    }
}
