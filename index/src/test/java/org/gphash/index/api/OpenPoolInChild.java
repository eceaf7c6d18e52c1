package org.gphash.index.api;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;

import org.gphash.GPHashIndex;

/**
 * Run in a child JVM by {@link ErrorsTest}: tries to open the pool named by the first argument and
 * prints {@code OPENED items=<n>} or {@code FAILED <exception class> <message>}, preceded by
 * {@code BEFORE <sha-256>} and {@code AFTER <sha-256>} of the file around the attempt, so the
 * parent learns whether a refused open wrote anything.
 */
public final class OpenPoolInChild {

    private OpenPoolInChild() {
    }

    public static void main(String[] args) throws Exception {
        Path pool = Path.of(args[0]);
        System.out.println("BEFORE " + sha256(pool));
        String result;
        try (GPHashIndex index = GPHashIndex.builder(pool).open()) {
            result = "OPENED items=" + index.stats().size();
        } catch (Throwable e) {
            result = "FAILED " + e.getClass().getName() + " " + e.getMessage();
        }
        System.out.println("AFTER " + sha256(pool));
        System.out.println(result);
    }

    private static String sha256(Path p) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(p)));
    }
}
