package org.gphash.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

import org.gphash.Backend;
import org.gphash.BackendUnavailableException;
import org.gphash.GPHashIndex;
import org.junit.jupiter.api.Test;

/**
 * Pool format 3 on the GPU engine (issue 53, step 3a): pools whose values all have the value size run
 * on the kernels (the rest of the GPU tests run in format 3 with {@code -Dgphash.test.poolFormat=3},
 * {@link GpuTestSupport#POOL_FORMAT}); what the kernels do not run yet is refused before anything is
 * written, with a message naming the CPU backend: values whose blocks take runs of segments (a create
 * makes no file), and a pool holding values shorter than its value size, whether open finds them in the
 * close record's heap (any machine: the refusal comes before any GPU work) or by the recovery kernels'
 * scan after a crash (the GPU machine).
 */
class FormatThreeOnGpuTest {

    @Test
    void whatTheKernelsDoNotRunIsRefusedBeforeAnyWrite() throws IOException {
        try (GpuTestSupport t = GpuTestSupport.create()) {
            Path made = t.pool("f3-large");
            BackendUnavailableException c = assertThrows(BackendUnavailableException.class, () -> GpuEngines.create(
                    GPHashIndex.builder(made).backend(Backend.GPU).valueSize(16_000).poolFormat(3).config()));
            assertTrue(c.getMessage().contains("format 3") && c.getMessage().contains("CPU backend"), c.getMessage());
            assertFalse(Files.exists(made), "a refused create made a file");

            Path p = t.pool("f3-short");
            try (GPHashIndex ix = GPHashIndex.builder(p).backend(Backend.CPU).valueSize(64).poolFormat(3).create()) {
                ix.put(7L, new byte[64]);
                ix.put(8L, new byte[20]);
            }
            byte[] before = Files.readAllBytes(p);
            BackendUnavailableException o = assertThrows(BackendUnavailableException.class,
                    () -> GpuEngines.open(GPHashIndex.builder(p).backend(Backend.GPU).config()));
            assertTrue(o.getMessage().contains("shorter") && o.getMessage().contains("CPU backend"), o.getMessage());
            assertArrayEquals(before, Files.readAllBytes(p), "a refused open wrote to the pool");
            try (GPHashIndex ix = GPHashIndex.builder(p).backend(Backend.CPU).open()) {
                assertEquals(2, ix.size());
                assertEquals(20, ix.get(8L).length);
            }
        }
    }

    @Test
    void theRecoveryKernelsRefuseShorterValuesAfterACrash() throws IOException {
        GpuTestSupport.assumeGpu();
        try (GpuTestSupport t = GpuTestSupport.create()) {
            Path p = t.pool("f3-crashed");
            GPHashIndex ix = GPHashIndex.builder(p).backend(Backend.CPU).valueSize(64).poolFormat(3).create();
            ix.put(7L, new byte[64]);
            ix.put(8L, new byte[20]);
            ix.engine().abandon();  // no close record: the open scans with the recovery kernels
            byte[] before = Files.readAllBytes(p);
            BackendUnavailableException o = assertThrows(BackendUnavailableException.class,
                    () -> GpuEngines.open(GPHashIndex.builder(p).backend(Backend.GPU).config()));
            assertTrue(o.getMessage().contains("shorter"), o.getMessage());
            assertArrayEquals(before, Files.readAllBytes(p), "a refused open wrote to the pool");
        }
    }

    @Test
    void aFormatThreePoolOfOneValueSizeRunsOnTheGpuAndItsValuesAreFramed() {
        GpuTestSupport.assumeGpu();
        try (GpuTestSupport t = GpuTestSupport.create()) {
            Path p = t.pool("f3-gpu");
            try (GPHashIndex ix = GPHashIndex.builder(p).backend(Backend.GPU).valueSize(100).poolFormat(3)
                    .initialCapacity(256).create()) {
                assertFalse(ix.valueLengths(), "the GPU engine's values have the value size");
                for (long k = 0; k < 5_000; k++) {
                    ix.put(k, filled(k, 100));
                }
                for (long k = 0; k < 5_000; k += 3) {
                    ix.put(k, filled(k + 1, 100));  // updates free blocks on the GPU
                }
                for (long k = 1; k < 5_000; k += 3) {
                    ix.delete(k);
                }
            }
            try (GPHashIndex ix = GPHashIndex.builder(p).backend(Backend.CPU).open()) {
                assertTrue(ix.valueLengths());
                for (long k = 0; k < 5_000; k++) {
                    byte[] v = ix.get(k);
                    if (k % 3 == 1) {
                        assertEquals(null, v, "key " + k);
                    } else {
                        assertArrayEquals(filled(k % 3 == 0 ? k + 1 : k, 100), v, "key " + k + ": framed, its length 100");
                    }
                }
            }
        }
    }

    private static byte[] filled(long k, int n) {
        byte[] v = new byte[n];
        Arrays.fill(v, (byte) (k * 31 + 7));
        v[0] = (byte) k;
        v[n - 1] = (byte) (k >>> 8);
        return v;
    }
}
