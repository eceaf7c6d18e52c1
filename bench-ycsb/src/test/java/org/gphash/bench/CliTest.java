package org.gphash.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;

import org.gphash.Backend;
import org.gphash.cli.Cli;
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
