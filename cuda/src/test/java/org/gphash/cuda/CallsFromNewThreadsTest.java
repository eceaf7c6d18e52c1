package org.gphash.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicReference;

import org.gphash.Backend;
import org.gphash.GPHashIndex;
import org.gphash.IndexStats;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Every entry point of a GPU index works from a thread that has never touched it: the CUDA context
 * is per thread, and an entry that reads the device without binding it fails there with
 * CUDA_ERROR_INVALID_CONTEXT. Found when a cluster node (issue 56) answered a client's request for
 * its figures on one of Hazelcast's threads: {@code stats()} read BktCache's device counters unbound.
 */
class CallsFromNewThreadsTest {

    @BeforeEach
    void gpu() {
        GpuTestSupport.assumeGpu();
    }

    /** Runs {@code call} on a new platform thread; rethrows what it threw. */
    private static <T> T onNewThread(Callable<T> call) throws Exception {
        AtomicReference<T> out = new AtomicReference<>();
        AtomicReference<Throwable> failed = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                out.set(call.call());
            } catch (Throwable e) {
                failed.set(e);
            }
        });
        t.start();
        t.join();
        if (failed.get() != null) {
            throw new AssertionError("on a new thread: " + failed.get(), failed.get());
        }
        return out.get();
    }

    @Test
    @Timeout(120)
    void figuresCallsAndScansFromThreadsNewToTheEngine() throws Exception {
        try (GpuTestSupport t = GpuTestSupport.create();
             GPHashIndex index = GPHashIndex.builder(t.pool("gpu")).backend(Backend.GPU).keySize(8)
                     .valueSize(GpuTestSupport.VALUE_SIZE).initialCapacity(1024).create()) {
            byte[] v = new byte[GpuTestSupport.VALUE_SIZE];
            v[0] = 42;
            assertTrue(onNewThread(() -> index.put(7L, v)));
            IndexStats stats = onNewThread(index::stats);
            assertEquals(1, stats.size());
            assertTrue(onNewThread(() -> index.shardStats().size()) >= 1);
            assertArrayEquals(v, onNewThread(() -> index.get(7L)));
            assertEquals(1L, (long) onNewThread(index::size));
            onNewThread(() -> index.gpu().map(g -> g.bucketCacheStats()).orElseThrow());
            onNewThread(index::lastRecovery);
            assertEquals(1, (int) onNewThread(() -> {
                int n = 0;
                var c = index.cursor();
                while (c.next()) {
                    n++;
                }
                return n;
            }));
            onNewThread(() -> {
                index.sync();
                return null;
            });
        }
    }
}
