package org.gphash.index.api;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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

import org.gphash.GPHashIndex;
import org.gphash.error.PoolFormatException;
import org.gphash.format.SlotMeta;
import org.gphash.table.PoolInspector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 52, item 2: a crash of a process that opened a damaged pool must not launder the damage.
 * Open keeps what the close record knew of each table region, and which regions the process reached;
 * the scan after the crash still checks every region it never reached. Each damage below passed the
 * scan before (a value offset moved onto a free block served another key's old value; a zeroed meta
 * word made a key vanish) and `check` called the pool sound.
 */
class CrashAfterDamageTest {

    private static final int ITEMS = 60_000;
    private static final long VICTIM = 7;
    private static final long DELETED = 40_001;
    private final TestPools pools = TestPools.create();

    @AfterEach
    void cleanUp() {
        pools.close();
    }

    private static byte[] value(long k) {
        return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(0, k * 31 + 1).array();
    }

    /** A cleanly closed pool of ITEMS keys but one, whose value block is free; returns that block's offset. */
    private long closedPool(Path p) {
        try (GPHashIndex index = GPHashIndex.builder(p).keySize(8).valueSize(8).initialCapacity(ITEMS).seed(3).create()) {
            for (long k = 1; k <= ITEMS; k++) {
                index.put(k, value(k));
            }
        }
        long freeBlock = SlotMeta.valueOffset(metaOf(p, slotOf(p, DELETED)));
        try (GPHashIndex index = GPHashIndex.builder(p).open()) {
            assertTrue(index.delete(DELETED));
        }
        return freeBlock;
    }

    @Test
    void aValueOffsetMovedOntoAFreeBlockIsRefusedAfterTheCrash() throws IOException {
        Path p = pools.pool("moved.pool");
        long freeBlock = closedPool(p);
        long slot = slotOf(p, VICTIM);
        writeMeta(p, slot, SlotMeta.make(SlotMeta.fingerprint(metaOf(p, slot)), freeBlock));
        crashAfterAnOpenThatReadNothing(p);
        assertRefusedAndReported(p);
    }

    @Test
    void aZeroedMetaWordIsRefusedAfterTheCrash() throws IOException {
        Path p = pools.pool("zeroed.pool");
        closedPool(p);
        writeMeta(p, slotOf(p, VICTIM), SlotMeta.EMPTY);
        crashAfterAnOpenThatReadNothing(p);
        assertRefusedAndReported(p);
    }

    @Test
    void aRegionTheCrashedProcessRefusedStaysRefused() throws IOException {
        Path p = pools.pool("read.pool");
        closedPool(p);
        writeMeta(p, slotOf(p, VICTIM), SlotMeta.EMPTY);
        GPHashIndex index = GPHashIndex.builder(p).open();
        assertTrue(index.lastRecovery().fromCloseRecord());
        assertThrows(PoolFormatException.class, () -> index.get(VICTIM));
        index.engine().abandon();
        assertRefusedAndReported(p);
    }

    /** The control: writes everywhere, crashes, twice over; nothing refused and nothing lost. */
    @Test
    void writesBeforeACrashAreNotTakenForDamage() {
        Path p = pools.pool("writes.pool");
        closedPool(p);
        for (int round = 0; round < 2; round++) {   // round 0 opens from the record, round 1 by the scan
            GPHashIndex index = GPHashIndex.builder(p).open();
            assertEquals(round == 0, index.lastRecovery().fromCloseRecord());
            for (long k = 1; k <= ITEMS; k += 3) {
                index.put(k, value(k + round + 1));
            }
            index.engine().abandon();
        }
        try (GPHashIndex index = GPHashIndex.builder(p).open()) {
            assertFalse(index.lastRecovery().previousShutdownClean());
            for (long k = 1; k <= ITEMS; k++) {
                byte[] expected = k == DELETED ? null : (k - 1) % 3 == 0 ? value(k + 2) : value(k);
                if (expected == null) {
                    assertNull(index.get(k));
                } else {
                    assertArrayEquals(expected, index.get(k), "key " + k);
                }
            }
        }
    }

    private static void crashAfterAnOpenThatReadNothing(Path p) {
        GPHashIndex index = GPHashIndex.builder(p).open();
        assertTrue(index.lastRecovery().fromCloseRecord());
        index.engine().abandon();  // a crash: no clean shutdown
    }

    private static void assertRefusedAndReported(Path p) throws IOException {
        byte[] before = java.nio.file.Files.readAllBytes(p);
        for (int attempt = 0; attempt < 2; attempt++) {   // a refused open writes nothing: the second refuses too
            PoolFormatException e = assertThrows(PoolFormatException.class, () -> GPHashIndex.builder(p).open());
            assertArrayEquals(before, java.nio.file.Files.readAllBytes(p), "a refused open wrote to the pool");
            assertEquals(PoolFormatException.Reason.DAMAGE_BEYOND_CRASH, e.reason(), e.getMessage());
            assertTrue(e.getMessage().contains("no operation reached"), e.getMessage());
        }
        try (PoolInspector in = PoolInspector.open(p)) {
            assertEquals(1, in.changedRegions().size(), "check names the changed region");
        }
        // The repair the message names accepts the table as it is.
        try (GPHashIndex index = GPHashIndex.builder(p).repairBeyondCrash(true).open()) {
            assertEquals(value(VICTIM + 1).length, index.get(VICTIM + 1).length);
        }
    }

    private static long metaOf(Path p, long slot) {
        try (PoolInspector in = PoolInspector.open(p)) {
            return in.segment().get(ValueLayout.JAVA_LONG, slot);
        }
    }

    private static void writeMeta(Path p, long slot, long meta) throws IOException {
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putLong(0, meta), slot);
        }
    }

    private static long slotOf(Path p, long key) {
        return TestPools.slotOf(p, key);
    }
}
