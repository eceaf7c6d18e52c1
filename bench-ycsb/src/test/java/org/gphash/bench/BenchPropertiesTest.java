package org.gphash.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;

import org.gphash.Backend;
import org.gphash.index.api.TestPools;
import org.junit.jupiter.api.Test;

/**
 * The bench's own system properties: a value it does not know is refused, naming the property,
 * before a pool is created.
 */
class BenchPropertiesTest {

    @Test
    void anUnknownTimelineValueIsRefusedBeforeAnyPoolIsCreated() throws Exception {
        TestPools pools = TestPools.create();
        Path dir = pools.dir();
        String before = System.getProperty("gphash.bench.timeline");
        try {
            System.setProperty("gphash.bench.timeline", "yes");
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> new GPHashStore(new StoreConfig(dir, 8, 16, 1000, 1), Backend.CPU));
            assertTrue(e.getMessage().contains("gphash.bench.timeline must be on or off, got yes"), e.getMessage());
            try (var files = Files.list(dir)) {
                assertEquals(0, files.count(), "no pool file");
            }
            System.setProperty("gphash.bench.timeline", "on");  // on the CPU engine: nothing to time, no error
            new GPHashStore(new StoreConfig(dir, 8, 16, 1000, 1), Backend.CPU).close();
        } finally {
            if (before == null) {
                System.clearProperty("gphash.bench.timeline");
            } else {
                System.setProperty("gphash.bench.timeline", before);
            }
            pools.close();
        }
    }

    /** The coalescer's batches in flight: applied where the coalescer is on, refused by name where wrong. */
    @Test
    void theCoalescersBatchesInFlight() {
        assertEquals(2, GPHashStore.coalescing("auto", "2").batchesInFlight());
        assertEquals(2, GPHashStore.coalescing("on", " 2 ").batchesInFlight());
        assertEquals(org.gphash.Coalescing.AUTO, GPHashStore.coalescing("auto", null));
        assertEquals(org.gphash.Coalescing.OFF, GPHashStore.coalescing("off", "2"));
        for (String wrong : new String[] {"3", "two"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> GPHashStore.coalescing("auto", wrong));
            assertEquals("gphash.bench.coalescing.inFlight must be 1 or 2, got " + wrong, e.getMessage());
        }
    }
}
