package org.gphash.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import org.gphash.Backend;
import org.gphash.Codec;
import org.gphash.GPHashIndex;
import org.gphash.GPHashMap;
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
}
