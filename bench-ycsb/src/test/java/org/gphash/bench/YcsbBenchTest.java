package org.gphash.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import org.gphash.cli.Cli;
import org.gphash.index.api.TestPools;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class YcsbBenchTest {

    private TestPools pools;
    private Path dir;

    @AfterEach
    void cleanUp() throws Exception {
        if (pools != null) {
            pools.close();
        }
    }

    @Test
    void tinySweepWritesTablesJsonAndPlots() throws Exception {
        pools = TestPools.create();
        dir = pools.dir();
        Path json = dir.resolve("out/r.json");
        Path plots = dir.resolve("plots");
        BenchOptions o = BenchOptions.parse(new String[] {"--keys", "2000", "--ops", "3000", "--batch-sweep", "128,512",
                "--threads", "2", "--baselines", "all", "--workloads", "pos-search,insert,delete,a,f,d", "--warmup", "1000",
                "--key-size", "32", "--json", json.toString(), "--plot", plots.toString(), "--dir", dir.toString(),
                "--no-progress"});
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        int status = new YcsbBench(o, out, out).run();
        String text = bytes.toString(StandardCharsets.UTF_8);
        assertEquals(0, status, text);
        assertTrue(text.contains("== batch size 128") && text.contains("== batch size 512"), text);
        for (String system : new String[] {"gphash-cpu", "cpu-assisted", "chm", "lmdb", "gphash-per-op"}) {
            assertTrue(text.contains(system + " "), system + " missing from\n" + text);
        }
        String j = Files.readString(json);
        // 5 systems x 2 batch sizes x (load + 6 workloads)
        assertEquals(5 * 2 * 7, j.split("\"system\"").length - 1, j);
        assertTrue(j.contains("\"unexpected\":0"), j);
        assertEquals(5 * 2 * 7, PlotJson.parse(j).size(), "the plot tool reads every measurement back");
        assertTrue(Files.size(plots.resolve("curve-a.png")) > 1000);
        assertTrue(Files.size(plots.resolve("workloads-batch512.png")) > 1000);
    }

    @Test
    void badOptionsAreNamed() {
        var e = assertThrows(Cli.UsageException.class, () -> BenchOptions.parse(new String[] {"--baselines", "redis"}));
        assertTrue(e.getMessage().contains("redis"), e.getMessage());
        e = assertThrows(Cli.UsageException.class, () -> BenchOptions.parse(new String[] {"--backend", "tpu"}));
        assertTrue(e.getMessage().contains("--backend") && e.getMessage().contains("CPU, GPU")
                && e.getMessage().contains("tpu"), e.getMessage());
        e = assertThrows(Cli.UsageException.class, () -> BenchOptions.parse(new String[] {"--distribution", "normal"}));
        assertTrue(e.getMessage().contains("zipfian, uniform or latest"), e.getMessage());
        e = assertThrows(Cli.UsageException.class, () -> BenchOptions.parse(new String[] {"--value-lengths", "some"}));
        assertTrue(e.getMessage().contains("--value-lengths") && e.getMessage().contains("fixed or mixed"), e.getMessage());
        // A store of values of the value size only refuses mixed lengths by name, before it connects or opens.
        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class, () -> new ClusterStore(
                new StoreConfig(java.nio.file.Path.of("."), 8, 64, 10, 1, ValueLengths.MIXED)));
        assertTrue(refused.getMessage().contains("a cluster takes values of the value size only"), refused.getMessage());
    }

    @Test
    void mixedLengthsTakeTheLongestValueAsTheirSize() throws Exception {
        BenchOptions o = BenchOptions.parse(new String[] {"--value-lengths", "mixed"});
        assertEquals(ValueLengths.MIXED, o.valueLengths());
        assertEquals(ValueLengths.MIXED_DEFAULT_VALUE_SIZE, o.valueSize());
        assertEquals(128, BenchOptions.parse(new String[0]).valueSize());
    }

    @Test
    void defaultsFollowThePaper() throws Exception {
        BenchOptions o = BenchOptions.parse(new String[0]);
        assertEquals(16L << 20, o.keys());
        assertEquals(16L << 20, o.ops(Workload.UPDATE));
        assertEquals(64L << 20, o.ops(Workload.A));
        assertEquals(java.util.List.of(4096), o.batchSizes());
        assertEquals(0.99, o.theta());
        assertEquals(java.util.List.of("chm", "lmdb"), o.baselines());
        assertEquals(java.util.List.of("cpu-assisted"), BenchOptions.parse(new String[] {"--backend", "gpu"}).baselines());
    }

    @Test
    void gpuBackendUnavailableIsAClearMessage() throws Exception {
        pools = TestPools.create();
        dir = pools.dir();
        BenchOptions o = BenchOptions.parse(new String[] {"--backend", "gpu", "--keys", "100", "--ops", "100",
                "--warmup", "0", "--dir", dir.toString(), "--no-progress"});
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        int status = new YcsbBench(o, out, out).run();
        String text = bytes.toString(StandardCharsets.UTF_8);
        org.junit.jupiter.api.Assumptions.assumeTrue(status != 0, "a GPU engine is available here");
        assertEquals(3, status, text);
        assertTrue(text.contains("gphash-gpu cannot run on this machine"), text);
    }
}
