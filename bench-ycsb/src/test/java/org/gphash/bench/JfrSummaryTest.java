package org.gphash.bench;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;

import jdk.jfr.Recording;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The summary of a flight recording names where this thread parked and for how long, by the frames
 * of its site: a recording made here, with one known wait of 30 ms.
 */
class JfrSummaryTest {

    @Test
    void aParkIsSummedAtItsSite(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("r.jfr");
        try (Recording r = new Recording()) {
            r.enable("jdk.ThreadPark").withThreshold(Duration.ofMillis(1)).withStackTrace();
            r.enable("jdk.ExecutionSample").withPeriod(Duration.ofMillis(10));
            r.start();
            parkThirtyMillis();
            r.stop();
            r.dump(file);
        }
        assertTrue(Files.size(file) > 0);
        JfrSummary.Summary s = JfrSummary.summarize(file, 3);
        JfrSummary.Wait park = s.waits().entrySet().stream()
                .filter(e -> e.getKey().startsWith("ThreadPark") && e.getKey().contains("JfrSummaryTest.parkThirtyMillis:"))
                .map(Map.Entry::getValue).findFirst().orElse(null);
        assertTrue(park != null, "the park's site, by its frames: " + s.waits().keySet());
        assertTrue(park.count() >= 1 && park.total().toMillis() >= 25, "its time: " + park);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        JfrSummary.print(s, new PrintStream(bytes, true, StandardCharsets.UTF_8));
        String text = bytes.toString(StandardCharsets.UTF_8);
        assertTrue(text.contains("== waits by site") && text.contains("parkThirtyMillis"), text);
    }

    private static void parkThirtyMillis() {
        long until = System.nanoTime() + 30_000_000L;
        while (System.nanoTime() < until) {
            LockSupport.parkNanos(until - System.nanoTime());
        }
    }
}
