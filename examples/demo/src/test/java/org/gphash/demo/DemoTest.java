package org.gphash.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DemoTest {

    @Test
    void smallRunChecksOutAndCleansUp(@TempDir Path parent) throws Exception {
        DemoOptions o = DemoOptions.parse(new String[] {"--keys", "2000", "--ops", "6000", "--threads", "2",
                "--batch", "256", "--read-proportion", "0.4", "--update-proportion", "0.4", "--insert-proportion", "0.2",
                "--dir", parent.toString()});
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        int status = new Demo(o, new PrintStream(bytes, true, StandardCharsets.UTF_8)).run();
        String out = bytes.toString(StandardCharsets.UTF_8);
        assertEquals(0, status, out);
        assertTrue(out.contains("0 mismatched, 0 missing"), out);
        assertTrue(out.contains("result       OK"), out);
        // The GPU engine beside the CPU engine where it can run, else one line why not (issue 55).
        assertTrue(out.contains("CPU engine") && (out.contains("GPU / CPU") || out.contains("GPU engine   not shown: ")), out);
        try (Stream<Path> left = Files.list(parent)) {
            assertEquals(0, left.count(), "the demo removes the directory it created");
        }
    }
}
