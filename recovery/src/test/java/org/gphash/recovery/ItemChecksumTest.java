package org.gphash.recovery;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;

import org.gphash.GPHashIndex;
import org.gphash.ItemChecksumException;
import org.gphash.format.SlotMeta;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 14, value integrity: with item checksums, a value the media changed is never returned (a
 * clear exception instead), {@code check --deep} lists it, {@code dump} leaves it out, and rewriting
 * the key heals it. Without them, 56 of 60 flipped value bits were returned and check said sound.
 */
class ItemChecksumTest {

    private static final int VALUE = ToolFixture.VALUE_SIZE;
    private final ToolFixture f = new ToolFixture();

    @AfterEach
    void cleanUp() {
        f.close();
    }

    private Path checksummedPool(String name, int items) {
        Path p = f.dir.resolve(name);
        try (GPHashIndex index = GPHashIndex.builder(p).keySize(8).valueSize(VALUE).initialCapacity(32).seed(7)
                .itemChecksums(true).create()) {
            for (long k = 1; k <= items; k++) {
                index.put(k, ToolFixture.value(k));
            }
            assertTrue(index.stats().resizes() > 0, "the test wants resized levels and grown heap chunks");
        }
        return p;
    }

    @Test
    void aChangedValueIsNeverReturned() {
        Path p = checksummedPool("a.pool", 300);
        ToolFixture.Slot s = ToolFixture.items(p).get(17);
        long block = SlotMeta.valueOffset(s.meta());
        ToolFixture.writeByte(p, block + 5, (byte) (ToolFixture.value(s.key())[5] ^ 0x04));
        try (GPHashIndex index = GPHashIndex.builder(p).open()) {
            ItemChecksumException e = assertThrows(ItemChecksumException.class, () -> index.get(s.key()));
            assertTrue(e.getMessage().contains("slot " + s.offset()) && e.getMessage().contains("check --deep"),
                    e.getMessage());
            assertThrows(ItemChecksumException.class, () -> index.execute(index.newBatch(1)
                    .readModifyWrite(s.key(), ToolFixture.value(1))));
            for (long k = 1; k <= 300; k++) {
                if (k != s.key()) {
                    assertArrayEquals(ToolFixture.value(k), index.get(k), "key " + k);
                }
            }
            // Rewriting the key writes a new block with a new checksum: healed.
            assertFalse(index.put(s.key(), ToolFixture.value(s.key())));
            assertArrayEquals(ToolFixture.value(s.key()), index.get(s.key()));
        }
    }

    @Test
    void checkDeepListsWhatChecksFailAndDumpLeavesThemOut() throws Exception {
        Path p = checksummedPool("b.pool", 300);
        ToolFixture.Slot s = ToolFixture.items(p).get(40);
        ToolFixture.writeByte(p, SlotMeta.valueOffset(s.meta()), (byte) (ToolFixture.value(s.key())[0] ^ 1));
        assertEquals(0, ToolFixture.tool("check", p.toString()).code(), "without --deep values are not read");
        ToolFixture.Run deep = ToolFixture.tool("check", "--deep", p.toString());
        assertEquals(1, deep.code(), deep.all());
        assertTrue(deep.out().contains("PROBLEM ITEM_CHECKSUM x1"), deep.out());
        assertTrue(deep.out().contains("slot at offset " + s.offset()), deep.out());
        assertTrue(deep.out().contains("rewritten or deleted"), deep.out());
        Path dump = f.dir.resolve("b.dump");
        ToolFixture.Run d = ToolFixture.tool("dump", p.toString(), dump.toString());
        assertEquals(1, d.code(), d.all());
        assertTrue(d.out().contains("299 items") && d.out().contains("1 items LEFT OUT"), d.out());
        Path back = f.dir.resolve("back.pool");
        assertEquals(0, ToolFixture.tool("import", "--item-checksums", dump.toString(), back.toString()).code());
        try (GPHashIndex index = GPHashIndex.builder(back).open()) {
            assertEquals(299, index.stats().size());
            assertNull(index.get(s.key()));
        }
        assertEquals(0, ToolFixture.tool("check", "--deep", back.toString()).code());
    }

    @Test
    void withoutChecksumsCheckDeepSaysSo() {
        Path p = f.pool("plain.pool", 100);
        ToolFixture.Run deep = ToolFixture.tool("check", "--deep", p.toString());
        assertEquals(0, deep.code(), deep.all());
        assertTrue(deep.out().contains("NO_ITEM_CHECKSUMS"), deep.out());
    }

    /** The checksummed layout (wider value blocks) through resizes, heap growth, deletes and a crash. */
    @Test
    void aChecksummedPoolBehavesLikeAMap() {
        Path p = f.dir.resolve("model.pool");
        Map<Long, byte[]> model = new HashMap<>();
        Random r = new Random(5);
        GPHashIndex index = GPHashIndex.builder(p).keySize(8).valueSize(VALUE).initialCapacity(16).itemChecksums(true)
                .create();
        for (int i = 0; i < 20_000; i++) {
            long k = r.nextInt(3000);
            byte[] v = ToolFixture.value(k * 31 + i);
            switch (r.nextInt(4)) {
                case 0, 1 -> {
                    index.put(k, v);
                    model.put(k, v);
                }
                case 2 -> assertEquals(model.remove(k) != null, index.delete(k));
                default -> {
                    byte[] got = index.get(k);
                    byte[] want = model.get(k);
                    if (want == null) {
                        assertNull(got);
                    } else {
                        assertArrayEquals(want, got);
                    }
                }
            }
        }
        index.close();
        try (GPHashIndex again = GPHashIndex.builder(p).open()) {
            assertEquals(model.size(), again.stats().size());
            model.forEach((k, v) -> assertArrayEquals(v, again.get(k), "key " + k));
        }
        assertEquals(0, ToolFixture.tool("check", "--deep", p.toString()).code());
    }

    /**
     * Issue 27, item 7: a slot pointed (by damage) at its own key's older value block passed its
     * checksum and returned the old value. A freed block's checksum is now revoked.
     */
    @Test
    void aSlotPointedAtItsKeysOlderBlockFailsItsChecksum() {
        Path p = f.dir.resolve("older.pool");
        try (GPHashIndex index = GPHashIndex.builder(p).keySize(8).valueSize(ToolFixture.VALUE_SIZE).itemChecksums(true)
                .initialCapacity(64).seed(5).create()) {
            index.put(1L, ToolFixture.value(1));
        }
        ToolFixture.Slot first = ToolFixture.items(p).get(0);
        try (GPHashIndex index = GPHashIndex.builder(p).open()) {
            index.put(1L, ToolFixture.value(2));
        }
        ToolFixture.Slot second = ToolFixture.items(p).get(0);
        org.junit.jupiter.api.Assertions.assertNotEquals(SlotMeta.valueOffset(first.meta()), SlotMeta.valueOffset(second.meta()));
        ToolFixture.writeLong(p, second.offset(), first.meta());
        ToolFixture.Run deep = ToolFixture.tool("check", "--deep", p.toString());
        assertEquals(1, deep.code(), deep.all());
        assertTrue(deep.out().contains("ITEM_CHECKSUM"), deep.out());
    }
}
