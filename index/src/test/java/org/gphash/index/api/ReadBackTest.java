package org.gphash.index.api;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import org.gphash.Cursor;
import org.gphash.GPHashIndex;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 13, reading the data back through the API: a cursor and forEach over live entries
 * (weakly consistent under writers and resizes), size(), containsKey for every key type, and a
 * snapshot of an open, writable pool.
 */
class ReadBackTest {

    private final TestPools pools = TestPools.create();

    @AfterEach
    void cleanUp() {
        pools.close();
    }

    static byte[] value(long k, long v) {
        return ModelProperties.value(k, v, 64);
    }

    private GPHashIndex pool(String name, int items) {
        GPHashIndex index = GPHashIndex.builder(pools.pool(name)).valueSize(64).initialCapacity(16).create();
        for (long k = 0; k < items; k++) {
            index.put(k, value(k, 1));
        }
        return index;
    }

    @Test
    void theCursorReturnsEveryEntryOnce() {
        try (GPHashIndex index = pool("a.pool", 20_000)) {
            for (long k = 0; k < 20_000; k += 3) {
                index.delete(k);
            }
            Map<Long, byte[]> seen = new HashMap<>();
            try (Cursor c = index.cursor()) {
                while (c.next()) {
                    assertEquals(null, seen.put(c.longKey(), c.value()), "key " + c.longKey() + " twice");
                    assertArrayEquals(c.key(), c.keySegment().toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
                }
                assertFalse(c.next(), "a finished cursor stays finished");
            }
            assertEquals(index.size(), seen.size());
            for (long k = 0; k < 20_000; k++) {
                if (k % 3 == 0) {
                    assertFalse(seen.containsKey(k));
                    assertFalse(index.containsKey(k));
                } else {
                    assertArrayEquals(value(k, 1), seen.get(k), "key " + k);
                    assertTrue(index.containsKey(k));
                    assertTrue(index.containsKey(TestPools.longKey(k)));
                    assertTrue(index.containsKey(MemorySegment.ofArray(TestPools.longKey(k))));
                }
            }
            int[] n = {0};
            index.forEach((k, v) -> n[0]++);
            assertEquals(seen.size(), n[0]);
        }
    }

    @Test
    void anEmptyPoolHasNoEntries() {
        try (GPHashIndex index = pool("empty.pool", 0); Cursor c = index.cursor()) {
            assertFalse(c.next());
            assertEquals(0, index.size());
        }
    }

    /**
     * Weak consistency under a writer that inserts (forcing resizes) and deletes while the cursor
     * walks: every key present for the whole walk is returned; nothing is returned that was never
     * written; no exception.
     */
    @Test
    void aCursorSurvivesResizesAndWriters() throws Exception {
        try (GPHashIndex index = pool("busy.pool", 5_000)) {
            long resizesBefore = index.stats().resizes();
            AtomicBoolean stop = new AtomicBoolean();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Thread writer = new Thread(() -> {
                try {
                    for (long k = 100_000; !stop.get() && k < 400_000; k++) {
                        index.put(k, value(k, 2));
                        if (k % 2 == 0) {
                            index.delete(k - 1);
                        }
                    }
                } catch (Throwable t) {
                    failure.set(t);
                }
            });
            writer.start();
            Set<Long> seen = new HashSet<>();
            int walks = 0;
            while (walks < 20 || index.stats().resizes() == resizesBefore) {
                seen.clear();
                try (Cursor c = index.cursor()) {
                    while (c.next()) {
                        long k = c.longKey();
                        seen.add(k);
                        assertTrue(k < 5_000 || k >= 100_000, "a key never written: " + k);
                        assertArrayEquals(value(k, k < 5_000 ? 1 : 2), c.value(), "key " + k);
                    }
                }
                for (long k = 0; k < 5_000; k++) {
                    assertTrue(seen.contains(k), "walk " + walks + " missed key " + k + ", present throughout");
                }
                walks++;
                if (walks > 2_000) {
                    break;
                }
            }
            stop.set(true);
            writer.join();
            if (failure.get() != null) {
                throw new AssertionError(failure.get());
            }
            assertTrue(index.stats().resizes() > resizesBefore, "the writer never forced a resize during the walks");
        }
    }

    @Test
    void aSnapshotOfAnOpenPoolIsConsistentAndTheOriginalStaysWritable() throws Exception {
        Path copy = pools.pool("copy.pool");
        try (GPHashIndex index = pool("live.pool", 3_000)) {
            index.snapshot(copy);
            assertTrue(index.put(99_999L, value(99_999, 1)), "the original takes writes after the snapshot");
            assertThrows(org.gphash.error.PoolExistsException.class, () -> index.snapshot(copy));
        }
        assertEquals("rw-------", java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(copy)));
        try (GPHashIndex snap = GPHashIndex.builder(copy).open()) {
            assertEquals(3_000, snap.size());
            assertFalse(snap.containsKey(99_999L), "the snapshot is of the moment it was taken");
            for (long k = 0; k < 3_000; k++) {
                assertArrayEquals(value(k, 1), snap.get(k));
            }
            assertFalse(snap.lastRecovery().repairedAnything(), snap.lastRecovery().toString());
        }
    }
}
