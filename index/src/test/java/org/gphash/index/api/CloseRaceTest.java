package org.gphash.index.api;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;

import org.gphash.Batch;
import org.gphash.GPHashIndex;
import org.gphash.IndexClosedException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 27, item 8: operations racing {@code close()} got three different exceptions, one of them
 * the JDK's raw "Already closed" from an unmapped pool. Now every one gets {@link IndexClosedException}.
 */
class CloseRaceTest {

    private final TestPools pools = TestPools.create();

    @AfterEach
    void cleanUp() {
        pools.close();
    }

    @Test
    void operationsRacingCloseGetOneException() throws Exception {
        for (int round = 0; round < 20; round++) {
            Path p = pools.pool("race-" + round + ".pool");
            GPHashIndex index = GPHashIndex.builder(p).valueSize(16).initialCapacity(1 << 12).create();
            Map<String, Integer> seen = new ConcurrentHashMap<>();
            AtomicBoolean stop = new AtomicBoolean();
            CountDownLatch running = new CountDownLatch(4);
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int id = t;
                threads.add(Thread.ofPlatform().start(() -> {
                    byte[] v = new byte[16];
                    Batch batch = null;
                    running.countDown();
                    for (long k = id; !stop.get(); k += 4) {
                        try {
                            switch ((int) (k % 4)) {
                                case 0 -> index.put(k % 5000, v);
                                case 1 -> index.get(k % 5000);
                                case 2 -> index.delete(k % 5000);
                                default -> {
                                    if (batch == null) {
                                        batch = index.newBatch(64);
                                    }
                                    batch.clear();
                                    for (int i = 0; i < 64; i++) {
                                        batch.put((k + i) % 5000, v);
                                    }
                                    index.execute(batch);
                                }
                            }
                        } catch (IndexClosedException e) {
                            seen.merge(e.getClass().getName(), 1, Integer::sum);
                            return;
                        } catch (Throwable e) {
                            seen.merge(e.getClass().getName() + ": " + e.getMessage(), 1, Integer::sum);
                            return;
                        }
                    }
                }));
            }
            running.await();
            Thread.sleep(2);
            index.close();
            stop.set(true);
            for (Thread t : threads) {
                t.join();
            }
            seen.remove(IndexClosedException.class.getName());
            assertTrue(seen.isEmpty(), "round " + round + ": operations racing close threw " + seen);
        }
    }
}
