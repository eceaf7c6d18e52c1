package org.gphash.persistence;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

import org.gphash.PersistenceMode;
import org.gphash.pmem.LibPmem;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Which persister a pool file gets, and that each one actually runs on a mapping. */
class PersistersTest {

    @TempDir
    Path diskDir;

    @Test
    void aPoolOnTmpfsNeedsNoFlushUnlessMsyncIsForced() throws IOException {
        Path shm = Path.of("/dev/shm");
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.isDirectory(shm) && "tmpfs".equals(Files.getFileStore(shm).type()),
                "no tmpfs at /dev/shm");
        Path dir = Files.createTempDirectory(shm, "gphash-persisters-");
        try {
            try (PoolFile file = PoolFile.create(dir.resolve("a.pool"), 1 << 16, false)) {
                file.publish();
                assertTrue(file.onTmpfs());
                assertEquals(PersistenceMode.MEMORY, file.persister().mode());
                file.persister().persist(file.segment(), 0, 64);
            }
            try (PoolFile file = PoolFile.open(dir.resolve("a.pool"), true)) {
                assertEquals(PersistenceMode.FORCE, file.persister().mode());
                file.segment().set(java.lang.foreign.ValueLayout.JAVA_LONG, 8, 42L);
                file.persister().persist(file.segment(), 8, 8);
            }
        } finally {
            try (Stream<Path> s = Files.walk(dir)) {
                s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    @Test
    void aPoolOnDiskUsesLibpmemWhenPresentAndForceOtherwise() throws IOException {
        org.junit.jupiter.api.Assumptions.assumeTrue(!"tmpfs".equals(Files.getFileStore(diskDir).type()), "temp dir is tmpfs");
        try (PoolFile file = PoolFile.create(diskDir.resolve("d.pool"), 1 << 16, false)) {
            file.publish();
            PersistenceMode expected = LibPmem.isAvailable() ? PersistenceMode.PMEM_MSYNC : PersistenceMode.FORCE;
            assertEquals(expected, file.persister().mode());
            file.segment().set(java.lang.foreign.ValueLayout.JAVA_LONG, 4096, 7L);
            file.persister().persist(file.segment(), 4096, 8);
        }
        try (PoolFile file = PoolFile.open(diskDir.resolve("d.pool"), false)) {
            assertEquals(7L, file.segment().get(java.lang.foreign.ValueLayout.JAVA_LONG, 4096));
        }
    }

    @Test
    void libpmemBindingsWorkWhenTheLibraryIsThereAndFailClearlyWhenNot() throws IOException {
        if (LibPmem.isAvailable()) {
            try (PoolFile file = PoolFile.create(diskDir.resolve("p.pool"), 1 << 16, true)) {
                file.publish();
                // A page-cache mapping is not persistent memory, and msync of it succeeds.
                assertEquals(0, LibPmem.pmem_is_pmem(file.segment(), file.segment().byteSize()));
                assertEquals(0, LibPmem.pmem_msync(file.segment(), 4096));
                assertTrue(LibPmem.pmem_check_version(1, 0).equals(java.lang.foreign.MemorySegment.NULL),
                        "libpmem 1.x satisfies version 1.0");
            }
        } else {
            IllegalStateException e = assertThrows(IllegalStateException.class,
                    () -> LibPmem.pmem_msync(java.lang.foreign.MemorySegment.NULL, 0));
            assertTrue(e.getMessage().contains(LibPmem.LIBRARY_NAME), e.getMessage());
        }
    }

    @Test
    void growingExtendsTheFileWithZerosAndRemaps() {
        try (PoolFile file = PoolFile.create(diskDir.resolve("g.pool"), 1 << 16, false)) {
            file.publish();
            file.segment().set(java.lang.foreign.ValueLayout.JAVA_LONG, 0, 99L);
            file.grow(1 << 20);
            assertEquals(1 << 20, file.fileSize());
            assertEquals(1 << 20, file.mappedSize());
            assertEquals(99L, file.segment().get(java.lang.foreign.ValueLayout.JAVA_LONG, 0));
            assertEquals(0L, file.segment().get(java.lang.foreign.ValueLayout.JAVA_LONG, (1 << 20) - 8));
        }
    }
}
