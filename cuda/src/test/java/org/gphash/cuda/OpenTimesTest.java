package org.gphash.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.gphash.Backend;
import org.gphash.GPHashConfig;
import org.gphash.IndexMirror;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A GPU engine's open, stage by stage ({@link GpuEngine#openTimes}): every stage measured, the parts
 * inside the pool's open within it, and the stages within the whole; a reopen's recovery is the one
 * its report gives.
 */
class OpenTimesTest {

    @BeforeEach
    void gpu() {
        GpuTestSupport.assumeGpu();
    }

    @Test
    void theStagesOfAnOpenAddUpToItsTotal() {
        try (GpuTestSupport t = GpuTestSupport.create()) {
            GPHashConfig config = GpuTestSupport.config(t.pool("open"), Backend.GPU, 8, 2, 2, 8, 1 << 16, 3)
                    .withIndexMirror(IndexMirror.REQUIRED);
            try (GpuEngine created = GpuEngines.create(config)) {
                check(created.diagnostics().openTimes(), "create");
            }
            try (GpuEngine opened = GpuEngines.open(config)) {
                OpenTimes o = opened.diagnostics().openTimes();
                check(o, "open");
                assertEquals(opened.stats().lastRecovery().duration().toNanos(), o.recovery(), "recovery, as its report says");
            }
        }
    }

    private static void check(OpenTimes o, String what) {
        assertTrue(o.register() > 0, what + ": the pool was registered: " + o);
        assertTrue(o.mirror() > 0, what + ": the mirror was loaded: " + o);
        assertTrue(o.register() + o.recovery() <= o.pool(), what + ": registration and recovery are inside the pool's open: " + o);
        assertTrue(o.mirror() <= o.path(), what + ": the mirror load is inside the batch path's set-up: " + o);
        assertTrue(o.runtime() >= 0 && o.cache() >= 0 && o.other() >= 0, what + ": " + o);
        assertTrue(o.toString().startsWith("open "), o.toString());
    }
}
