package org.gphash.recovery;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.zip.CRC32C;

import org.gphash.GPHashIndex;
import org.gphash.error.PoolFormatException;
import org.gphash.error.PoolIoException;
import org.gphash.format.HeapChunk;
import org.gphash.format.PoolHeader;
import org.gphash.format.SlotMeta;
import org.gphash.table.PoolInspector;
import org.gphash.table.TableLayout;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 14: corrupts a small pool in each way a disk, a tool or a person can (header fields with and
 * without a matching checksum, another pool's header, slots, extent tags, the value heap, zeroed
 * pages, truncation) and holds the engine and {@code check} to four rules on every case:
 * <ol>
 *   <li>a clear error (the engine's own exception, naming the pool) or an open pool, never anything
 *       else (no IndexOutOfBounds, no InternalError, no JVM crash);</li>
 *   <li>a refused open writes nothing;</li>
 *   <li>an open pool returns every key whose slot and value block the corruption did not touch,
 *       with its value (no silent loss of an untouched key);</li>
 *   <li>{@code check} never writes, never fails with anything but its exit codes, and never calls a
 *       pool sound that open refuses as damaged.</li>
 * </ol>
 * Deterministic (fixed seed); the case number and what was done are in every failure message.
 */
class PoolFuzzTest {

    private static final int ITEMS = 400;
    private static final int CASES = 480;
    private final ToolFixture f = new ToolFixture();

    @AfterEach
    void cleanUp() {
        f.close();
    }

    /** Where each key lives in the pristine pool. */
    record Item(long key, long slot, long value) {
    }

    enum Kind { HEADER_BIT, HEADER_FIELD_VALID_CRC, FOREIGN_HEADER, SLOT_BIT, EXTENT_TAG_BIT, HEAP_BIT, ZERO_PAGE, TRUNCATE }

    /** One corrupted pool: its bytes, the byte range that changed where an item lives ({-1,-1}: none), and what was done. */
    record Case(byte[] bytes, long touchedFrom, long touchedTo, String what) {
        boolean touches(long start, int length) {
            return touchedFrom >= 0 && touchedFrom < start + length && start < touchedTo;
        }
    }

    @Test
    void everyCorruptionGetsAClearErrorOrCorrectData() throws Exception {
        Path pristinePath = f.pool("pristine.pool", ITEMS);
        Path otherPath = f.pool("other.pool", ITEMS);
        byte[] pristine = Files.readAllBytes(pristinePath);
        byte[] otherHeader = Arrays.copyOf(Files.readAllBytes(otherPath), PoolHeader.REGION_BYTES);
        List<Item> items = new ArrayList<>();
        List<long[]> levels = new ArrayList<>();
        List<long[]> chunks = new ArrayList<>();
        int slotSize;
        int valueSize;
        try (PoolInspector in = PoolInspector.open(pristinePath)) {
            TableLayout t = in.layout();
            slotSize = in.geometry().slotSize();
            valueSize = in.geometry().valueSize();
            MemorySegment s = in.segment();
            for (int d = 0; d < t.levelCount(); d++) {
                long slots = t.bucketsAtDepth(d) * in.geometry().slotsPerBucket();
                levels.add(new long[] {t.levelOffset(d), slots * slotSize});
                for (long i = 0; i < slots; i++) {
                    long slot = t.levelOffset(d) + i * slotSize;
                    long meta = s.get(ValueLayout.JAVA_LONG, slot);
                    if (SlotMeta.isItem(meta)) {
                        items.add(new Item(s.get(ValueLayout.JAVA_LONG_UNALIGNED, slot + 8), slot, SlotMeta.valueOffset(meta)));
                    }
                }
            }
            for (HeapChunk c : in.header().heapChunks()) {
                chunks.add(new long[] {c.offset(), c.length()});
            }
        }
        assertTrue(items.size() == ITEMS, "pristine pool holds " + items.size());
        Map<Kind, int[]> verdicts = new HashMap<>();
        int[] defaultVerdicts = new int[3];
        Random random = new Random(20261123);
        Path p = f.dir.resolve("case.pool");
        for (int c = 0; c < CASES; c++) {
            Kind kind = Kind.values()[c % Kind.values().length];
            Case k = corrupt(kind, pristine.clone(), otherHeader, levels, chunks, slotSize, random);
            Files.deleteIfExists(p);
            Files.write(p, k.bytes());
            Files.setPosixFilePermissions(p, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
            String label = "case " + c + " (" + k.what() + ")";
            boolean refusedAsDamaged = false;
            byte[] before = Files.readAllBytes(p);
            // A scanning open (as after a crash): the default open of a cleanly closed pool reads no slot.
            try (GPHashIndex index = GPHashIndex.builder(p).verifyOnOpen(true).open()) {
                for (Item it : items) {
                    if (k.touches(it.slot(), slotSize) || k.touches(it.value(), valueSize)) {
                        continue;
                    }
                    byte[] got = index.get(it.key());
                    assertNotNull(got, label + ": untouched key " + it.key() + " is gone");
                    assertArrayEquals(ToolFixture.value(it.key()), got, label + ": untouched key " + it.key() + " changed");
                }
                verdicts.computeIfAbsent(kind, x -> new int[2])[0]++;
            } catch (PoolFormatException | PoolIoException e) {
                assertNotNull(e.getMessage(), label);
                assertTrue(e.getMessage().contains(p.toString()), label + ": the error does not name the pool: " + e);
                assertArrayEquals(before, Files.readAllBytes(p), label + ": a refused open wrote to the pool: " + e);
                refusedAsDamaged = e instanceof PoolFormatException pf
                        && (pf.reason() == PoolFormatException.Reason.DAMAGE_BEYOND_CRASH
                        || pf.reason() == PoolFormatException.Reason.CORRUPT);
                verdicts.computeIfAbsent(kind, x -> new int[2])[1]++;
            } catch (AssertionError e) {
                throw e;
            } catch (Throwable e) {
                fail(label + ": not a clear error: " + e, e);
            }
            defaultOpen(p, k, items, slotSize, valueSize, label, defaultVerdicts);
            byte[] opened = Files.readAllBytes(p);
            ToolFixture.Run check = ToolFixture.tool("check", p.toString());
            assertTrue(check.code() >= 0 && check.code() <= 2, label + ": check exit " + check.code() + ": " + check.all());
            assertArrayEquals(opened, Files.readAllBytes(p), label + ": check wrote to the pool");
            if (refusedAsDamaged) {
                assertNotEquals(0, check.code(), label + ": open refused the pool as damaged, check called it sound: "
                        + check.out());
            }
        }
        verdicts.forEach((k, v) -> System.out.println("fuzz: " + k + " opened " + v[0] + ", refused " + v[1]));
        System.out.println("fuzz, default open: served right " + defaultVerdicts[0] + ", refused at open "
                + defaultVerdicts[1] + ", refused by an operation " + defaultVerdicts[2]);
        // Each kind must have done what it says: refused where a pool cannot be trusted, opened where
        // the damage is harmless (one header copy), or the generator is broken.
        for (Kind k : new Kind[] {Kind.FOREIGN_HEADER, Kind.SLOT_BIT, Kind.EXTENT_TAG_BIT, Kind.TRUNCATE}) {
            assertTrue(verdicts.get(k)[1] > 0, k + " was never refused: " + Arrays.toString(verdicts.get(k)));
        }
        assertTrue(verdicts.get(Kind.HEADER_BIT)[0] > 0, "a bit flip in one header copy never opened");
    }

    /**
     * The same case through the default open (a clean close record is trusted, no scan): a clear
     * error at open or from an operation, or every untouched key right; never a raw exception. Runs
     * on a copy, so the scanning open and {@code check} above see the case as it was made.
     */
    private void defaultOpen(Path p, Case k, List<Item> items, int slotSize, int valueSize, String label, int[] verdicts)
            throws Exception {
        Path copy = f.dir.resolve("case-default.pool");
        Files.deleteIfExists(copy);
        Files.write(copy, k.bytes());
        Files.setPosixFilePermissions(copy, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        GPHashIndex index;
        try {
            index = GPHashIndex.builder(copy).open();
        } catch (org.gphash.error.GPHashException e) {
            assertTrue(e.getMessage() != null && e.getMessage().contains(copy.toString()),
                    label + ", default open: the error does not name the pool: " + e);
            verdicts[1]++;
            return;
        } catch (Throwable e) {
            throw new AssertionError(label + ", default open: not a clear error: " + e, e);
        }
        boolean refused = false;
        try (index) {
            for (Item it : items) {
                byte[] got;
                try {
                    got = index.get(it.key());
                } catch (org.gphash.error.GPHashException e) {
                    refused = true;
                    continue;
                }
                if (k.touches(it.slot(), slotSize) || k.touches(it.value(), valueSize)) {
                    continue;
                }
                assertNotNull(got, label + ", default open: untouched key " + it.key() + " is gone; " + index.lastRecovery());
                assertArrayEquals(ToolFixture.value(it.key()), got, label + ", default open: untouched key " + it.key()
                        + " changed");
            }
        } catch (org.gphash.error.GPHashException e) {
            refused = true;  // close found the pool changed under it
        } catch (AssertionError e) {
            throw e;
        } catch (Throwable e) {
            throw new AssertionError(label + ", default open: not a clear error: " + e, e);
        }
        verdicts[refused ? 2 : 0]++;
    }

    private static Case corrupt(Kind kind, byte[] b, byte[] otherHeader, List<long[]> levels, List<long[]> chunks,
                                int slotSize, Random r) {
        switch (kind) {
            case HEADER_BIT -> {
                int off = r.nextInt(PoolHeader.REGION_BYTES);
                int bit = r.nextInt(8);
                b[off] ^= (byte) (1 << bit);
                return new Case(b, -1, -1, "header byte " + off + " bit " + bit);
            }
            case HEADER_FIELD_VALID_CRC -> {
                int field = r.nextInt(256 + 16 * 4);  // the fields, level table and the first chunk entries
                int bit = r.nextInt(8);
                boolean both = r.nextBoolean();
                for (int copy = 0; copy < (both ? 2 : 1); copy++) {
                    int base = copy * PoolHeader.COPY_BYTES;
                    b[base + field] ^= (byte) (1 << bit);
                    fixCrc(b, base);
                }
                return new Case(b, -1, -1, "header byte " + field + " bit " + bit + (both ? " in both copies" : " in copy A")
                        + ", checksum fixed");
            }
            case FOREIGN_HEADER -> {
                System.arraycopy(otherHeader, 0, b, 0, PoolHeader.REGION_BYTES);
                return new Case(b, -1, -1, "another pool's header");
            }
            case SLOT_BIT -> {
                long[] level = levels.get(r.nextInt(levels.size()));
                long slot = level[0] + (long) r.nextInt((int) (level[1] / slotSize)) * slotSize;
                int byteInSlot = r.nextInt(slotSize);
                int bit = r.nextInt(8);
                b[(int) (slot + byteInSlot)] ^= (byte) (1 << bit);
                return new Case(b, slot, slot + slotSize, "slot " + slot + " byte " + byteInSlot + " bit " + bit);
            }
            case EXTENT_TAG_BIT -> {
                List<long[]> all = new ArrayList<>(levels);
                all.addAll(chunks);
                long[] e = all.get(r.nextInt(all.size()));
                int off = (int) (e[0] - 64 + r.nextInt(36));
                b[off] ^= (byte) (1 << r.nextInt(8));
                return new Case(b, -1, -1, "the tag of the extent at " + e[0] + ", byte " + off);
            }
            case HEAP_BIT -> {
                long[] chunk = chunks.get(r.nextInt(chunks.size()));
                long off = chunk[0] + (long) (r.nextDouble() * chunk[1]);
                b[(int) off] ^= (byte) (1 << r.nextInt(8));
                return new Case(b, off, off + 1, "heap byte " + off);
            }
            case ZERO_PAGE -> {
                int page = r.nextInt(b.length / 4096);
                Arrays.fill(b, page * 4096, Math.min(b.length, page * 4096 + 4096), (byte) 0);
                return new Case(b, page * 4096L, page * 4096L + 4096, "page " + page + " zeroed");
            }
            case TRUNCATE -> {
                int to = r.nextInt(b.length);
                return new Case(Arrays.copyOf(b, to), to, Long.MAX_VALUE, "truncated to " + to + " bytes");
            }
            default -> throw new IllegalStateException(kind.name());
        }
    }

    private static void fixCrc(byte[] b, int base) {
        CRC32C crc = new CRC32C();
        crc.update(b, base, 1792);
        ByteBuffer.wrap(b, base + 1792, 4).order(ByteOrder.LITTLE_ENDIAN).putInt((int) crc.getValue());
    }
}
