package org.gphash.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import org.gphash.Backend;
import org.gphash.BackendUnavailableException;
import org.gphash.GPHashIndex;
import org.junit.jupiter.api.Test;

/**
 * The GPU engine refuses pool format 3 (issue 53: the kernels read format 2 only yet) before it writes
 * anything, with a message naming the CPU backend: a create makes no file, an open leaves the pool
 * byte for byte, and the pool still opens on the CPU backend. Runs with and without a GPU: the
 * refusal comes before any GPU work.
 */
class FormatThreeRefusedTest {

    @Test
    void theGpuEngineRefusesFormatThreeBeforeAnyWrite() throws IOException {
        try (GpuTestSupport t = GpuTestSupport.create()) {
            Path made = t.pool("f3-gpu");
            BackendUnavailableException c = assertThrows(BackendUnavailableException.class, () -> GpuEngines.create(
                    GPHashIndex.builder(made).backend(Backend.GPU).valueSize(64).poolFormat(3).config()));
            assertTrue(c.getMessage().contains("CPU backend"), c.getMessage());
            assertFalse(Files.exists(made), "a refused create made a file");

            Path p = t.pool("f3-cpu");
            try (GPHashIndex ix = GPHashIndex.builder(p).backend(Backend.CPU).valueSize(64).poolFormat(3).create()) {
                ix.put(7L, new byte[64]);
            }
            byte[] before = Files.readAllBytes(p);
            BackendUnavailableException o = assertThrows(BackendUnavailableException.class,
                    () -> GpuEngines.open(GPHashIndex.builder(p).backend(Backend.GPU).config()));
            assertTrue(o.getMessage().contains("format 3") && o.getMessage().contains("CPU backend"), o.getMessage());
            assertArrayEquals(before, Files.readAllBytes(p), "a refused open wrote to the pool");
            try (GPHashIndex ix = GPHashIndex.builder(p).backend(Backend.CPU).open()) {
                assertEquals(1, ix.size());
            }
        }
    }
}
