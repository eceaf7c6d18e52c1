package org.gphash.spi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.ValueLayout;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.junit.jupiter.api.Test;

/** The off-heap memory of batches and results: whole pages, pin bookkeeping, unpinned before it is freed. */
class HostMemoryTest {

    @Test
    void blocksAreWholeAlignedZeroedPages() {
        HostMemory m = HostMemory.allocate(5000);
        assertEquals(8192, m.segment().byteSize());
        assertEquals(0, m.segment().address() % 4096);
        for (long i = 0; i < m.segment().byteSize(); i++) {
            assertEquals(0, m.segment().get(ValueLayout.JAVA_BYTE, i));
        }
        assertThrows(IllegalArgumentException.class, () -> HostMemory.allocate(-1));
    }

    @Test
    void pinBookkeeping() {
        HostMemory m = HostMemory.allocate(1);
        assertFalse(m.pinned());
        assertEquals(1, m.noteUse());
        assertEquals(2, m.noteUse());
        m.pin(() -> { });
        assertTrue(m.pinned());
        assertThrows(IllegalStateException.class, () -> m.pin(() -> { }));
        HostMemory refused = HostMemory.allocate(1);
        refused.refusePin();
        assertTrue(refused.pinRefused());
        assertFalse(refused.pinned());
    }

    /** An unreachable pinned block is unpinned by the cleaner (before its memory goes back). */
    @Test
    void anUnreachablePinnedBlockIsUnpinned() throws InterruptedException {
        CountDownLatch unpinned = new CountDownLatch(1);
        pinAndDrop(unpinned);
        for (int i = 0; i < 100 && unpinned.getCount() > 0; i++) {
            System.gc();
            unpinned.await(50, TimeUnit.MILLISECONDS);
        }
        assertEquals(0, unpinned.getCount(), "the cleaner never unpinned the block");
    }

    private static void pinAndDrop(CountDownLatch unpinned) {
        HostMemory.allocate(1 << 16).pin(unpinned::countDown);
    }

    /**
     * Results made and dropped at once (what {@code index.execute(batch)} does on every call) give
     * their memory back to the JDK's direct-memory budget after a collection: twice the test JVM's
     * budget (its -Xmx) goes through without running out.
     */
    @Test
    void droppedBlocksGoBackWithoutBeingClosed() {
        long budget = Runtime.getRuntime().maxMemory();
        long each = 4096L * (1 + 128);
        long made = 0;
        for (long bytes = 0; bytes < 2 * budget; bytes += each) {
            BatchResult r = new BatchResult(128, 4096);
            r.reset(4096);
            made++;
        }
        assertTrue(made * each >= 2 * budget);
    }

    /** A batch keeps its operations when it moves to a larger block, and clearing zeroes the values. */
    @Test
    void batchesGrowIntoNewBlocksKeepingTheirOperations() {
        Batch b = Batch.create(8, 16, 1);
        HostMemory first = b.memory();
        assertSame(first, b.memory());
        for (long k = 0; k < 1000; k++) {
            byte[] v = new byte[16];
            v[0] = (byte) k;
            b.put(k, v);
        }
        assertNotSame(first, b.memory());
        assertEquals(1000, b.size());
        for (int i = 0; i < 1000; i++) {
            assertEquals(OpKind.PUT, b.kind(i));
            assertEquals((byte) i, b.values().get(ValueLayout.JAVA_BYTE, (long) i * 16));
            assertEquals(i, b.keys().get(ValueLayout.JAVA_LONG_UNALIGNED, (long) i * 8));
        }
        long keysAt = b.keys().address() - b.memory().segment().address();
        assertTrue(keysAt >= 0 && keysAt % 64 == 0 && b.values().address() + b.values().byteSize()
                <= b.memory().segment().address() + b.memory().segment().byteSize(), "columns lie inside the block");
        b.clear();
        b.get(1);
        assertEquals(0, b.size() - 1);
        assertArrayEquals(new byte[16], b.values().toArray(ValueLayout.JAVA_BYTE));
    }

    @Test
    void resultsStartNotAppliedAndGrowIntoNewBlocks() {
        BatchResult r = new BatchResult(16, 2);
        r.reset(2);
        r.setOutcome(0, Outcome.FOUND);
        r.reset(2);
        assertEquals(Outcome.NOT_APPLIED, r.outcome(0));
        HostMemory small = r.memory();
        r.reset(100);
        assertNotSame(small, r.memory());
        assertEquals(100, r.count(Outcome.NOT_APPLIED));
        assertNull(r.value(99));
        // Grown with room to spare: a batch a little larger than the last stays in the block (an
        // engine that pinned it keeps it pinned).
        HostMemory grown = r.memory();
        r.reset(110);
        assertSame(grown, r.memory());
        assertEquals(110, r.count(Outcome.NOT_APPLIED));
    }
}
