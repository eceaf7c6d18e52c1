package org.gphash.index.api;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.LongStream;

import org.gphash.Batch;
import org.gphash.GPHashIndex;
import org.gphash.error.PoolFormatException;
import org.gphash.format.SlotMeta;
import org.gphash.table.PoolInspector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 27, item 1: the default open of a cleanly closed pool reads none of the table, and checks
 * each region of it against the close record's CRC when an operation first reaches it. A region
 * changed behind the engine's back is refused (every operation that reaches it throws; a batch
 * stops there, as at any error, and applies nothing after it), the rest is served, and the next open still refuses it.
 */
class ChangedRegionTest {

    private static final int ITEMS = 60_000;
    private static final long VICTIM = 7;
    private final TestPools pools = TestPools.create();

    @AfterEach
    void cleanUp() {
        pools.close();
    }

    private static byte[] value(long k) {
        return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(0, k * 31 + 1).array();
    }

    @Test
    void aChangedRegionIsRefusedAndTheRestServed() throws IOException {
        Path p = closedWithTheVictimChanged("regions.pool");

        for (int round = 0; round < 2; round++) {   // the second open finds the same region refused
            try (GPHashIndex index = GPHashIndex.builder(p).open()) {
                assertTrue(index.lastRecovery().fromCloseRecord());
                PoolFormatException e = assertThrows(PoolFormatException.class, () -> index.get(VICTIM));
                assertTrue(e.getMessage().contains("changed after the pool was closed cleanly"), e.getMessage());
                assertTrue(e.getMessage().contains(p.toString()), e.getMessage());
                int served = 0;
                int refused = 0;
                for (long k = 1; k <= ITEMS; k++) {
                    try {
                        assertArrayEquals(value(k), index.get(k), "key " + k);
                        served++;
                    } catch (PoolFormatException refusedKey) {
                        refused++;
                    }
                }
                assertTrue(served > ITEMS * 3 / 4 && refused > 0, "served " + served + ", refused " + refused);

                // A batch stops at the operation that reaches the region: nothing after it is applied.
                long fresh = ITEMS + 1 + round;
                Batch batch = index.newBatch(3);
                batch.put(fresh, value(fresh));
                batch.get(VICTIM);
                batch.put(fresh + 100, value(fresh + 100));
                assertThrows(PoolFormatException.class, () -> index.execute(batch));
                assertNull(index.get(fresh + 100), "an operation after the refused one was applied");
            }
        }
        // The full scan refuses it too (the moved offset is the neighbour's block: two items share it).
        PoolFormatException.Reason reason = assertThrows(PoolFormatException.class,
                () -> GPHashIndex.builder(p).verifyOnOpen(true).open()).reason();
        assertTrue(reason == PoolFormatException.Reason.CORRUPT || reason == PoolFormatException.Reason.DAMAGE_BEYOND_CRASH,
                reason.toString());
    }

    /**
     * Regions are checked side by side: eight threads reading every key at once, each in its own
     * order, so that many reach the same unchecked region together. Each key is served or refused as
     * one thread alone finds it, by every thread, and no check is left half done (a thread waiting
     * for another's check of its region would hang).
     */
    @Test
    @Timeout(120)
    void manyThreadsReachingRegionsAtOnceAgreeWithOneThread() throws Exception {
        Path p = closedWithTheVictimChanged("regions-threads.pool");
        BitSet alone = new BitSet();
        try (GPHashIndex index = GPHashIndex.builder(p).open()) {
            for (long k = 1; k <= ITEMS; k++) {
                try {
                    assertArrayEquals(value(k), index.get(k), "key " + k);
                } catch (PoolFormatException refused) {
                    alone.set((int) k);
                }
            }
        }
        assertTrue(alone.get((int) VICTIM) && alone.cardinality() < ITEMS / 4, "refused alone: " + alone.cardinality());

        int threads = 8;
        BitSet[] refused = new BitSet[threads];
        CyclicBarrier start = new CyclicBarrier(threads);
        try (GPHashIndex index = GPHashIndex.builder(p).open();
             ExecutorService pool = Executors.newFixedThreadPool(threads)) {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int id = t;
                refused[t] = new BitSet();
                done.add(pool.submit(() -> {
                    long[] order = LongStream.rangeClosed(1, ITEMS).toArray();
                    SplittableRandom rnd = new SplittableRandom(id);
                    for (int i = order.length - 1; i > 0; i--) {
                        int j = rnd.nextInt(i + 1);
                        long x = order[i];
                        order[i] = order[j];
                        order[j] = x;
                    }
                    start.await();
                    for (long k : order) {
                        try {
                            assertArrayEquals(value(k), index.get(k), "key " + k);
                        } catch (PoolFormatException e) {
                            refused[id].set((int) k);
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
        }
        for (int t = 0; t < threads; t++) {
            assertEquals(alone, refused[t], "thread " + t + " refused other keys than one thread alone");
        }
    }

    /** A pool of {@link #ITEMS} items, closed cleanly, then the {@link #VICTIM}'s slot changed behind the engine's back. */
    private Path closedWithTheVictimChanged(String name) throws IOException {
        Path p = pools.pool(name);
        try (GPHashIndex index = GPHashIndex.builder(p).keySize(8).valueSize(8).initialCapacity(ITEMS).seed(3).create()) {
            for (long k = 1; k <= ITEMS; k++) {
                index.put(k, value(k));
            }
        }
        long slot = slotOf(p, VICTIM);
        long meta;
        try (PoolInspector in = PoolInspector.open(p)) {
            meta = in.segment().get(ValueLayout.JAVA_LONG, slot);
        }
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.WRITE)) {
            // The victim's value offset moved by one block: a flipped bit's worth of damage.
            long moved = SlotMeta.make(SlotMeta.fingerprint(meta), SlotMeta.valueOffset(meta) + 64);
            ch.write(ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putLong(0, moved), slot);
        }
        return p;
    }

    private static long slotOf(Path p, long key) {
        return TestPools.slotOf(p, key);
    }
}
