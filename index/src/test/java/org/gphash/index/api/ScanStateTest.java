package org.gphash.index.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;

import org.gphash.EntryChunk;
import org.gphash.GPHashConfig;
import org.gphash.GPHashIndex;
import org.gphash.index.CpuEngine;
import org.gphash.spi.ScanState;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The SPI's scan: a state comes from the engine that reads with it (the API package knows no engine's
 * scan type), reads every entry once, says when it is done, and one of another engine is refused.
 */
class ScanStateTest {

    private final TestPools pools = TestPools.create();

    @AfterEach
    void close() {
        pools.close();
    }

    @Test
    void anEnginesOwnStateReadsEveryEntryAndAnotherIsRefused() {
        GPHashConfig config = GPHashIndex.builder(pools.pool("scan.pool")).valueSize(16).initialCapacity(1024).config();
        try (CpuEngine engine = CpuEngine.create(config)) {
            for (long k = 0; k < 1000; k++) {
                engine.put(MemorySegment.ofArray(TestPools.longKey(k)), MemorySegment.ofArray(new byte[16]));
            }
            ScanState state = engine.startScan();
            assertFalse(state.done());
            EntryChunk chunk = new EntryChunk(8, 16, 300);
            long read = 0;
            while (!state.done()) {
                engine.readEntries(state, chunk);
                read += chunk.size();
            }
            assertEquals(1000, read);
            ScanState foreign = () -> false;
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> engine.readEntries(foreign, chunk));
            assertTrue(e.getMessage().contains("another engine"), e.getMessage());
        }
    }
}
