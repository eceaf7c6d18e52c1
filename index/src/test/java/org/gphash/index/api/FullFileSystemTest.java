package org.gphash.index.api;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

import org.gphash.GPHashIndex;
import org.gphash.PoolFullException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 27, item 6: on a full file system a failed heap growth left the file extended (the disk
 * full) although {@link PoolFullException} said nothing was changed, and {@code close()} then threw
 * IndexOutOfBoundsException and left the pool unclean. Runs on a 6 MiB tmpfs it mounts (skipped
 * where this process may not mount one).
 */
class FullFileSystemTest {

    private Path mount;

    @BeforeEach
    void mountSmallTmpfs() throws Exception {
        mount = Files.createTempDirectory("gphash-full-fs-");
        Process p = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=6m,mode=0700", "tmpfs", mount.toString())
                .redirectErrorStream(true).start();
        boolean mounted = p.waitFor() == 0;
        if (!mounted) {
            Files.delete(mount);
        }
        assumeTrue(mounted, "cannot mount a small tmpfs here: " + new String(p.getInputStream().readAllBytes()).trim());
    }

    @AfterEach
    void unmount() throws Exception {
        if (mount != null && Files.exists(mount)) {
            new ProcessBuilder("umount", mount.toString()).inheritIO().start().waitFor();
            Files.deleteIfExists(mount);
        }
    }

    @Test
    void aGrowthTheFileSystemRefusesChangesNothing() throws IOException {
        Path p = mount.resolve("full.pool");
        byte[] v = new byte[1024];
        long acknowledged = 0;
        long sizeBefore;
        PoolFullException full = null;
        GPHashIndex index = GPHashIndex.builder(p).valueSize(v.length).initialCapacity(256).create();
        try {
            for (long k = 0; ; k++) {
                Arrays.fill(v, (byte) k);
                sizeBefore = Files.size(p);
                try {
                    index.put(k, v);
                } catch (PoolFullException e) {
                    full = e;
                    break;
                }
                acknowledged = k + 1;
            }
            assertTrue(full.getMessage().contains("nothing was changed"), full.getMessage());
            assertEquals(sizeBefore, Files.size(p), "the failed growth left the file longer");
        } finally {
            index.close();  // must not throw: the pool closes cleanly as it was
        }
        try (GPHashIndex again = GPHashIndex.builder(p).open()) {
            assertTrue(again.lastRecovery().fromCloseRecord(), "the close was not clean: " + again.lastRecovery());
            assertEquals(acknowledged, again.size());
            for (long k = 0; k < acknowledged; k++) {
                Arrays.fill(v, (byte) k);
                assertArrayEquals(v, again.get(k), "key " + k);
            }
        }
    }
}
