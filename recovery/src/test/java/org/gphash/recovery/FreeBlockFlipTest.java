package org.gphash.recovery;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.gphash.GPHashIndex;
import org.gphash.error.GPHashException;
import org.gphash.error.PoolFormatException;
import org.gphash.format.HeapChunk;
import org.gphash.format.SlotMeta;
import org.gphash.table.PoolInspector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 27, item 3: an item's value offset changed, after a clean close, to a block the close record
 * lists as free. Before, {@code check} and {@code check --deep} called the pool sound, the default
 * open served it, and the next inserts handed the block out again: key 1 then read another key's value.
 */
class FreeBlockFlipTest {

    private static final int ITEMS = 400;
    private final ToolFixture f = new ToolFixture();

    @AfterEach
    void cleanUp() {
        f.close();
    }

    @Test
    void aValueOffsetMovedOntoAFreeBlockIsFoundByCheckOpenAndOperations() throws Exception {
        Path p = f.pool("free.pool", ITEMS);
        List<ToolFixture.Slot> items = ToolFixture.items(p);
        Set<Long> used = new HashSet<>();
        items.forEach(s -> used.add(SlotMeta.valueOffset(s.meta())));
        long free;
        int stride;
        HeapChunk chunk;
        try (PoolInspector in = PoolInspector.open(p)) {
            stride = in.geometry().valueStride();
            chunk = in.header().heapChunks().get(0);
        }
        free = chunk.offset();
        while (used.contains(free)) {
            free += stride;
        }
        ToolFixture.Slot victim = items.stream().filter(s -> s.key() == 1).findFirst().orElseThrow();
        ToolFixture.writeLong(p, victim.offset(), SlotMeta.make(SlotMeta.fingerprint(victim.meta()), free));

        for (String deep : new String[] {"", "--deep"}) {
            ToolFixture.Run check = deep.isEmpty() ? ToolFixture.tool("check", p.toString())
                    : ToolFixture.tool("check", deep, p.toString());
            assertEquals(1, check.code(), "check " + deep + " calls the pool sound: " + check.all());
            assertTrue(check.all().contains("was free"), check.all());
        }
        byte[] before = ToolFixture.bytes(p);
        PoolFormatException scan = assertThrows(PoolFormatException.class,
                () -> GPHashIndex.builder(p).verifyOnOpen(true).open());
        assertEquals(PoolFormatException.Reason.DAMAGE_BEYOND_CRASH, scan.reason());
        assertArrayEquals(before, ToolFixture.bytes(p), "a refused open wrote to the pool");

        try (GPHashIndex index = GPHashIndex.builder(p).open()) {
            assertThrows(GPHashException.class, () -> index.get(1L), "the changed item is served");
            for (long k = ITEMS + 1; k <= ITEMS + 600; k++) {
                try {
                    index.put(k, ToolFixture.value(k));
                } catch (GPHashException e) {
                    continue;  // its bucket lies in the changed region
                }
            }
            for (long k = 1; k <= ITEMS + 600; k++) {
                try {
                    byte[] v = index.get(k);
                    if (v != null) {
                        assertArrayEquals(ToolFixture.value(k), v, "key " + k + " reads another key's value");
                    }
                } catch (GPHashException e) {
                    // refused: the region changed
                }
            }
        }
    }
}
