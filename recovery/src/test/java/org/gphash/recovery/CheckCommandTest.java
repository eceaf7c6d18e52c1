package org.gphash.recovery;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.gphash.GPHashIndex;
import org.gphash.format.HeapChunk;
import org.gphash.format.SlotMeta;
import org.gphash.table.PoolInspector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code check} passes a sound pool, changes no byte of any pool it reads, and fails (exit 1,
 * naming the problem) on each kind of damage planted by hand.
 */
class CheckCommandTest {

    private final ToolFixture f = new ToolFixture();

    @AfterEach
    void cleanUp() {
        f.close();
    }

    @Test
    void soundPoolPasses() {
        Path p = f.pool("a.pool", 500);
        ToolFixture.Run r = ToolFixture.tool("check", p.toString());
        assertEquals(0, r.code(), r.all());
        assertTrue(r.out().contains("check: sound"), r.out());
        assertTrue(r.out().contains("items 500"), r.out());
    }

    @Test
    void readOnlyCommandsChangeNoByteOfThePool() throws Exception {
        Path p = f.pool("a.pool", 300);
        // Plant damage too: the read-only commands must leave even a broken pool exactly as it is.
        ToolFixture.Slot s = ToolFixture.items(p).get(3);
        ToolFixture.writeLong(p, s.offset(), SlotMeta.INSERT);
        Files.setLastModifiedTime(p, FileTime.fromMillis(1_000_000_000_000L));
        byte[] before = ToolFixture.bytes(p);
        assertEquals(1, ToolFixture.tool("check", p.toString()).code());
        assertEquals(1, ToolFixture.tool("check", "--json", p.toString()).code());
        assertEquals(0, ToolFixture.tool("stats", p.toString()).code());
        assertEquals(0, ToolFixture.tool("stats", "--json", p.toString()).code());
        // 1: the planted slot lies in a region changed since the clean close, and the item it replaced is lost.
        assertEquals(1, ToolFixture.tool("dump", p.toString(), f.dir.resolve("d").toString()).code());
        assertEquals(0, ToolFixture.tool("snapshot", p.toString(), f.dir.resolve("s.pool").toString()).code());
        assertArrayEquals(before, ToolFixture.bytes(p));
        assertEquals(1_000_000_000_000L, Files.getLastModifiedTime(p).toMillis());
    }

    @Test
    void insertSlotIsNamed() {
        Path p = f.pool("a.pool", 200);
        ToolFixture.writeLong(p, ToolFixture.items(p).get(5).offset(), SlotMeta.INSERT);
        expectProblem(p, Problem.INSERT_SLOT);
    }

    @Test
    void tornFingerprintIsNamed() {
        Path p = f.pool("a.pool", 200);
        ToolFixture.Slot s = ToolFixture.items(p).get(7);
        int fp = SlotMeta.fingerprint(s.meta()) ^ 0x1000;
        ToolFixture.writeLong(p, s.offset(), SlotMeta.make(Math.max(fp, 2), SlotMeta.valueOffset(s.meta())));
        expectProblem(p, Problem.TORN_FINGERPRINT);
    }

    @Test
    void sharedValueOffsetIsNamed() {
        Path p = f.pool("a.pool", 200);
        List<ToolFixture.Slot> items = ToolFixture.items(p);
        ToolFixture.Slot a = items.get(1);
        ToolFixture.Slot b = items.get(2);
        ToolFixture.writeLong(p, b.offset(), SlotMeta.make(SlotMeta.fingerprint(b.meta()), SlotMeta.valueOffset(a.meta())));
        expectProblem(p, Problem.SHARED_VALUE_BLOCK);
    }

    @Test
    void valueOffsetOutsideTheHeapIsNamed() {
        Path p = f.pool("a.pool", 200);
        ToolFixture.Slot s = ToolFixture.items(p).get(4);
        ToolFixture.writeLong(p, s.offset(), SlotMeta.make(SlotMeta.fingerprint(s.meta()), 64)); // inside the header
        expectProblem(p, Problem.BAD_VALUE_OFFSET);
        ToolFixture.writeLong(p, s.offset(), SlotMeta.make(SlotMeta.fingerprint(s.meta()), 1L << 40)); // past the end
        expectProblem(p, Problem.BAD_VALUE_OFFSET);
    }

    @Test
    void duplicateKeyIsNamed() {
        Path p = f.pool("a.pool", 100);
        List<ToolFixture.Slot> items = ToolFixture.items(p);
        ToolFixture.Slot a = items.get(0);
        long target = -1;
        long freeBlock;
        try (PoolInspector in = PoolInspector.open(p)) {
            MemorySegment key = MemorySegment.ofArray(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN)
                    .putLong(0, a.key()).array());
            long[] candidates = in.candidateSlots(key, 0);
            Set<Long> occupied = new HashSet<>();
            Set<Long> usedBlocks = new HashSet<>();
            for (ToolFixture.Slot s : items) {
                occupied.add(s.offset());
                usedBlocks.add(SlotMeta.valueOffset(s.meta()));
            }
            boolean afterA = false;
            for (long c : candidates) {
                if (c == a.offset()) {
                    afterA = true;
                } else if (afterA && !occupied.contains(c)) {
                    target = c;
                    break;
                }
            }
            HeapChunk chunk = in.header().heapChunks().get(0);
            long b = chunk.offset();
            while (usedBlocks.contains(b)) {
                b += in.geometry().valueStride();
            }
            freeBlock = b;
        }
        assertTrue(target > 0, "no empty candidate slot after the item");
        // A second copy of the key, later in candidate order, with a block of its own.
        ToolFixture.writeLong(p, target + SlotMeta.BYTES, a.key());
        ToolFixture.writeLong(p, target, SlotMeta.make(SlotMeta.fingerprint(a.meta()), freeBlock));
        ToolFixture.Run r = expectProblem(p, Problem.DUPLICATE_KEY);
        assertTrue(r.out().contains("valid item is at offset " + a.offset()), r.out());
    }

    @Test
    void badHeaderChecksumIsNamed() {
        Path p = f.pool("a.pool", 50);
        byte[] bytes = ToolFixture.bytes(p);
        ToolFixture.writeByte(p, 200, (byte) (bytes[200] ^ 0x5A)); // inside copy A, before its CRC
        ToolFixture.Run r = expectProblem(p, Problem.HEADER_COPY_DAMAGED);
        assertTrue(r.out().contains("copy A (offset 0): bad CRC32C checksum"), r.out());
        // Both copies damaged: no header at all.
        ToolFixture.writeByte(p, 2048 + 200, (byte) (bytes[2048 + 200] ^ 0x5A));
        r = expectProblem(p, Problem.UNREADABLE_HEADER);
        assertTrue(r.out().contains("CHECKSUM_MISMATCH"), r.out());
    }

    @Test
    void jsonNamesTheProblem() {
        Path p = f.pool("a.pool", 200);
        ToolFixture.writeLong(p, ToolFixture.items(p).get(5).offset(), SlotMeta.INSERT);
        ToolFixture.Run r = ToolFixture.tool("check", "--json", p.toString());
        assertEquals(1, r.code());
        assertTrue(r.out().startsWith("{\"pool\":"), r.out());
        assertTrue(r.out().contains("\"sound\":false"), r.out());
        assertTrue(r.out().contains("\"kind\":\"INSERT_SLOT\",\"problem\":true,\"count\":1"), r.out());
    }

    @Test
    void fileThatIsNotAPoolFails() throws Exception {
        Path p = f.dir.resolve("notes.txt");
        Files.writeString(p, "hello, this is not a pool at all; ".repeat(300));
        // Not a pool is "cannot check" (exit 2), not a verdict on a pool (issue 28: it exited 1 and
        // advised dump and import).
        ToolFixture.Run r = ToolFixture.tool("check", p.toString());
        assertEquals(2, r.code(), r.all());
        assertTrue(r.out().contains("NOT_A_POOL"), r.out());
    }

    @Test
    void missingFileIsAnErrorNamingThePath() {
        Path p = f.dir.resolve("nope.pool");
        ToolFixture.Run r = ToolFixture.tool("check", p.toString());
        assertEquals(2, r.code(), r.all());
        assertTrue(r.err().contains(p.toString()) && r.err().contains("no such file"), r.err());
    }

    @Test
    void poolOpenInAnEngineIsReportedAsLocked() {
        Path p = f.pool("a.pool", 10);
        try (GPHashIndex index = GPHashIndex.builder(p).open()) {
            for (String cmd : new String[] {"check", "stats", "recover"}) {
                ToolFixture.Run r = ToolFixture.tool(cmd, p.toString());
                assertEquals(2, r.code(), cmd + ": " + r.all());
                assertTrue(r.err().contains("already open") && r.err().contains("exclusively"), r.err());
            }
            assertEquals(10, index.stats().size());
        }
    }

    @Test
    void usageErrorsExitTwo() {
        assertEquals(2, ToolFixture.tool("check").code());
        assertEquals(2, ToolFixture.tool("frobnicate").code());
        assertEquals(0, ToolFixture.tool("check", "--help").code());
    }

    private static ToolFixture.Run expectProblem(Path p, Problem problem) {
        ToolFixture.Run r = ToolFixture.tool("check", p.toString());
        assertEquals(1, r.code(), r.all());
        assertTrue(r.out().contains("PROBLEM " + problem.name()), r.out());
        assertTrue(r.out().contains("check: NOT sound"), r.out());
        return r;
    }

    /** Issue 55, item 3: advice only where the advised command does what it says. */
    @Test
    void aTruncatedPoolIsNotAdvisedToBeDumped() throws Exception {
        Path p = f.pool("cut.pool", 300);
        byte[] all = Files.readAllBytes(p);
        Files.write(p, java.util.Arrays.copyOf(all, all.length - 3 * 4096));
        ToolFixture.Run check = ToolFixture.tool("check", p.toString());
        assertTrue(check.code() != 0, check.all());
        assertTrue(check.out().contains("restore the pool from a copy") && !check.out().contains("gphash dump"), check.out());
        assertTrue(ToolFixture.tool("dump", p.toString(), f.dir.resolve("cut.dump").toString()).code() != 0,
                "dump read a pool check says nothing can read");
    }
}
