package org.gphash.recovery;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;

import org.gphash.GPHashIndex;
import org.gphash.format.MetaFormat;
import org.gphash.format.PoolHeader;
import org.gphash.format.SlotMeta;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The tools on a format 3 pool (issue 53, item 4, first part): {@code check}, {@code stats} and
 * {@code snapshot} read it (format 3's meta words, its heap of whole segments, each value's header),
 * find a value header changed behind the engine's back ({@code TORN_VALUE_FRAME}) and a value offset
 * moved off a block, and change no byte; {@code dump} refuses it, naming the format, until dump and
 * import move format 3's items.
 */
class FormatThreeToolsTest {

    private final ToolFixture f = new ToolFixture();

    @AfterEach
    void cleanUp() {
        f.close();
    }

    /** A cleanly closed format 3 pool holding keys 1..items, small enough to have resized and grown. */
    private Path pool(String name, int items) {
        Path p = f.dir.resolve(name);
        try (GPHashIndex index = GPHashIndex.builder(p).keySize(8).valueSize(ToolFixture.VALUE_SIZE).initialCapacity(32)
                .seed(7).poolFormat(3).create()) {
            for (long k = 1; k <= items; k++) {
                index.put(k, ToolFixture.value(k));
            }
        }
        return p;
    }

    @Test
    void checkStatsAndSnapshotReadAFormatThreePool() {
        Path p = pool("f3.pool", 2000);
        byte[] before = ToolFixture.bytes(p);
        ToolFixture.Run check = ToolFixture.tool("check", p.toString());
        assertEquals(0, check.code(), check.all());
        assertTrue(check.out().contains("check: sound") && check.out().contains("items 2000"), check.out());
        assertTrue(check.out().contains("format 3"), check.out());
        assertEquals(0, ToolFixture.tool("stats", p.toString()).code());
        ToolFixture.Run snap = ToolFixture.tool("snapshot", p.toString(), f.dir.resolve("copy.pool").toString());
        assertEquals(0, snap.code(), snap.all());
        assertArrayEquals(before, ToolFixture.bytes(p), "the read-only tools changed the pool");
        try (GPHashIndex copy = GPHashIndex.builder(f.dir.resolve("copy.pool")).open()) {
            assertArrayEquals(ToolFixture.value(1234), copy.get(1234L));
        }
    }

    @Test
    void checkFindsATornValueHeaderAndAMovedValueOffset() {
        Path p = pool("torn.pool", 500);
        MetaFormat meta = MetaFormat.of(PoolHeader.FORMAT_3, ToolFixture.VALUE_SIZE);
        ToolFixture.Slot torn = ToolFixture.items(p).get(5);
        ToolFixture.writeLong(p, meta.valueOffset(torn.meta()), 0L);  // the value's header zeroed
        ToolFixture.Run r = ToolFixture.tool("check", p.toString());
        assertEquals(1, r.code(), r.all());
        assertTrue(r.out().contains("TORN_VALUE_FRAME"), r.out());

        Path q = pool("moved.pool", 500);
        ToolFixture.Slot moved = ToolFixture.items(q).get(7);
        long off = meta.valueOffset(moved.meta());
        ToolFixture.writeLong(q, moved.offset(), meta.make(SlotMeta.fingerprint(moved.meta()), off + 16));
        ToolFixture.Run m = ToolFixture.tool("check", q.toString());
        assertEquals(1, m.code(), m.all());
        assertTrue(m.out().contains("BAD_VALUE_OFFSET"), m.out());
    }

    @Test
    void dumpRefusesAFormatThreePoolNamingTheFormat() {
        Path p = pool("dump.pool", 100);
        byte[] before = ToolFixture.bytes(p);
        ToolFixture.Run r = ToolFixture.tool("dump", p.toString(), f.dir.resolve("d").toString());
        assertTrue(r.code() != 0, r.all());
        assertTrue(r.all().contains("format version 3") && r.all().contains("dump"), r.all());
        assertArrayEquals(before, ToolFixture.bytes(p));
    }
}
