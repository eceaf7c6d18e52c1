package org.gphash;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;

/** The GPU engine's tuning: its defaults, its checks, its one system property and the builder's use of it. */
@Isolated("sets a system property")
class GpuTuningTest {

    @Test
    void theDefaultsAreTheMeasuredOnes() {
        GpuTuning d = GpuTuning.DEFAULTS;
        assertEquals(4096, d.smallReadsMax());
        assertEquals(32, d.smallReadSlots());
        assertEquals(4096, d.smallWritesMax());
        assertEquals(32, d.distinctWritesMax());
        assertEquals(1024, d.oneBinMax());
        assertTrue(d.growHeapAhead());
        assertFalse(d.logBatches());
    }

    @Test
    void aSpecChangesOnlyWhatItNames() {
        GpuTuning t = GpuTuning.DEFAULTS.with(" smallReadsMax = 0, growHeapAhead=false ,logBatches=TRUE");
        assertEquals(new GpuTuning(0, 32, 4096, 32, 1024, false, true, 1 << 16), t);
        assertSame(GpuTuning.DEFAULTS, GpuTuning.DEFAULTS.with(null));
        assertSame(GpuTuning.DEFAULTS, GpuTuning.DEFAULTS.with("  "));
    }

    @Test
    void badSpecsAndValuesAreRefusedByName() {
        assertMessage("no tuning named 'smallReads' (smallReadsMax, smallReadSlots, smallWritesMax, distinctWritesMax, "
                + "oneBinMax, growHeapAhead, logBatches, hostBatchesMax)", () -> GpuTuning.DEFAULTS.with("smallReads=0"));
        assertMessage("'oneBinMax' is not name=value", () -> GpuTuning.DEFAULTS.with("oneBinMax"));
        assertMessage("oneBinMax=lots is not a whole number", () -> GpuTuning.DEFAULTS.with("oneBinMax=lots"));
        assertMessage("growHeapAhead=yes is neither true nor false", () -> GpuTuning.DEFAULTS.with("growHeapAhead=yes"));
        assertMessage("GpuTuning.smallWritesMax must be 0 to 4096, got 4097", () -> GpuTuning.DEFAULTS.with("smallWritesMax=4097"));
        assertMessage("GpuTuning.smallReadSlots must be 1 to 1024, got 0", () -> GpuTuning.DEFAULTS.with("smallReadSlots=0"));
        assertMessage("GpuTuning.smallReadsMax must be 0 to 65536, got -1", () -> GpuTuning.DEFAULTS.with("smallReadsMax=-1"));
        assertMessage("GpuTuning.hostBatchesMax must be 0 to 1048576, got -1", () -> GpuTuning.DEFAULTS.with("hostBatchesMax=-1"));
        assertEquals(0, GpuTuning.DEFAULTS.with("hostBatchesMax=0").hostBatchesMax());
    }

    @Test
    void theBuilderStartsFromTheSystemPropertyAndAnExplicitTuningWins() {
        String before = System.getProperty(GpuTuning.PROPERTY);
        try {
            System.setProperty(GpuTuning.PROPERTY, "oneBinMax=0");
            Path p = Path.of("unused.pool");
            assertEquals(0, GPHashIndex.builder(p).config().gpuTuning().oneBinMax());
            GpuTuning mine = GpuTuning.DEFAULTS.with("smallReadSlots=4");
            GPHashConfig c = GPHashIndex.builder(p).gpuTuning(mine).config();
            assertSame(mine, c.gpuTuning());
            assertSame(mine, GPHashIndex.from(c).config().gpuTuning(), "a builder from a configuration keeps its tuning");
            assertEquals(GpuTuning.DEFAULTS, c.withGpuTuning(GpuTuning.DEFAULTS).gpuTuning());
            System.setProperty(GpuTuning.PROPERTY, "oneBinMax=x");
            assertMessage("system property gphash.gpuTuning=oneBinMax=x: oneBinMax=x is not a whole number",
                    () -> GPHashIndex.builder(p).config());
        } finally {
            if (before == null) {
                System.clearProperty(GpuTuning.PROPERTY);
            } else {
                System.setProperty(GpuTuning.PROPERTY, before);
            }
        }
    }

    private static void assertMessage(String expected, org.junit.jupiter.api.function.Executable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertEquals(expected, e.getMessage());
    }
}
