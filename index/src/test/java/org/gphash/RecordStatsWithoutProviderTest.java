package org.gphash;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Without gphash-stats on the class path (as in this module's tests), {@code recordStats()} refuses
 * at once, naming the dependency to add, before anything is created. gphash-stats's own tests check
 * the recording.
 */
class RecordStatsWithoutProviderTest {

    @TempDir
    Path dir;

    @Test
    void recordStatsNamesTheMissingModule() {
        Path pool = dir.resolve("s.pool");
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> GPHashIndex.builder(pool).keySize(8).valueSize(16).recordStats().create());
        assertTrue(e.getMessage().contains("org.gphash:gphash-stats"), e.getMessage());
        assertFalse(Files.exists(pool), "nothing was created");
    }
}
