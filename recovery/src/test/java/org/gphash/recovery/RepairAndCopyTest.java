package org.gphash.recovery;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

import org.gphash.GPHashIndex;
import org.gphash.index.CpuEngine;
import org.gphash.spi.CrashHook;
import org.gphash.spi.CrashPoint;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@code recover}, {@code stats}, {@code dump}/{@code import} and {@code snapshot} on real pools. */
class RepairAndCopyTest {

    private final ToolFixture f = new ToolFixture();

    @AfterEach
    void cleanUp() {
        f.close();
    }

    /** Unwinds an operation at a crash point, like a crash would stop it there. */
    static final class Crash extends Error {
        private static final long serialVersionUID = 1L;

        Crash() {
            super("simulated crash", null, false, false);
        }
    }

    /** A pool whose last operation (an insert of key 999) stopped at {@code point}; never closed. */
    private Path crashedPool(CrashPoint point, int nth) {
        Path p = f.pool("crashed.pool", 300);
        int[] left = {nth};
        CrashHook hook = pt -> {
            if (pt == point && --left[0] == 0) {
                throw new Crash();
            }
        };
        CpuEngine engine = CpuEngine.open(GPHashIndex.builder(p).config().withCrashHook(hook));
        try {
            // Keys 1..300 exist (updates), 301..5000 do not (inserts, and resizes as the table fills).
            for (long i = 0; i < 1_000_000; i++) {
                long k = i % 2 == 0 ? 1 + i / 2 % 300 : 301 + i / 2;
                engine.put(key(k), MemorySegment.ofArray(ToolFixture.value(k)));
            }
            throw new AssertionError(point + " was never reached");
        } catch (Crash expected) {
            engine.abandon();
        }
        return p;
    }

    private static MemorySegment key(long k) {
        return MemorySegment.ofArray(new long[] {k});
    }

    @Test
    void recoverClearsAnInsertSlotAndIsIdempotent() {
        Path p = crashedPool(CrashPoint.INSERT_SLOT_CLAIMED, 1);
        ToolFixture.Run check = ToolFixture.tool("check", p.toString());
        assertEquals(1, check.code(), check.out());
        assertTrue(check.out().contains("PROBLEM INSERT_SLOT x1"), check.out());
        assertTrue(check.out().contains("note    NOT_CLEANLY_SHUT_DOWN"), check.out());

        ToolFixture.Run first = ToolFixture.tool("recover", p.toString());
        assertEquals(0, first.code(), first.all());
        assertTrue(first.out().contains("previous shutdown:        NOT clean"), first.out());
        assertTrue(first.out().contains("INSERT slots cleared:     1"), first.out());
        assertTrue(first.out().contains("recover: done, pool is sound"), first.out());
        assertEquals(0, ToolFixture.tool("check", p.toString()).code());

        ToolFixture.Run again = ToolFixture.tool("recover", "--json", p.toString());
        assertEquals(0, again.code(), again.all());
        assertTrue(again.out().contains("\"previousShutdownClean\":true"), again.out());
        assertTrue(again.out().contains("\"insertSlotsCleared\":0,\"tornSlotsCleared\":0,\"duplicatesRemoved\":0,"
                + "\"resizeResumed\":false"), again.out());
    }

    @Test
    void recoverFinishesAnInterruptedResizeEvenWhenItselfInterrupted() {
        Path p = crashedPool(CrashPoint.RESIZE_ITEM_COPIED, 3);
        ToolFixture.Run check = ToolFixture.tool("check", p.toString());
        assertEquals(1, check.code());
        assertTrue(check.out().contains("note    RESIZE_IN_PROGRESS"), check.out());
        assertTrue(check.out().contains("PROBLEM DUPLICATE_KEY"), check.out()); // the copied item is in two levels
        // Recovery itself crashes part-way through resuming the resize...
        CrashHook hook = pt -> {
            if (pt == CrashPoint.RESIZE_REHASHED) {
                throw new Crash();
            }
        };
        boolean crashed = false;
        try {
            CpuEngine.open(GPHashIndex.builder(p).config().withCrashHook(hook)).abandon();
        } catch (Crash expected) {
            crashed = true; // the engine never opened; open's error path closed the file
        }
        assertTrue(crashed, "recovery did not reach RESIZE_REHASHED");
        // ...and running the tool again completes it.
        ToolFixture.Run r = ToolFixture.tool("recover", p.toString());
        assertEquals(0, r.code(), r.all());
        assertTrue(r.out().contains("resize resumed:           yes"), r.out());
        assertEquals(0, ToolFixture.tool("check", p.toString()).code());
        try (GPHashIndex index = GPHashIndex.builder(p).open()) {
            for (long k = 1; k <= 300; k++) {
                assertArrayEquals(ToolFixture.value(k), index.get(k), "key " + k);
            }
        }
    }

    @Test
    void statsPrintsLevelsHistogramAndHeap() {
        Path p = f.pool("a.pool", 400);
        ToolFixture.Run r = ToolFixture.tool("stats", p.toString());
        assertEquals(0, r.code(), r.all());
        assertTrue(r.out().contains("size: 400 items"), r.out());
        assertTrue(r.out().contains("level depth 0:") && r.out().contains("level depth 1:"), r.out());
        assertTrue(r.out().contains("bucket occupancy"), r.out());
        assertTrue(r.out().contains("value heap:") && r.out().contains("400 used"), r.out());
        ToolFixture.Run json = ToolFixture.tool("stats", "--json", p.toString());
        assertTrue(json.out().contains("\"items\":400") && json.out().contains("\"bucketOccupancy\":["), json.out());
    }

    @Test
    void dumpAndImportCarryEveryItem() throws Exception {
        Path p = f.pool("a.pool", 3000);
        try (GPHashIndex index = GPHashIndex.builder(p).open()) {
            for (long k = 1; k <= 3000; k += 3) {
                index.delete(k);
            }
        }
        Path dump = f.dir.resolve("a.dump");
        ToolFixture.Run d = ToolFixture.tool("dump", p.toString(), dump.toString());
        assertEquals(0, d.code(), d.all());
        assertTrue(d.out().contains("dump: 2000 items"), d.out());
        Path copy = f.dir.resolve("b.pool");
        ToolFixture.Run i = ToolFixture.tool("import", dump.toString(), copy.toString());
        assertEquals(0, i.code(), i.all());
        assertTrue(i.out().contains("import: 2000 items"), i.out());
        assertEquals(0, ToolFixture.tool("check", copy.toString()).code());
        try (GPHashIndex index = GPHashIndex.builder(copy).open()) {
            assertEquals(2000, index.stats().size());
            assertEquals(ToolFixture.VALUE_SIZE, index.valueSize());
            for (long k = 1; k <= 3000; k++) {
                if (k % 3 == 1) {
                    assertNull(index.get(k));
                } else {
                    assertArrayEquals(ToolFixture.value(k), index.get(k), "key " + k);
                }
            }
        }
    }

    @Test
    void damagedOrTruncatedDumpIsRefusedAndLeavesNoPool() throws Exception {
        Path p = f.pool("a.pool", 100);
        Path dump = f.dir.resolve("a.dump");
        assertEquals(0, ToolFixture.tool("dump", p.toString(), dump.toString()).code());
        byte[] bytes = Files.readAllBytes(dump);
        Path truncated = f.dir.resolve("t.dump");
        Files.write(truncated, Arrays.copyOf(bytes, bytes.length - 100));
        Path target = f.dir.resolve("t.pool");
        ToolFixture.Run r = ToolFixture.tool("import", truncated.toString(), target.toString());
        assertEquals(1, r.code(), r.all());
        assertTrue(r.err().contains("truncated"), r.err());
        assertFalse(Files.exists(target));
        byte[] flipped = bytes.clone();
        flipped[200] ^= 1;
        Path damaged = f.dir.resolve("x.dump");
        Files.write(damaged, flipped);
        r = ToolFixture.tool("import", damaged.toString(), target.toString());
        assertEquals(1, r.code(), r.all());
        assertTrue(r.err().contains("checksum mismatch"), r.err());
        assertFalse(Files.exists(target));
        // Dump never overwrites.
        assertEquals(1, ToolFixture.tool("dump", p.toString(), dump.toString()).code());
    }

    @Test
    void snapshotIsAnOpenableCopy() {
        Path p = f.pool("a.pool", 700);
        Path snap = f.dir.resolve("snap.pool");
        ToolFixture.Run r = ToolFixture.tool("snapshot", p.toString(), snap.toString());
        assertEquals(0, r.code(), r.all());
        assertTrue(r.out().contains("fsynced"), r.out());
        assertEquals(0, ToolFixture.tool("check", snap.toString()).code());
        try (GPHashIndex index = GPHashIndex.builder(snap).open()) {
            for (long k = 1; k <= 700; k++) {
                assertArrayEquals(ToolFixture.value(k), index.get(k));
            }
        }
        ToolFixture.Run again = ToolFixture.tool("snapshot", p.toString(), snap.toString());
        assertEquals(1, again.code());
        assertTrue(again.err().contains("cannot snapshot to") && again.err().contains("it exists"), again.err());
    }

    @Test
    void snapshotOfACrashedPoolRecoversLikeTheOriginal() {
        Path p = crashedPool(CrashPoint.UPDATE_SWAPPED, 1);
        Path snap = f.dir.resolve("snap.pool");
        ToolFixture.Run r = ToolFixture.tool("snapshot", p.toString(), snap.toString());
        assertEquals(0, r.code(), r.all());
        assertTrue(r.out().contains("not cleanly shut down"), r.out());
        assertEquals(0, ToolFixture.tool("recover", snap.toString()).code());
    }
}
