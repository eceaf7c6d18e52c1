package org.gphash.recovery;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;

import org.gphash.GPHashIndex;
import org.gphash.RecoveryReport;
import org.gphash.error.PoolFormatException.Reason;
import org.gphash.error.PoolFormatException;
import org.gphash.format.PoolHeader;
import org.gphash.format.SlotMeta;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 14, defects 2 and 3: open deleted every item when the header did not belong to the body
 * (a CRC-valid header of another pool, an older header of the same pool) and treated a flipped key
 * bit as a torn slot to clear; and a refused open had already cleared slots. Every refusal here
 * must leave the file byte for byte as it was, and say what is wrong.
 */
class DamageBeyondCrashTest {

    private static final int ITEMS = 300;
    private final ToolFixture f = new ToolFixture();

    @AfterEach
    void cleanUp() {
        f.close();
    }

    private static PoolFormatException refusedUnchanged(Path p, Reason reason, String... words) {
        byte[] before = ToolFixture.bytes(p);
        // A scanning open: after a clean close the default open trusts the close record and reads no slot.
        PoolFormatException e = assertThrows(PoolFormatException.class,
                () -> GPHashIndex.builder(p).verifyOnOpen(true).open().close());
        assertEquals(reason, e.reason(), e.getMessage());
        for (String w : words) {
            assertTrue(e.getMessage().contains(w), "message should mention \"" + w + "\": " + e.getMessage());
        }
        assertArrayEquals(before, ToolFixture.bytes(p), "a refused open must not write: " + e.getMessage());
        return e;
    }

    private static void assertAllThere(GPHashIndex index, long except) {
        for (long k = 1; k <= ITEMS; k++) {
            if (k != except) {
                assertArrayEquals(ToolFixture.value(k), index.get(k), "key " + k);
            }
        }
    }

    private static byte[] read(Path p, long offset, int length) {
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ)) {
            ByteBuffer b = ByteBuffer.allocate(length);
            ch.read(b, offset);
            return b.array();
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    private static void write(Path p, long offset, byte[] bytes) {
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(bytes), offset);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void aHeaderFromAnotherPoolIsRefused() {
        Path a = f.pool("a.pool", ITEMS);
        Path b = f.pool("b.pool", ITEMS);
        write(a, 0, read(b, 0, PoolHeader.REGION_BYTES));
        refusedUnchanged(a, Reason.FOREIGN_HEADER, "belongs to pool");
    }

    @Test
    void anOlderHeaderOfTheSamePoolIsRefused() {
        Path p = f.dir.resolve("stale.pool");
        byte[] old;
        try (GPHashIndex index = GPHashIndex.builder(p).keySize(8).valueSize(ToolFixture.VALUE_SIZE).initialCapacity(32)
                .seed(7).create()) {
            index.put(1L, ToolFixture.value(1));
        }
        old = read(p, 0, PoolHeader.REGION_BYTES);
        try (GPHashIndex index = GPHashIndex.builder(p).open()) {
            for (long k = 2; k <= ITEMS; k++) {
                index.put(k, ToolFixture.value(k));
            }
            assertTrue(index.stats().resizes() > 0, "the table resized after the old header was saved");
        }
        byte[] current = read(p, 0, PoolHeader.REGION_BYTES);
        write(p, 0, old);
        byte[] before = ToolFixture.bytes(p);
        PoolFormatException e = assertThrows(PoolFormatException.class,
                () -> GPHashIndex.builder(p).verifyOnOpen(true).open().close());
        assertTrue(e.reason() == Reason.FOREIGN_HEADER || e.reason() == Reason.DAMAGE_BEYOND_CRASH
                || e.reason() == Reason.CORRUPT, e.getMessage());
        assertArrayEquals(before, ToolFixture.bytes(p), "a refused open must not write: " + e.getMessage());
        write(p, 0, current);
        try (GPHashIndex index = GPHashIndex.builder(p).open()) {
            assertEquals(ITEMS, index.stats().size(), "the refused open with the stale header changed nothing");
            assertAllThere(index, -1);
        }
    }

    @Test
    void aFlippedKeyBitIsReportedNotDeleted() {
        Path p = f.pool("flip.pool", ITEMS);
        ToolFixture.Slot s = ToolFixture.items(p).get(10);
        ToolFixture.writeLong(p, s.offset() + SlotMeta.BYTES, s.key() ^ (1L << 20));
        PoolFormatException e = refusedUnchanged(p, Reason.DAMAGE_BEYOND_CRASH, "1 items do not match their key",
                Long.toString(s.offset()), "recover --force");
        // The default open of this cleanly closed pool trusts its close record: it reads no slot, so it
        // does not notice, and it deletes nothing either (check and a scanning open do notice).
        try (GPHashIndex index = GPHashIndex.builder(p).open()) {
            assertTrue(index.lastRecovery().fromCloseRecord(), index.lastRecovery().toString());
            assertEquals(ITEMS, index.stats().size());
        }
        assertEquals(s.key() ^ (1L << 20), ToolFixture.slots(p).stream().filter(x -> x.offset() == s.offset())
                .findFirst().orElseThrow().key(), "the open deleted or changed the damaged item");
        // check names it and says what to run.
        ToolFixture.Run check = ToolFixture.tool("check", p.toString());
        assertEquals(1, check.code(), check.all());
        assertTrue(check.out().contains("recover --force"), check.out());
        // recover without --force refuses too, and changes nothing.
        byte[] before = ToolFixture.bytes(p);
        ToolFixture.Run refused = ToolFixture.tool("recover", p.toString());
        assertEquals(1, refused.code(), refused.all());
        assertTrue(refused.all().contains("more damage than a crash can explain"), refused.all());
        assertArrayEquals(before, ToolFixture.bytes(p));
        // With --force the item goes, and everything else stays.
        ToolFixture.Run forced = ToolFixture.tool("recover", "--force", p.toString());
        assertEquals(0, forced.code(), forced.all());
        assertTrue(forced.out().contains("torn slots cleared:       1"), forced.out());
        try (GPHashIndex index = GPHashIndex.builder(p).open()) {
            assertEquals(ITEMS - 1, index.stats().size());
            long lost = s.key();
            assertNull(index.get(lost));
            assertAllThere(index, lost);
        }
        assertTrue(e.getMessage().contains("nothing was changed"), e.getMessage());
    }

    @Test
    void moreHalfInsertedSlotsThanWritersIsRefused() {
        Path p = f.pool("many-insert.pool", ITEMS);
        List<ToolFixture.Slot> empty = ToolFixture.slots(p).stream().filter(s -> s.meta() == SlotMeta.EMPTY).toList();
        for (int i = 0; i < 64; i++) {
            ToolFixture.writeLong(p, empty.get(i).offset(), SlotMeta.INSERT);
        }
        refusedUnchanged(p, Reason.DAMAGE_BEYOND_CRASH, "64 half-inserted slots", "in flight");
        try (GPHashIndex index = GPHashIndex.builder(p).repairBeyondCrash(true).open()) {
            RecoveryReport r = index.lastRecovery();
            assertEquals(64, r.insertSlotsCleared(), r.toString());
            assertEquals(ITEMS, index.stats().size());
            assertAllThere(index, -1);
        }
    }

    @Test
    void aCrashsWorthOfHalfInsertedSlotsIsRepairedSilently() {
        Path p = f.pool("one-insert.pool", ITEMS);
        ToolFixture.Slot s = ToolFixture.slots(p).stream().filter(x -> x.meta() == SlotMeta.EMPTY).findFirst().orElseThrow();
        ToolFixture.writeLong(p, s.offset(), SlotMeta.INSERT);
        ToolFixture.markUncleanShutdown(p);  // an INSERT slot is what a crash leaves, with the flag unset
        try (GPHashIndex index = GPHashIndex.builder(p).open()) {
            assertEquals(1, index.lastRecovery().insertSlotsCleared());
            assertAllThere(index, -1);
        }
    }

    /** Defect 3: an INSERT slot (a repair recovery makes) next to corruption it must refuse. */
    @Test
    void aRefusalForCorruptionComesBeforeAnyRepair() {
        Path p = f.pool("shared.pool", ITEMS);
        List<ToolFixture.Slot> items = ToolFixture.items(p);
        ToolFixture.Slot a = items.get(1);
        ToolFixture.Slot b = items.get(2);
        ToolFixture.writeLong(p, b.offset(), SlotMeta.make(SlotMeta.fingerprint(b.meta()), SlotMeta.valueOffset(a.meta())));
        ToolFixture.Slot free = ToolFixture.slots(p).stream().filter(x -> x.meta() == SlotMeta.EMPTY).findFirst()
                .orElseThrow();
        ToolFixture.writeLong(p, free.offset(), SlotMeta.INSERT);
        refusedUnchanged(p, Reason.CORRUPT, "two items refer to the value block", "nothing was changed");
    }

    @Test
    void aValueOffsetOutsideTheHeapIsRefusedBeforeAnyRepair() {
        Path p = f.pool("bad-offset.pool", ITEMS);
        // slots() lists the slots in the order recovery scans them: plant a repair recovery would make
        // (an INSERT slot) before a corruption it must refuse (an item whose value offset is no block).
        List<ToolFixture.Slot> all = ToolFixture.slots(p);
        int free = 0;
        while (all.get(free).meta() != SlotMeta.EMPTY) {
            free++;
        }
        int bad = free + 1;
        while (!SlotMeta.isItem(all.get(bad).meta())) {
            bad++;
        }
        ToolFixture.Slot a = all.get(bad);
        ToolFixture.writeLong(p, a.offset(), SlotMeta.make(SlotMeta.fingerprint(a.meta()), 8));
        ToolFixture.writeLong(p, all.get(free).offset(), SlotMeta.INSERT);
        refusedUnchanged(p, Reason.CORRUPT, "not a block of the value heap");
    }
}
