package org.gphash.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 13: the launcher ran its build inside {@code if !}, where {@code set -e} is off, so a
 * failed Maven build was ignored, the build stamp written, and every later run skipped the build
 * and failed with "Could not find or load main class". Here the launcher runs from a copy in a
 * scratch directory (its own ROOT, so this checkout's build is never touched) with a Maven that
 * fails: the command must fail with the build's own error and leave no stamp.
 */
class LauncherTest {

    record Run(int code, String out) {
    }

    private static Path launcher() {
        Path p = Path.of("../gphash");
        return Files.isRegularFile(p) ? p : Path.of("gphash");
    }

    private static Run gphash(Path root, Path fakeBin, String... args) throws IOException, InterruptedException {
        List<String> cmd = new java.util.ArrayList<>(List.of("bash", root.resolve("gphash").toString()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(root.toFile()).redirectErrorStream(true);
        pb.environment().put("PATH", fakeBin + ":/usr/bin:/bin");
        pb.environment().put("JAVA_HOME", System.getProperty("java.home"));
        pb.environment().put("XDG_CACHE_HOME", root.resolve("cache").toString());
        Files.createDirectories(root.resolve("cache/gphash"));
        Files.writeString(root.resolve("cache/gphash/libpmem-install-tried"), "");  // no apt-get from a test
        Process p = pb.start();
        String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "launcher did not finish: " + text);
        return new Run(p.exitValue(), text);
    }

    private static Path scratchCheckout(Path dir) throws IOException {
        Path root = Files.createDirectories(dir.resolve("checkout"));
        Files.copy(launcher(), root.resolve("gphash"));
        Files.writeString(root.resolve("pom.xml"), "<project/>\n");
        return root;
    }

    private static Path failingMaven(Path dir) throws IOException {
        Path bin = Files.createDirectories(dir.resolve("bin"));
        Path mvn = bin.resolve("mvn");
        Files.writeString(mvn, "#!/bin/sh\necho \"[ERROR] the real reason: compilation failed in index\"\nexit 1\n");
        Files.setPosixFilePermissions(mvn, PosixFilePermissions.fromString("rwxr-xr-x"));
        return bin;
    }

    @Test
    void aFailedBuildFailsTheCommandWithTheBuildsOwnErrorAndNoStamp(@TempDir Path dir) throws Exception {
        Path root = scratchCheckout(dir);
        Path bin = failingMaven(dir);
        Run build = gphash(root, bin, "build");
        assertNotEquals(0, build.code(), build.out());
        assertTrue(build.out().contains("the real reason: compilation failed"), build.out());
        assertTrue(build.out().contains("build failed"), build.out());
        assertFalse(Files.exists(root.resolve("target/.build-stamp")), "a failed build wrote the stamp");
        // A command that builds first fails the same way, runs nothing, and still leaves no stamp.
        Run demo = gphash(root, bin, "demo");
        assertNotEquals(0, demo.code(), demo.out());
        assertTrue(demo.out().contains("the real reason: compilation failed"), demo.out());
        assertTrue(demo.out().contains("nothing was run"), demo.out());
        assertFalse(demo.out().contains("Could not find or load main class"), demo.out());
        assertFalse(Files.exists(root.resolve("target/.build-stamp")));
    }

    @Test
    void versionNeedsNoMavenAndNoBuild(@TempDir Path dir) throws Exception {
        Path root = scratchCheckout(dir);
        Path emptyBin = Files.createDirectories(dir.resolve("empty-bin"));
        Run v = gphash(root, emptyBin, "--version");
        assertEquals(0, v.code(), v.out());
        assertTrue(v.out().contains("java ") && v.out().contains("GPU kernels:"), v.out());
    }
}
