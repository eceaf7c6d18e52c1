package org.gphash.recovery;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;

import org.gphash.GPHashIndex;
import org.gphash.format.MetaFormat;
import org.gphash.format.PoolHeader;
import org.gphash.format.SlotMeta;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The tools on a format 3 pool (issue 53, item 4): {@code check}, {@code stats} and
 * {@code snapshot} read it (format 3's meta words, its heap of whole segments, each value's header, or
 * none where the values of the value size, 32 bytes, are bare),
 * find a value header changed behind the engine's back ({@code TORN_VALUE_FRAME}) and a value offset
 * moved off a block, and change no byte; {@code dump} and {@code import --pool-format} move items
 * between the formats.
 */
class FormatThreeToolsTest {

    private final ToolFixture f = new ToolFixture();

    @AfterEach
    void cleanUp() {
        f.close();
    }

    /** A cleanly closed format 3 pool holding keys 1..items, small enough to have resized and grown. */
    private Path pool(String name, int items) {
        return pool(name, items, ToolFixture.VALUE_SIZE);
    }

    /** The same with values of up to {@code valueSize} bytes (the items' values have 32: framed where that is less). */
    private Path pool(String name, int items, int valueSize) {
        Path p = f.dir.resolve(name);
        try (GPHashIndex index = GPHashIndex.builder(p).keySize(8).valueSize(valueSize).initialCapacity(32)
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
        Path p = pool("torn.pool", 500, ToolFixture.VALUE_SIZE + 8);  // 32-byte values in a pool of 40: framed
        MetaFormat meta = MetaFormat.of(PoolHeader.FORMAT_3);
        ToolFixture.Slot torn = ToolFixture.items(p).get(5);
        ToolFixture.writeLong(p, meta.valueOffset(torn.meta()), 0L);  // the value's header zeroed
        ToolFixture.Run r = ToolFixture.tool("check", p.toString());
        assertEquals(1, r.code(), r.all());
        assertTrue(r.out().contains("TORN_VALUE_FRAME"), r.out());

        Path q = pool("moved.pool", 500);
        ToolFixture.Slot moved = ToolFixture.items(q).get(7);
        long off = meta.valueOffset(moved.meta());
        ToolFixture.writeLong(q, moved.offset(), meta.make(SlotMeta.fingerprint(moved.meta()), meta.valueClass(moved.meta()), off + 16));
        ToolFixture.Run m = ToolFixture.tool("check", q.toString());
        assertEquals(1, m.code(), m.all());
        assertTrue(m.out().contains("BAD_VALUE_OFFSET"), m.out());
    }

    /**
     * Dump and import move items between formats: a format 3 pool's items into format 2 and back, and a
     * format 2 pool's into format 3 (the way to move a pool to format 3), every value the same.
     */
    @Test
    void dumpAndImportMoveItemsBetweenFormats() {
        Path three = pool("three.pool", 1500);
        byte[] before = ToolFixture.bytes(three);
        Path d3 = f.dir.resolve("three.dump");
        ToolFixture.Run dump = ToolFixture.tool("dump", three.toString(), d3.toString());
        assertEquals(0, dump.code(), dump.all());
        assertTrue(dump.out().contains("dump: 1500 items"), dump.out());
        assertArrayEquals(before, ToolFixture.bytes(three), "dump changed the pool");
        Path two = f.dir.resolve("two.pool");
        assertEquals(0, ToolFixture.tool("import", d3.toString(), two.toString()).code());
        Path d2 = f.dir.resolve("two.dump");
        assertEquals(0, ToolFixture.tool("dump", two.toString(), d2.toString()).code());
        Path again = f.dir.resolve("again.pool");
        ToolFixture.Run up = ToolFixture.tool("import", "--pool-format", "3", d2.toString(), again.toString());
        assertEquals(0, up.code(), up.all());
        for (Path p : new Path[] {two, again}) {
            assertEquals(0, ToolFixture.tool("check", p.toString()).code());
            try (GPHashIndex index = GPHashIndex.builder(p).open()) {
                assertEquals(1500, index.size());
                for (long k = 1; k <= 1500; k++) {
                    assertArrayEquals(ToolFixture.value(k), index.get(k), p + " key " + k);
                }
            }
        }
        assertTrue(ToolFixture.tool("check", again.toString()).out().contains("format 3"));
        assertTrue(ToolFixture.tool("check", two.toString()).out().contains("format 2"));
    }

    /**
     * Values of many lengths (format 3, step 4): {@code check} finds the pool sound, a dump carries each
     * value at its own length, an import into a format 3 pool gives every value back at its length, and
     * an import into format 2, which holds values of the value size only, is refused with the reason.
     */
    @Test
    void valuesOfManyLengthsSurviveCheckDumpAndImport() {
        Path p = f.dir.resolve("lengths.pool");
        int max = 3000;
        try (GPHashIndex index = GPHashIndex.builder(p).keySize(8).valueSize(max).initialCapacity(32).seed(7)
                .poolFormat(3).create()) {
            for (long k = 1; k <= 800; k++) {
                index.put(k, varied(k, max));
            }
            for (long k = 1; k <= 800; k += 3) {
                index.put(k, varied(k + 7, max));  // rewritten at another length (another class, mostly)
            }
        }
        ToolFixture.Run check = ToolFixture.tool("check", p.toString());
        assertEquals(0, check.code(), check.all());
        Path dump = f.dir.resolve("lengths.dump");
        assertEquals(0, ToolFixture.tool("dump", p.toString(), dump.toString()).code());
        Path again = f.dir.resolve("lengths-again.pool");
        ToolFixture.Run up = ToolFixture.tool("import", "--pool-format", "3", dump.toString(), again.toString());
        assertEquals(0, up.code(), up.all());
        assertEquals(0, ToolFixture.tool("check", again.toString()).code());
        try (GPHashIndex index = GPHashIndex.builder(again).open()) {
            assertEquals(800, index.size());
            for (long k = 1; k <= 800; k++) {
                byte[] expected = k % 3 == 1 ? varied(k + 7, max) : varied(k, max);
                assertArrayEquals(expected, index.get(k), "key " + k);
            }
        }
        ToolFixture.Run down = ToolFixture.tool("import", dump.toString(), f.dir.resolve("two.pool").toString());
        assertTrue(down.code() != 0, down.all());
        assertTrue(down.all().contains("only a format 3 pool holds such values"), down.all());
    }

    /** A value of a length from 0 to {@code max} that {@code seed} picks, its bytes from the seed. */
    private static byte[] varied(long seed, int max) {
        java.util.Random r = new java.util.Random(seed);
        byte[] v = new byte[r.nextInt(4) == 0 ? max : r.nextInt(max + 1)];
        r.nextBytes(v);
        return v;
    }

    /**
     * {@code upgrade} moves a format 2 pool to format 3 in one command: every item the same, the new pool
     * sound and of format 3 under the old name, the old one kept as {@code POOL.format2} byte for byte,
     * no file of the command's left; a second upgrade does nothing; a pool that keeps item checksums
     * keeps them in format 3 (and {@code --delete-old} leaves no format 2 pool); a pool another process
     * holds is left as it was.
     */
    @Test
    void upgradeMovesAFormatTwoPoolToFormatThreeInOneCommand() {
        Path p = f.dir.resolve("old.pool");
        try (GPHashIndex index = GPHashIndex.builder(p).keySize(8).valueSize(ToolFixture.VALUE_SIZE).initialCapacity(32)
                .seed(7).create()) {
            for (long k = 1; k <= 1200; k++) {
                index.put(k, ToolFixture.value(k));
            }
        }
        byte[] before = ToolFixture.bytes(p);
        ToolFixture.Run up = ToolFixture.tool("upgrade", p.toString());
        assertEquals(0, up.code(), up.all());
        assertTrue(up.out().contains("is format 3 now"), up.out());
        Path old = f.dir.resolve("old.pool.format2");
        assertArrayEquals(before, ToolFixture.bytes(old), "the format 2 pool kept as it was");
        assertTrue(ToolFixture.tool("check", p.toString()).out().contains("format 3"));
        try (GPHashIndex index = GPHashIndex.builder(p).open()) {
            assertEquals(1200, index.size());
            assertTrue(index.valueLengths(), "the upgraded pool takes values of any length");
            for (long k = 1; k <= 1200; k++) {
                assertArrayEquals(ToolFixture.value(k), index.get(k), "key " + k);
            }
            index.put(5000L, new byte[3]);  // a value shorter than the value size: format 3's
        }
        assertEquals(java.util.List.of("old.pool", "old.pool.format2"), files(), "no file of the upgrade's left");
        ToolFixture.Run again = ToolFixture.tool("upgrade", p.toString());
        assertEquals(0, again.code(), again.all());
        assertTrue(again.out().contains("format 3 already"), again.out());

        Path sums = f.dir.resolve("sums.pool");
        try (GPHashIndex index = GPHashIndex.builder(sums).keySize(8).valueSize(ToolFixture.VALUE_SIZE).itemChecksums(true)
                .create()) {
            index.put(1L, ToolFixture.value(1));
        }
        ToolFixture.Run kept = ToolFixture.tool("upgrade", "--delete-old", sums.toString());
        assertEquals(0, kept.code(), kept.all());
        ToolFixture.Run deep = ToolFixture.tool("check", "--deep", sums.toString());
        assertEquals(0, deep.code(), deep.all());
        assertTrue(deep.out().contains("format 3"), deep.out());
        try (GPHashIndex index = GPHashIndex.builder(sums).open()) {
            assertTrue(index.stats().toString() != null && index.valueLengths());
            assertArrayEquals(ToolFixture.value(1), index.get(1L), "the item, its checksum kept in its header");
        }

        Path held = f.dir.resolve("held.pool");
        try (GPHashIndex index = GPHashIndex.builder(held).keySize(8).valueSize(ToolFixture.VALUE_SIZE).create()) {
            index.put(1L, ToolFixture.value(1));
            ToolFixture.Run locked = ToolFixture.tool("upgrade", held.toString());
            assertTrue(locked.code() != 0, locked.all());
        }
        assertTrue(files().contains("held.pool") && !files().contains("held.pool.format2"), files().toString());
    }

    private java.util.List<String> files() {
        try (java.util.stream.Stream<Path> all = java.nio.file.Files.list(f.dir)) {
            return all.map(q -> q.getFileName().toString()).filter(n -> n.startsWith("old.pool") || n.startsWith("held.pool"))
                    .sorted().toList();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /**
     * Item checksums in format 3 (in each value's header, over its key, length and bytes): a pool of
     * values of many lengths passes {@code check --deep}; a value byte changed behind the engine's back,
     * or a length changed to another of the same size class (which the frame alone cannot tell), is
     * never returned (the read fails), {@code check --deep} lists both, and {@code dump} leaves them out.
     */
    @Test
    void itemChecksumsInFormatThreeCatchAChangedValueAndALengthTornWithinItsClass() {
        Path p = f.dir.resolve("sums3.pool");
        int max = 600;
        try (GPHashIndex index = GPHashIndex.builder(p).keySize(8).valueSize(max).initialCapacity(32).seed(7)
                .poolFormat(3).itemChecksums(true).create()) {
            for (long k = 1; k <= 700; k++) {
                index.put(k, varied(k, max));
            }
        }
        assertEquals(0, ToolFixture.tool("check", "--deep", p.toString()).code());
        MetaFormat meta = MetaFormat.of(PoolHeader.FORMAT_3);
        ToolFixture.Slot changed = null;
        ToolFixture.Slot torn = null;
        for (ToolFixture.Slot s : ToolFixture.items(p)) {
            int length = varied(s.key(), max).length;
            int c = org.gphash.format.ValueClasses.classOf(length);
            if (changed == null && length > 4) {
                changed = s;
            } else if (torn == null && length > 0 && org.gphash.format.ValueClasses.classOf(length - 1) == c) {
                torn = s;
            }
        }
        long changedBlock = meta.valueOffset(changed.meta());
        ToolFixture.writeByte(p, changedBlock + 8 + 2, (byte) (varied(changed.key(), max)[2] ^ 0x10));
        long tornBlock = meta.valueOffset(torn.meta());
        ToolFixture.writeByte(p, tornBlock, (byte) (varied(torn.key(), max).length - 1));  // the length's low byte, one less
        if (varied(torn.key(), max).length > 255) {
            ToolFixture.writeByte(p, tornBlock + 1, (byte) ((varied(torn.key(), max).length - 1) >>> 8));
        }
        ToolFixture.Run deep = ToolFixture.tool("check", "--deep", p.toString());
        assertEquals(1, deep.code(), deep.all());
        assertTrue(deep.out().contains("ITEM_CHECKSUM"), deep.out());
        try (GPHashIndex index = GPHashIndex.builder(p).open()) {
            long a = changed.key();
            long b = torn.key();
            assertThrows(org.gphash.ItemChecksumException.class, () -> index.get(a), "a changed value byte");
            assertThrows(org.gphash.ItemChecksumException.class, () -> index.get(b), "a length torn within its class");
        }
        Path dump = f.dir.resolve("sums3.dump");
        ToolFixture.Run d = ToolFixture.tool("dump", p.toString(), dump.toString());
        assertEquals(1, d.code(), d.all());
        assertTrue(d.out().contains("698 items") || d.all().contains("698"), d.all());
    }
}
