package org.gphash.recovery;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;

import org.gphash.GPHashIndex;
import org.gphash.format.SlotMeta;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 27, item 4: {@code dump} of a pool that open refuses exited 0 with every item, and the pool
 * imported from it held other keys' values. Items dump cannot vouch for are now left out, counted,
 * and make it exit 1.
 */
class DumpVouchTest {

    private static final int ITEMS = 400;
    private final ToolFixture f = new ToolFixture();

    @AfterEach
    void cleanUp() {
        f.close();
    }

    @Test
    void itemsThatCannotBeVouchedForAreLeftOutAndCounted() {
        Path p = f.pool("damaged.pool", ITEMS);
        List<ToolFixture.Slot> items = ToolFixture.items(p);
        ToolFixture.Slot one = items.stream().filter(s -> s.key() == 1).findFirst().orElseThrow();
        ToolFixture.Slot two = items.stream().filter(s -> s.key() == 2).findFirst().orElseThrow();
        ToolFixture.Slot three = items.stream().filter(s -> s.key() == 3).findFirst().orElseThrow();
        // Key 2 refers to key 1's block (a copy taken while the block was reused); key 3's fingerprint is torn.
        ToolFixture.writeLong(p, two.offset(), SlotMeta.make(SlotMeta.fingerprint(two.meta()), SlotMeta.valueOffset(one.meta())));
        ToolFixture.writeLong(p, three.offset(), three.meta() ^ (1L << 50));

        Path dump = f.dir.resolve("damaged.dump");
        ToolFixture.Run d = ToolFixture.tool("dump", p.toString(), dump.toString());
        assertEquals(1, d.code(), d.all());
        assertTrue(d.out().contains("3 items LEFT OUT") && d.out().contains("2 whose value block another item also refers to")
                && d.out().contains("1 whose fingerprint does not match"), d.out());
        assertTrue(d.out().contains("values not verified"), d.out());

        Path back = f.dir.resolve("back.pool");
        assertEquals(0, ToolFixture.tool("import", dump.toString(), back.toString()).code());
        try (GPHashIndex index = GPHashIndex.builder(back).open()) {
            assertEquals(ITEMS - 3, index.size());
            for (long k = 1; k <= ITEMS; k++) {
                byte[] v = index.get(k);
                if (k <= 3) {
                    assertNull(v, "key " + k + " was dumped");
                } else {
                    assertArrayEquals(ToolFixture.value(k), v, "key " + k);
                }
            }
        }
    }

    /** Issue 52, item 9: a value offset moved onto a block that was free at the clean close. */
    @Test
    void anItemWhoseBlockWasFreeAtTheCloseIsLeftOut() {
        Path p = f.pool("moved.pool", ITEMS);
        long freeBlock = ToolFixture.items(p).stream().filter(s -> s.key() == 5).findFirst().orElseThrow().meta();
        try (GPHashIndex index = GPHashIndex.builder(p).open()) {
            assertTrue(index.delete(5));
        }
        ToolFixture.Slot victim = ToolFixture.items(p).stream().filter(s -> s.key() == 9).findFirst().orElseThrow();
        ToolFixture.writeLong(p, victim.offset(), SlotMeta.make(SlotMeta.fingerprint(victim.meta()),
                SlotMeta.valueOffset(freeBlock)));
        assertEquals(1, ToolFixture.tool("check", p.toString()).code());

        Path dump = f.dir.resolve("moved.dump");
        ToolFixture.Run d = ToolFixture.tool("dump", p.toString(), dump.toString());
        assertEquals(1, d.code(), d.all());
        assertTrue(d.out().contains("1 items LEFT OUT") && d.out().contains("1 whose value block was free at the last "
                + "clean close") && d.out().contains("CHANGED since the last clean close"), d.out());
        Path back = f.dir.resolve("moved-back.pool");
        assertEquals(0, ToolFixture.tool("import", dump.toString(), back.toString()).code());
        try (GPHashIndex index = GPHashIndex.builder(back).open()) {
            assertNull(index.get(9), "the key whose offset moved was exported with another key's old value");
            assertArrayEquals(ToolFixture.value(10), index.get(10));
        }
    }
}
