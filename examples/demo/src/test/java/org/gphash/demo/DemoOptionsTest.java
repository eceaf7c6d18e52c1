package org.gphash.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.gphash.cli.Cli;
import org.junit.jupiter.api.Test;

class DemoOptionsTest {

    @Test
    void defaults() throws Exception {
        DemoOptions o = DemoOptions.parse(new String[0]);
        assertEquals(1_000_000, o.keys);
        assertEquals(2_000_000, o.ops);
        assertEquals(4096, o.batch);
        assertEquals(125_000, o.initialCapacity);
        assertEquals(0.5, o.readProportion);
        assertEquals(0.5, o.updateProportion);
        assertEquals(0.0, o.insertProportion);
        assertEquals(0.99, o.theta);
    }

    @Test
    void countsTakeUnderscoresSuffixesAndEqualsSigns() throws Exception {
        DemoOptions o = DemoOptions.parse(new String[] {"--keys", "1_000", "--ops=2k", "--batch", "1m", "--threads=3"});
        assertEquals(1000, o.keys);
        assertEquals(2000, o.ops);
        assertEquals(1_000_000, o.batch);
        assertEquals(3, o.threads);
        assertEquals(125, o.initialCapacity);
    }

    @Test
    void unsetProportionsCountAsZeroOnceOneIsGiven() throws Exception {
        DemoOptions o = DemoOptions.parse(new String[] {"--read-proportion", "1"});
        assertEquals(1.0, o.readProportion);
        assertEquals(0.0, o.updateProportion);
        DemoOptions mix = DemoOptions.parse(new String[] {"--read-proportion", "0.5", "--insert-proportion", "0.5"});
        assertEquals(0.5, mix.insertProportion);
    }

    @Test
    void badOptionsAreUsageErrors() {
        String[][] bad = {
                {"--keys"}, {"--keys", "x"}, {"--keys", "0"}, {"--threads", "0"}, {"--batch", "-1"},
                {"--nope"}, {"stray"}, {"--read-proportion", "0.9"}, {"--theta", "1"}, {"--read-proportion", "2"},
                {"--keys", "99999999999999999999"},
        };
        for (String[] args : bad) {
            Cli.UsageException e = assertThrows(Cli.UsageException.class, () -> DemoOptions.parse(args),
                    String.join(" ", args));
            assertTrue(!e.getMessage().isBlank());
        }
    }

    /** Issue 28: --dir /nonexistent/dir created that tree at the root and left it behind. */
    @Test
    void aDirThatDoesNotExistIsRefusedAndNotCreated() {
        java.nio.file.Path missing = java.nio.file.Path.of(System.getProperty("java.io.tmpdir"),
                "gphash-no-such-dir-" + System.nanoTime(), "below");
        Cli.UsageException e = assertThrows(Cli.UsageException.class,
                () -> DemoOptions.parse(new String[] {"--dir", missing.toString()}));
        assertTrue(e.getMessage().contains("not an existing directory"), e.getMessage());
        assertTrue(!java.nio.file.Files.exists(missing.getParent()), "the demo created " + missing.getParent());
    }

    @Test
    void slowStorageLowersOnlyDefaults() throws Exception {
        DemoOptions defaults = DemoOptions.parse(new String[0]);
        assertTrue(defaults.reduceDefaultsForSlowStorage());
        assertEquals(DemoOptions.SLOW_STORAGE_KEYS, defaults.keys);
        assertEquals(DemoOptions.SLOW_STORAGE_OPS, defaults.ops);
        assertEquals(DemoOptions.SLOW_STORAGE_KEYS / 8, defaults.initialCapacity);
        DemoOptions given = DemoOptions.parse(new String[] {"--keys", "1m", "--ops", "3m"});
        assertEquals(false, given.reduceDefaultsForSlowStorage());
        assertEquals(1_000_000, given.keys);
        assertEquals(3_000_000, given.ops);
    }

    @Test
    void helpIsRecognised() throws Exception {
        assertTrue(DemoOptions.parse(new String[] {"--help"}).help.requested());
        assertTrue(DemoOptions.parse(new String[] {"-h"}).help.requested());
        assertTrue(DemoOptions.usage().contains("--insert-proportion"));
    }
}
