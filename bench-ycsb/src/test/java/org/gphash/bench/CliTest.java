package org.gphash.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.List;

import org.gphash.Backend;
import org.gphash.cli.Cli;
import org.gphash.recovery.RecoveryTool;
import org.junit.jupiter.api.Test;

/** The command lines on picocli: counts, ranges, help and usage errors of every tool that uses {@link Cli}. */
class CliTest {

    @Test
    void countsTakeUnderscoresAndSuffixesEverywhere() throws Exception {
        assertEquals(1_500_000, Cli.count("1_500k"));
        assertEquals(2_000_000, Cli.count("2m"));
        assertEquals(3, Replay.parse(new String[] {"t.trace", "--threads", "3"}).threads());
        assertEquals(500_000, DlrmTrace.parse(new String[] {"--samples=500k"}).samples());
        assertEquals(18, PageRankTrace.parse(new String[] {"--scale", "18"}).scale());
        assertEquals(List.of(256, 1000), BenchOptions.parse(new String[] {"--batch-sweep", "256,1k"}).batchSizes());
    }

    /** One help style: every command answers -h with its usage, which lists -V, and -V with the version. */
    @Test
    void everyCommandAnswersHelpAndVersionAlike() {
        String version = "gphash ";
        for (String usage : List.of(Replay.usage(), DlrmTrace.usage(), PageRankTrace.usage(), BenchOptions.usage())) {
            assertTrue(usage.contains("-h, --help") && usage.contains("-V, --version"), usage);
        }
        for (String v : List.of(Replay.usage("-V"), DlrmTrace.usage("--version"), PageRankTrace.usage("-V"),
                BenchOptions.usage("--batch", "64", "-V"))) {
            assertTrue(v.startsWith(version) && !v.contains("Usage"), v);
        }
        StringWriter out = new StringWriter();
        assertEquals(0, RecoveryTool.run(new String[] {"stats", "-V"}, new PrintWriter(out), new PrintWriter(new StringWriter())));
        assertTrue(out.toString().startsWith(version), out.toString());
        out = new StringWriter();
        assertEquals(0, RecoveryTool.run(new String[] {"check", "-h"}, new PrintWriter(out), new PrintWriter(new StringWriter())));
        assertTrue(out.toString().contains("POOL") && out.toString().contains("the pool file, or the directory of a sharded index")
                && out.toString().contains("-V, --version"), out.toString());
    }

    @Test
    void replayDefaultsFollowTheBackend() throws Exception {
        Replay.Options gpu = Replay.parse(new String[] {"--backend", "gpu", "x.trace"});
        assertEquals(Backend.GPU, gpu.backend());
        assertEquals(List.of(Systems.GPU_DEVICE, "cpu-assisted"), gpu.baselines());
        assertEquals(Path.of("x.trace"), gpu.file());
        assertEquals(List.of("chm", "lmdb"), Replay.parse(new String[] {"x.trace"}).baselines());
        assertNull(Replay.parse(new String[] {"--help"}), "help");
        assertNull(DlrmTrace.parse(new String[] {"-h"}), "help");
        assertTrue(Replay.usage().contains("--baselines") && DlrmTrace.usage().contains("--criteo")
                && PageRankTrace.usage().contains("--edge-factor") && BenchOptions.usage().contains("--batch-sweep"));
    }

    @Test
    void badCommandLinesNameTheOption() {
        String[][] replay = {{}, {"a", "b"}, {"x", "--threads", "0"}, {"x", "--baselines", "redis"}, {"x", "--nope"},
                {"x", "--threads", "lots"}};
        for (String[] args : replay) {
            Cli.UsageException e = assertThrows(Cli.UsageException.class, () -> Replay.parse(args), String.join(" ", args));
            assertTrue(!e.getMessage().isBlank());
        }
        assertTrue(assertThrows(Cli.UsageException.class, () -> DlrmTrace.parse(new String[] {"--scale", "2"}))
                .getMessage().contains("--scale"));
        assertTrue(assertThrows(Cli.UsageException.class, () -> PageRankTrace.parse(new String[] {"--damping", "1"}))
                .getMessage().contains("--damping"));
        assertTrue(assertThrows(Cli.UsageException.class, () -> BenchOptions.parse(new String[] {"--keys", "0"}))
                .getMessage().contains("--keys"));
        assertTrue(assertThrows(Cli.UsageException.class, () -> DlrmTrace.parse(new String[] {"--samples", "x"}))
                .getMessage().contains("--samples"));
    }
}
