package org.gphash.cuda.routing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.gphash.IndexMirror;
import org.gphash.cuda.pipeline.PipelineBuffers;
import org.gphash.cuda.pipeline.RadixSort;
import org.junit.jupiter.api.Test;

/** The host-side decisions of the v2 path, without a GPU (CI): mode choice, capacity classes, sort passes. */
class MirrorChoiceTest {

    private static final long MIB = 1L << 20;

    @Test
    void theMirrorRunsWhenItFitsWithTheMargin() {
        MirrorChoice c = MirrorChoice.decide(IndexMirror.AUTO, 1000 * MIB, 1600 * MIB, 512 * MIB);
        assertTrue(c.mirror(), c.reason());
        MirrorChoice tight = MirrorChoice.decide(IndexMirror.AUTO, 1000 * MIB, 1400 * MIB, 512 * MIB);
        assertFalse(tight.mirror());
        assertTrue(tight.reason().contains("1000 MiB") && tight.reason().contains("1400 MiB free"), tight.reason());
    }

    @Test
    void offIsOffAndRequiredRefusesToFallBack() {
        MirrorChoice off = MirrorChoice.decide(IndexMirror.OFF, 1, Long.MAX_VALUE / 2, 0);
        assertFalse(off.mirror());
        assertTrue(off.reason().contains("IndexMirror.OFF"));
        assertTrue(MirrorChoice.decide(IndexMirror.REQUIRED, MIB, 2048 * MIB, 512 * MIB).mirror());
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> MirrorChoice.decide(IndexMirror.REQUIRED, 4096 * MIB, 2048 * MIB, 512 * MIB));
        assertTrue(e.getMessage().startsWith("IndexMirror.REQUIRED, but"), e.getMessage());
    }

    @Test
    void theSystemPropertyOverridesOnlyAuto() {
        String old = System.getProperty(MirrorChoice.PROPERTY);
        try {
            System.setProperty(MirrorChoice.PROPERTY, "off");
            assertEquals(IndexMirror.OFF, MirrorChoice.effective(IndexMirror.AUTO));
            assertEquals(IndexMirror.REQUIRED, MirrorChoice.effective(IndexMirror.REQUIRED));
            System.setProperty(MirrorChoice.PROPERTY, "sometimes");
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> MirrorChoice.effective(IndexMirror.AUTO));
            assertTrue(e.getMessage().contains("sometimes"), e.getMessage());
            System.clearProperty(MirrorChoice.PROPERTY);
            assertEquals(IndexMirror.AUTO, MirrorChoice.effective(IndexMirror.AUTO));
        } finally {
            if (old == null) {
                System.clearProperty(MirrorChoice.PROPERTY);
            } else {
                System.setProperty(MirrorChoice.PROPERTY, old);
            }
        }
    }

    @Test
    void capacityClassesAndSortPasses() {
        assertEquals(PipelineBuffers.MIN_CAPACITY, PipelineBuffers.capacityFor(1));
        assertEquals(1L << 20, PipelineBuffers.capacityFor((1 << 20) - 5));
        assertEquals(1L << 21, PipelineBuffers.capacityFor((1 << 20) + 1));
        // Group entries of a 2^20 class are below 2^21: three 8-bit passes; of the smallest class, two.
        assertEquals(3, RadixSort.passes(Long.numberOfTrailingZeros(2 * PipelineBuffers.capacityFor(1 << 20))));
        assertEquals(2, RadixSort.passes(Long.numberOfTrailingZeros(2 * PipelineBuffers.MIN_CAPACITY)));
        // A full slice of 128-byte values: its buffers fit well inside a GPU's memory.
        long bytes = PipelineBuffers.bytesFor(1L << 20, 128);
        assertTrue(bytes > 300 * MIB && bytes < 600 * MIB, bytes / MIB + " MiB");
    }
}
