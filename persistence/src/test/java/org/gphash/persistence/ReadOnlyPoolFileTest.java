package org.gphash.persistence;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;

import org.gphash.PersistenceMode;
import org.gphash.error.PoolIoException;
import org.gphash.error.PoolLockedException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The read-only open of offline tools, and the persister decorator hook of the crash harness. */
class ReadOnlyPoolFileTest {

    @TempDir
    Path dir;

    @Test
    void readOnlyOpenCannotWriteAndExcludesWriters() throws Exception {
        Path p = dir.resolve("a.pool");
        try (PoolFile w = PoolFile.create(p, 1 << 16, true)) {
            w.publish();
            w.segment().set(ValueLayout.JAVA_LONG, 0, 42);
            w.syncAll();
        }
        byte[] before = Files.readAllBytes(p);
        try (PoolFile r = PoolFile.openReadOnly(p)) {
            assertTrue(r.readOnly());
            assertEquals(42, r.segment().get(ValueLayout.JAVA_LONG, 0));
            assertTrue(r.segment().isReadOnly());
            assertThrows(IllegalArgumentException.class, () -> r.segment().set(ValueLayout.JAVA_LONG, 8, 1));
            assertThrows(PoolIoException.class, () -> r.persister().persist(r.segment(), 0, 8));
            assertThrows(PoolIoException.class, () -> r.grow(1 << 20));
            assertThrows(PoolIoException.class, () -> r.zeroRange(0, 8));
            // A writer (the engine) is refused while the tool reads, and so is a second reader here.
            assertThrows(PoolLockedException.class, () -> PoolFile.open(p, true));
            assertThrows(PoolLockedException.class, () -> PoolFile.openReadOnly(p));
        }
        assertArrayEquals(before, Files.readAllBytes(p));
        try (PoolFile w = PoolFile.open(p, true)) {
            // and a reader is refused while a writer has it
            assertThrows(PoolLockedException.class, () -> PoolFile.openReadOnly(p));
            assertTrue(!w.readOnly());
        }
    }

    @Test
    void missingFileAndDirectoryAreNamed() {
        PoolIoException e = assertThrows(PoolIoException.class, () -> PoolFile.openReadOnly(dir.resolve("none")));
        assertTrue(e.getMessage().contains("no such file"), e.getMessage());
        e = assertThrows(PoolIoException.class, () -> PoolFile.openReadOnly(dir));
        assertTrue(e.getMessage().contains("directory"), e.getMessage());
    }

    @Test
    void decoratorWrapsEveryNewWritableMapping() {
        int[] decorated = {0};
        int[] persisted = {0};
        PoolFile.decoratePersisters((path, mapping, chosen) -> {
            decorated[0]++;
            return new Persister() {
                @Override
                public void persist(MemorySegment m, long offset, long length) {
                    persisted[0]++;
                    chosen.persist(m, offset, length);
                }

                @Override
                public PersistenceMode mode() {
                    return chosen.mode();
                }
            };
        });
        try (PoolFile w = PoolFile.create(dir.resolve("b.pool"), 1 << 16, true)) {
            w.publish();
            w.persister().persist(w.segment(), 0, 8);
            w.grow(1 << 17);
            w.persister().persist(w.segment(), 1 << 16, 8);
        } finally {
            PoolFile.decoratePersisters(PersisterDecorator.NONE);
        }
        assertEquals(2, decorated[0]);
        assertEquals(2, persisted[0]);
    }
}
