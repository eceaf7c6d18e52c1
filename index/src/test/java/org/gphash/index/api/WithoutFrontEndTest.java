package org.gphash.index.api;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import org.gphash.Coalescing;
import org.gphash.GPHashIndex;
import org.gphash.OperationStats;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Without gphash-frontend on the class path (as in this module's tests): what needs it
 * ({@code recordStats()}, coalescing asked for with {@link Coalescing.Mode#ON}) is refused at once,
 * naming the dependency to add, before anything is created; coalescing left to
 * {@link Coalescing.Mode#AUTO} runs calls directly. gphash-frontend's own tests check what it does.
 */
class WithoutFrontEndTest {

    @TempDir
    Path dir;

    @Test
    void recordStatsNamesTheMissingModule() {
        Path pool = dir.resolve("s.pool");
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> GPHashIndex.builder(pool).keySize(8).valueSize(16).recordStats().create());
        assertTrue(e.getMessage().contains("org.gphash:gphash-frontend"), e.getMessage());
        assertFalse(Files.exists(pool), "nothing was created");
    }

    @Test
    void coalescingAskedForNamesTheMissingModule() {
        Path pool = dir.resolve("c.pool");
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> GPHashIndex.builder(pool).keySize(8).valueSize(16).coalescing(Coalescing.on(Duration.ZERO, 64))
                        .create());
        assertTrue(e.getMessage().contains("org.gphash:gphash-frontend"), e.getMessage());
        assertFalse(Files.exists(pool), "nothing was created");
    }

    @Test
    void coalescingLeftToAutoRunsCallsDirectly() {
        // ON_CLOSE_OR_SYNC on a disk-backed pool would not group-commit; PER_BATCH on this file system
        // might: either way AUTO without the front end must run every call, directly.
        try (GPHashIndex index = GPHashIndex.builder(dir.resolve("a.pool")).keySize(8).valueSize(16).create()) {
            byte[] v = new byte[16];
            v[0] = 7;
            assertTrue(index.put(1L, v));
            assertArrayEquals(v, index.get(1L));
            assertTrue(index.putAsync(2L, v).join());
            assertArrayEquals(v, index.getAsync(2L).join());
            assertTrue(index.coalescerStats().isEmpty(), "nothing coalesces without the front end");
            assertEquals(OperationStats.NONE, index.operationStats());
        }
    }
}
