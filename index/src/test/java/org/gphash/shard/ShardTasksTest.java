package org.gphash.shard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** How every sharded path runs work on several shards at once ({@link ShardTasks#atOnce}). */
class ShardTasksTest {

    private final ExecutorService workers = Executors.newCachedThreadPool();

    @AfterEach
    void stop() {
        workers.shutdownNow();
    }

    @Test
    void runsTheChosenShardsTheFirstOnTheCallersThreadAndGivesResultsInShardOrder() {
        Thread caller = Thread.currentThread();
        Thread[] ranOn = new Thread[5];
        List<String> r = ShardTasks.atOnce(5, s -> s != 0 && s != 3, workers, s -> {
            ranOn[s] = Thread.currentThread();
            return "shard " + s;
        });
        assertEquals(Arrays.asList(null, "shard 1", "shard 2", null, "shard 4"), r);
        assertSame(caller, ranOn[1], "the first shard chosen runs on the caller's thread");
        assertTrue(ranOn[2] != caller && ranOn[4] != caller, "the others on the workers");
        assertEquals(null, ranOn[0]);
        assertEquals(null, ranOn[3]);
        assertEquals(Arrays.asList(null, null), ShardTasks.atOnce(2, s -> false, workers, s -> "never"));
    }

    @Test
    void everyShardFinishesBeforeTheFirstFailureIsThrownWithTheOthersSuppressed() {
        AtomicInteger finished = new AtomicInteger();
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> ShardTasks.atOnce(4, s -> true, workers, s -> {
            if (s == 1) {
                try {
                    Thread.sleep(200);  // ends last: the call must still wait for it
                } catch (InterruptedException x) {
                    Thread.currentThread().interrupt();
                }
                finished.incrementAndGet();
                return null;
            }
            finished.incrementAndGet();
            throw new IllegalStateException("shard " + s);
        }));
        assertEquals(4, finished.get(), "every shard's work ended before the failure was thrown");
        assertEquals("shard 0", e.getMessage(), "the caller's own shard's failure comes first");
        assertEquals(2, e.getSuppressed().length);
    }
}
