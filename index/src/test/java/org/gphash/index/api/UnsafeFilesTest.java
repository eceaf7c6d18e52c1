package org.gphash.index.api;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import org.gphash.GPHashIndex;
import org.gphash.error.PoolIoException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 27, items 5 and 10: what open does with a path that is not a pool file, and a geometry that
 * would grow the file far beyond its items.
 */
class UnsafeFilesTest {

    private final TestPools pools = TestPools.create();

    @AfterEach
    void cleanUp() {
        pools.close();
    }

    /** Before, a FIFO at the pool's path made open, openOrCreate and check wait forever for a writer. */
    @Test
    void aFifoIsRefusedAtOnce() throws Exception {
        Path fifo = pools.pool("planted.pool");
        Process mk = new ProcessBuilder("mkfifo", "-m", "600", fifo.toString()).inheritIO().start();
        assumeTrue(mk.waitFor() == 0, "mkfifo is not available");
        for (String how : new String[] {"open", "openOrCreate"}) {
            PoolIoException e = assertTimeoutPreemptively(Duration.ofSeconds(10), () -> assertThrows(PoolIoException.class,
                    () -> (how.equals("open") ? GPHashIndex.builder(fifo).open() : GPHashIndex.builder(fifo).openOrCreate())
                            .close()), how + " waited on the FIFO");
            assertTrue(e.getMessage().contains("FIFO") && e.getMessage().contains(fifo.toString()), e.getMessage());
        }
        assertTrue(Files.exists(fifo));
    }

    @Test
    void aSingleCandidateSlotPerKeyIsRefused() {
        Path p = pools.pool("tiny.pool");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> GPHashIndex.builder(p).levels(1).hashes(1).slotsPerBucket(1).create());
        assertTrue(e.getMessage().contains("single candidate slot"), e.getMessage());
        assertFalse(Files.exists(p), "a refused create left a file");
    }
}
