package org.gphash.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.gphash.Backend;
import org.gphash.BackendUnavailableException;
import org.gphash.BatchResult;
import org.gphash.GPHashIndex;
import org.gphash.Outcome;
import org.gphash.cuda.runtime.CudaRuntime;
import org.gphash.cuda.runtime.GpuFailure;
import org.gphash.cuda.runtime.GpuUnavailable;
import org.gphash.cuda.runtime.KernelParams;
import org.junit.jupiter.api.Test;

/** What runs everywhere, CI included: the errors of the GPU backend, and the host/kernel contract. */
class GpuEngineWithoutGpuTest {

    @Test
    void noDriverGivesAClearErrorAndNoFile() {
        assumeFalse(CudaRuntime.available(), "a GPU is present: this test is for machines without one");
        try (GpuTestSupport t = GpuTestSupport.create()) {
            Path p = t.pool("p");
            BackendUnavailableException e = assertThrows(BackendUnavailableException.class,
                    () -> GPHashIndex.builder(p).backend(Backend.GPU).create());
            assertTrue(e.getMessage().contains("GPU backend cannot run here"), e.getMessage());
            assertFalse(e.getMessage().contains("\n"), "one line, the driver's details in the cause: " + e.getMessage());
            assertFalse(Files.exists(p), "nothing was created");
        }
    }

    /**
     * An open or create of a GPU index begins the driver's start first thing, beside the work that
     * needs no engine ({@code EngineFactory.prepare}); the start then ends in a driver started or in
     * its failure, which the open reports as before (the test above).
     */
    @Test
    void anOpenBeginsTheDriversStartFirstAndBesideItsWork() throws Exception {
        try (GpuTestSupport t = GpuTestSupport.create()) {
            Path p = t.pool("prepared");
            try {
                GPHashIndex.builder(p).backend(Backend.GPU).keySize(8).valueSize(16).initialCapacity(1000).create().close();
            } catch (BackendUnavailableException noGpu) {
                // where there is no driver: refused as before
            }
            assertTrue(CudaRuntime.driverStartBegunBeside(), "the create began the driver's start through the factory");
            // deviceCount waits for that start to end (it holds the class's lock while it runs).
            assertEquals(CudaRuntime.available(), CudaRuntime.deviceCount() > 0, "started where a GPU is, failed where none is");
        }
    }

    /**
     * A pool the CPU backend wrote, opened with the GPU backend where there is no driver: refused with
     * the same clear error, the pool byte for byte as it was. The pool's open runs on the host while the
     * CUDA runtime starts beside it, and waits for it before its first write (StartingTableKernels).
     */
    @Test
    void noDriverRefusesAnOpenAndWritesNothing() throws IOException {
        assumeFalse(CudaRuntime.available(), "a GPU is present: this test is for machines without one");
        try (GpuTestSupport t = GpuTestSupport.create()) {
            Path p = t.pool("cpu-written");
            try (GPHashIndex ix = GPHashIndex.builder(p).backend(Backend.CPU).keySize(8).valueSize(16).initialCapacity(1000)
                    .create()) {
                for (long k = 0; k < 100; k++) {
                    ix.put(k, new byte[16]);
                }
            }
            byte[] before = Files.readAllBytes(p);
            BackendUnavailableException e = assertThrows(BackendUnavailableException.class,
                    () -> GPHashIndex.builder(p).backend(Backend.GPU).keySize(8).valueSize(16).open());
            assertTrue(e.getMessage().contains("GPU backend cannot run here"), e.getMessage());
            assertTrue(Arrays.equals(before, Files.readAllBytes(p)), "a refused open wrote to the pool");
            try (GPHashIndex ix = GPHashIndex.builder(p).backend(Backend.CPU).keySize(8).valueSize(16).open()) {
                assertEquals(100, ix.size(), "the pool opens on the CPU backend as it was");
            }
        }
    }

    @Test
    void cudaFailuresReachCallersAsOneLineGpuExceptions() {
        jcuda.CudaException cuda = new jcuda.CudaException("CUDA_ERROR_OUT_OF_MEMORY\n\tat jcuda.driver.JCudaDriver.checkResult");
        org.gphash.GpuException e = GpuFailure.of(java.nio.file.Path.of("/dev/shm/x.pool"), "a batch of 8 operations", cuda);
        assertEquals("GPU engine on /dev/shm/x.pool: a batch of 8 operations failed: CUDA_ERROR_OUT_OF_MEMORY", e.getMessage());
        assertTrue(e instanceof org.gphash.error.GPHashException, "under the one exception root");
        assertTrue(e.getCause() == cuda);
        org.gphash.GpuException thrown = assertThrows(org.gphash.GpuException.class,
                () -> GpuFailure.during(java.nio.file.Path.of("/p"), "close", () -> {
                    throw cuda;
                }));
        assertTrue(thrown.getMessage().startsWith("GPU engine on /p: close failed"), thrown.getMessage());
    }

    @Test
    void unavailableMessagesAreOneLine() {
        String jcuda = "Error while loading native library \"JCudaDriver-12.6.0-linux-x86_64\"\nOperating system name: Linux\n"
                + "Stack trace from the attempt to load the library as a resource:\njava.lang.NullPointerException\n\tat ...";
        BackendUnavailableException e = GpuUnavailable.because("no CUDA driver could be loaded: " + jcuda, new LinkageError(jcuda));
        assertEquals("the GPU backend cannot run here: no CUDA driver could be loaded: Error while loading native library "
                + "\"JCudaDriver-12.6.0-linux-x86_64\"", e.getMessage());
        assertTrue(e.getCause().getMessage().contains("Stack trace"), "the details stay in the cause");
        assertEquals(300, GpuUnavailable.oneLine("x".repeat(1000)).length());
    }

    @Test
    void poolOnADiskFileSystemIsRefusedBeforeAnyWork() throws IOException {
        Path target = Files.createDirectories(Path.of("target").toAbsolutePath());
        Path dir = Files.createTempDirectory(target, "gpu-location-");
        String type = Files.getFileStore(dir).type();
        assumeTrue(!type.equals("tmpfs") && !type.equals("hugetlbfs"), "target/ is on " + type);
        Path p = dir.resolve("p.pool");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> GPHashIndex.builder(p).backend(Backend.GPU).create());
        assertTrue(e.getMessage().contains("is on " + type) && e.getMessage().contains("/dev/shm"), e.getMessage());
        assertFalse(Files.exists(p), "nothing was created");
        Files.delete(dir);
    }

    /** Item checksums are the CPU engine's alone: the GPU backend refuses to create such a pool, before anything. */
    @Test
    void theGpuBackendRefusesItemChecksums() {
        try (GpuTestSupport t = GpuTestSupport.create()) {
            Path p = t.pool("p");
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> GPHashIndex.builder(p).backend(Backend.GPU).itemChecksums(true).create());
            assertTrue(e.getMessage().contains("CPU engine only"), e.getMessage());
            assertFalse(Files.exists(p), "nothing was created");
        }
    }

    /**
     * Issue 14, defect 7: after a GPU batch failed part way, operations whose code is no outcome
     * (still waiting for a resize, or in a chunk that never ran) read NOT_APPLIED; outcomes stay.
     */
    @Test
    void aFailedGpuBatchMarksWhatDidNotRun() {
        BatchResult r = new BatchResult(8, 6);
        r.reset(6);
        byte[] codes = {Outcome.FOUND.code(), (byte) KernelParams.NEED_RESIZE_CODE, Outcome.INSERTED.code(), 0,
                (byte) (Outcome.UPDATED.code() | KernelParams.CONSUMED_FLAG), (byte) (KernelParams.NEED_RESIZE_CODE
                        | KernelParams.CONSUMED_FLAG)};
        for (int i = 0; i < codes.length; i++) {
            r.outcomeCodes().set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, codes[i]);
        }
        assertEquals(3, BatchFailures.markNotApplied(r));
        assertEquals(Outcome.FOUND, r.outcome(0));
        assertEquals(Outcome.NOT_APPLIED, r.outcome(1));
        assertEquals(Outcome.INSERTED, r.outcome(2));
        assertEquals(Outcome.NOT_APPLIED, r.outcome(3));
        assertEquals(Outcome.UPDATED, r.outcome(4));
        assertEquals(Outcome.NOT_APPLIED, r.outcome(5));
    }

    /** The Java packing of TableParams, BatchParams and ScanParams matches the CUDA structs field for field. */
    @Test
    void parameterStructsMatchTheKernelHeaders() throws IOException {
        // From the module (Maven) or from the repository root (the device machine's JUnit console).
        Path headers = Files.isDirectory(Path.of("src/main/cuda/gphash")) ? Path.of("src/main/cuda/gphash")
                : Path.of("cuda/src/main/cuda/gphash");
        assertEquals(KernelParams.TABLE_BYTES, structBytes(headers.resolve("core/table_params.cuh"), "TableParams"));
        assertEquals(KernelParams.BATCH_FIELDS * 8, structBytes(headers.resolve("core/table_params.cuh"), "BatchParams"));
        assertEquals(KernelParams.BATCH_FIELDS * 8,
                KernelParams.batch(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, true, new long[6]).length);
        assertEquals(KernelParams.SCAN_FIELDS * 8, structBytes(headers.resolve("pool/scan_params.cuh"), "ScanParams"));
        assertEquals(KernelParams.SCAN_FIELDS * 8, KernelParams.scan(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0).length);
        assertEquals(KernelParams.CACHE_FIELDS * 8, structBytes(headers.resolve("cache/cache_params.cuh"), "CacheParams"));
        assertEquals(KernelParams.CACHE_FIELDS * 8, KernelParams.cache(1, 2, 3, 4, 5, 6, 7, 8, 0, 9, 10, 11).length);
        assertEquals(KernelParams.CACHE_FIELDS * 8, KernelParams.noCache().length);
        assertEquals(KernelParams.LOAD_FIELDS * 8, structBytes(headers.resolve("cache/cache_load.cuh"), "LoadParams"));
        assertEquals(KernelParams.LOAD_FIELDS * 8, KernelParams.load(1, 2, 3, 4, 5, 6, 7, 8, true, 9, 10).length);
    }

    private static int structBytes(Path header, String name) throws IOException {
        String text = Files.readString(header, StandardCharsets.UTF_8);
        int start = text.indexOf("struct " + name + " {");
        assertTrue(start >= 0, name + " in " + header);
        String body = text.substring(start, text.indexOf("};", start));
        Matcher m = Pattern.compile("(?m)^\\s*u?int64_t\\s+\\w+(\\[(\\w+)\\])?;").matcher(body);
        List<String> fields = new ArrayList<>();
        int bytes = 0;
        while (m.find()) {
            fields.add(m.group());
            int count = 1;
            if (m.group(2) != null) {
                count = switch (m.group(2)) {
                    case "kMaxLevels" -> KernelParams.MAX_LEVELS;
                    case "kMaxHashes" -> KernelParams.MAX_HASHES;
                    default -> Integer.parseInt(m.group(2));
                };
            }
            bytes += 8 * count;
        }
        assertTrue(!fields.isEmpty(), name);
        return bytes;
    }
}
