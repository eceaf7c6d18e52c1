package org.gphash.index.api;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.Coalescing;
import org.gphash.Durability;
import org.gphash.GPHashConfig;
import org.gphash.GPHashIndex;
import org.gphash.Outcome;
import org.gphash.PoolFullException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 14, defects 4, 7, 11 and 13: capacities and batch sizes beyond what a pool or a batch can
 * hold get a clear error before anything is created; a create that fails leaves no file; a batch
 * that fills the pool says which of its operations ran; a full pool still takes updates.
 */
class LimitsTest {

    private final TestPools pools = TestPools.create();

    @AfterEach
    void cleanUp() {
        pools.close();
    }

    static byte[] value(long key, long version) {
        return ModelProperties.value(key, version, 128);
    }

    // ------------------------------------------------------------------ defect 4

    @Test
    void anImpossibleCapacityIsRefusedAtOnceAndCreatesNothing() {
        Path p = pools.pool("huge.pool");
        IllegalArgumentException e = assertTimeoutPreemptively(Duration.ofSeconds(10), () -> assertThrows(
                IllegalArgumentException.class,
                () -> GPHashIndex.builder(p).initialCapacity(Long.MAX_VALUE).maxPoolBytes(1L << 30).create()));
        assertTrue(e.getMessage().contains("more than a pool can hold"), e.getMessage());
        assertFalse(Files.exists(p), "nothing may be created");
        IllegalArgumentException e62 = assertThrows(IllegalArgumentException.class,
                () -> GPHashIndex.builder(p).initialCapacity(1L << 62).create());
        assertTrue(e62.getMessage().contains("initialCapacity " + (1L << 62)), e62.getMessage());
        assertFalse(Files.exists(p), "nothing may be created");
        IllegalArgumentException big = assertThrows(IllegalArgumentException.class,
                () -> GPHashIndex.builder(p).valueSize(1 << 20).initialCapacity(1L << 32).create());
        assertTrue(big.getMessage().contains("can address"), big.getMessage());
        assertFalse(Files.exists(p));
    }

    @Test
    void aCapacityBeyondMaxPoolBytesIsRefusedBeforeTheFileExists() {
        Path p = pools.pool("small-max.pool");
        PoolFullException e = assertThrows(PoolFullException.class,
                () -> GPHashIndex.builder(p).initialCapacity(10_000_000).maxPoolBytes(1 << 20).create());
        assertTrue(e.getMessage().contains("nothing was created"), e.getMessage());
        assertFalse(Files.exists(p));
    }

    // ------------------------------------------------------------------ defect 11

    /** A create that runs out of space (here a file-size limit in a child JVM) removes its file. */
    @Test
    void aCreateThatRunsOutOfSpaceLeavesNoFile() throws Exception {
        Path p = pools.pool("no-space.pool");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String cmd = "ulimit -f 2048 && exec '" + java + "' --enable-native-access=ALL-UNNAMED -Xmx128m -cp '"
                + System.getProperty("java.class.path") + "' " + CreatePoolInChild.class.getName() + " '" + p + "' 4000000";
        Process proc = new ProcessBuilder("bash", "-c", cmd).redirectErrorStream(true).start();
        String out = new String(proc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(proc.waitFor(60, TimeUnit.SECONDS), "child did not finish");
        assertTrue(out.contains("FAILED org.gphash.error.PoolSpaceException"), out);
        assertTrue(out.contains("LEFT false"), "the failed create left its file behind: " + out);
        assertFalse(Files.exists(p));
        try (var left = Files.list(pools.dir())) {
            assertEquals(List.of(), left.filter(f -> f.getFileName().toString().contains("no-space")).toList(),
                    "nor its working file");
        }
    }

    /** Any failure after the file exists (here a crash hook that throws) removes it too. */
    @Test
    void aBuilderFromAConfigurationMakesThatConfigurationAgain() {
        Path p = pools.pool("from.pool");
        GPHashConfig c = GPHashIndex.builder(p).keySize(16).valueSize(40).levels(3).hashes(2).slotsPerBucket(4)
                .initialCapacity(5000).maxPoolBytes(1L << 30).seed(7).itemChecksums(true).verifyOnOpen(true)
                .durability(Durability.ON_CLOSE_OR_SYNC).coalescing(Coalescing.OFF).followSymlinks(true)
                .repairBeyondCrash(true).jdkPersistence(true).config();
        assertEquals(c, GPHashIndex.from(c).config());
        org.gphash.spi.CrashHook hook = point -> { };
        assertEquals(c.withCrashHook(hook), GPHashIndex.from(c.withCrashHook(hook)).config());
    }

    @Test
    void aCreateThatFailsAfterTheFileExistsRemovesIt() {
        Path p = pools.pool("hook.pool");
        RuntimeException boom = new IllegalStateException("stop");
        assertThrows(IllegalStateException.class, () -> GPHashIndex.from(GPHashIndex.builder(p).config()
                .withCrashHook(point -> {
                    throw boom;
                })).create());
        assertFalse(Files.exists(p), "the failed create left its file behind");
    }

    // ------------------------------------------------------------------ defect 13

    @Test
    void batchesBeyondTheirLimitAreRefusedWithTheLimit() {
        Path p = pools.pool("batch.pool");
        try (GPHashIndex index = GPHashIndex.builder(p).initialCapacity(16).create()) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> index.newBatch(1 << 28));
            assertTrue(e.getMessage().contains("at most " + Batch.maxOperations(8, 128)), e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> new BatchResult(128, 1 << 28));
            assertThrows(IllegalArgumentException.class, () -> index.newBatch(-1));
        }
        assertEquals(Batch.MAX_OPERATIONS, Batch.maxOperations(8, 16));
        assertEquals(1, Batch.maxOperations(8, 1 << 30));
        assertEquals((Integer.MAX_VALUE - 16) / (1 << 20), Batch.maxOperations(8, 1 << 20));
        // Growing a batch past its limit fails the same way (not tested here: it takes 2 GiB of heap).
    }

    // ------------------------------------------------------------------ defect 7

    /** A pool at maxPoolBytes for new items. */
    private GPHashIndex fullPool(Path p, List<Long> inserted) {
        long initial;
        Path probe = pools.pool("probe-" + p.getFileName());
        try (GPHashIndex index = GPHashIndex.builder(probe).initialCapacity(16).create()) {
            initial = index.stats().fileBytes();
        }
        GPHashIndex index = GPHashIndex.builder(p).initialCapacity(16).maxPoolBytes(initial + 64 * 1024).create();
        for (long k = 0; ; k++) {
            try {
                index.insert(k, value(k, 0));
                inserted.add(k);
            } catch (PoolFullException e) {
                return index;
            }
        }
    }

    @Test
    void aFullPoolStillTakesUpdates() {
        List<Long> keys = new ArrayList<>();
        try (GPHashIndex index = fullPool(pools.pool("updates.pool"), keys)) {
            assertTrue(keys.size() > 100, "pool filled at " + keys.size());
            for (int round = 1; round <= 3; round++) {
                for (long k : keys) {
                    assertTrue(index.update(k, value(k, round)), "update of key " + k + " in round " + round);
                }
                int r = round;
                keys.forEach(k -> assertArrayEquals(value(k, r), index.get(k)));
                // Puts of existing keys are updates too; new keys are still refused.
                long first = keys.get(0);
                assertFalse(index.put(first, value(first, r)));
                long next = keys.size() + 1_000_000L;
                assertThrows(PoolFullException.class, () -> index.insert(next, value(next, 0)));
            }
        }
    }

    @Test
    void aBatchThatFillsThePoolSaysWhichOperationsRan() {
        List<Long> keys = new ArrayList<>();
        Path p = pools.pool("batch-full.pool");
        int applied;
        try (GPHashIndex index = fullPool(p, keys)) {
            // Free room for a few items, then try many in one batch.
            for (int i = 0; i < 200; i++) {
                assertTrue(index.delete(keys.remove(keys.size() - 1)));
            }
            Batch batch = index.newBatch(5000);
            for (long k = 0; k < 5000; k++) {
                batch.insert(10_000_000L + k, value(10_000_000L + k, 0));
            }
            PoolFullException e = assertThrows(PoolFullException.class, () -> index.execute(batch));
            BatchResult r = e.batchResult();
            assertNotNull(r, "the exception must carry the batch's outcomes");
            assertEquals(5000, r.size());
            applied = 0;
            while (applied < r.size() && r.outcome(applied) == Outcome.INSERTED) {
                applied++;
            }
            assertTrue(applied >= 100 && applied < 5000, "applied " + applied);
            for (int i = applied; i < r.size(); i++) {
                assertEquals(Outcome.NOT_APPLIED, r.outcome(i), "operation " + i);
            }
            assertTrue(e.getMessage().contains("stopped at operation " + applied), e.getMessage());
            for (int i = 0; i < 5000; i++) {
                byte[] got = index.get(10_000_000L + i);
                if (i < applied) {
                    assertArrayEquals(value(10_000_000L + i, 0), got, "applied operation " + i);
                } else {
                    assertNull(got, "operation " + i + " was reported NOT_APPLIED");
                }
            }
            assertEquals(keys.size() + applied, index.stats().size());
        }
        try (GPHashIndex index = GPHashIndex.builder(p).open()) {
            assertEquals(keys.size() + applied, index.stats().size());
        }
    }
}
