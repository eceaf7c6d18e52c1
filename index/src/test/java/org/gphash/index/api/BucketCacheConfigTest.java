package org.gphash.index.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;

import org.gphash.Backend;
import org.gphash.GPHashConfig;
import org.gphash.GPHashIndex;
import org.gphash.bktcache.BktCacheConfig;
import org.gphash.bktcache.BktCacheStats;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** BktCache through the embedded API where there is no GPU engine: the CPU backend has no cache. */
class BucketCacheConfigTest {

    @TempDir
    Path dir;

    @Test
    void anEnabledCacheWithTheCpuBackendIsRefusedBeforeAnyFileIsCreated() {
        Path pool = dir.resolve("cpu.pool");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> GPHashIndex.builder(pool).bucketCache(BktCacheConfig.defaults()).create());
        assertTrue(e.getMessage().contains("needs the GPU backend"), e.getMessage());
        assertFalse(Files.exists(pool));
    }

    @Test
    void theCpuEngineReportsNoCacheAndCannotReloadOne() {
        try (GPHashIndex index = GPHashIndex.builder(dir.resolve("plain.pool")).bucketCache(BktCacheConfig.DISABLED)
                .create()) {
            index.put(1L, new byte[128]);
            assertEquals(BktCacheStats.disabled(), index.stats().bucketCache());
            assertFalse(index.reloadBucketCache(true));
            assertEquals(BktCacheConfig.DISABLED, index.config().bucketCache());
        }
    }

    @Test
    void theDefaultIsThePapersTwentyPercentLfu() {
        GPHashConfig c = GPHashIndex.builder(dir.resolve("d.pool")).backend(Backend.GPU).config();
        assertEquals(BktCacheConfig.defaults(), c.bucketCache());
        assertEquals(0.2, c.bucketCache().share());
    }
}
