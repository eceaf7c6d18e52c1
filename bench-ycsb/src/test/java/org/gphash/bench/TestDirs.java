package org.gphash.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** Temporary directories for test stores: under /dev/shm when it exists (pools belong on tmpfs). */
public final class TestDirs {

    private TestDirs() {
    }

    public static Path create(String prefix) throws IOException {
        Path shm = Path.of("/dev/shm");
        return Files.isDirectory(shm) && Files.isWritable(shm) ? Files.createTempDirectory(shm, prefix)
                : Files.createTempDirectory(prefix);
    }

    public static void delete(Path dir) throws IOException {
        if (dir == null || !Files.exists(dir)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
