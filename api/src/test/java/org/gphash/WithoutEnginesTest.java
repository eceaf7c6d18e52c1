package org.gphash;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The API alone (this module's tests see no engine): an application that depends on gphash-api
 * without gphash-index is told which artifact to add, and nothing is created.
 */
class WithoutEnginesTest {

    @Test
    void withoutTheIndexModuleCreateNamesTheArtifactAndWritesNothing(@TempDir Path dir) {
        Path pool = dir.resolve("a.pool");
        BackendUnavailableException cpu = assertThrows(BackendUnavailableException.class,
                () -> GPHashIndex.builder(pool).create());
        assertTrue(cpu.getMessage().contains("org.gphash:gphash-index"), cpu.getMessage());
        assertFalse(Files.exists(pool), "a refused create wrote the pool");
        Path sharded = dir.resolve("sharded");
        BackendUnavailableException shards = assertThrows(BackendUnavailableException.class,
                () -> GPHashIndex.builder(sharded).shards(2).create());
        assertTrue(shards.getMessage().contains("org.gphash:gphash-index"), shards.getMessage());
        assertFalse(Files.exists(sharded), "a refused create made the directory");
    }
}
