package org.gphash.bench.gpu;

import static org.gphash.bench.gpu.GpuBenchArgs.num;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.GpuTuning;
import org.gphash.IndexMirror;
import org.gphash.OpKind;
import org.gphash.bktcache.BktCacheConfig;
import org.gphash.cuda.GpuEngine;
import org.gphash.index.CpuEngine;

/**
 * Host batches of 1 to 4096 operations (gets only, and half updates) from one Java thread, one at a
 * time, on the GPU backend (the router choosing host or GPU by cost): wall time per batch (mean, p50,
 * p99), GPU time, and GPU time per pipeline stage (where a coalesced batch of a few callers' operations
 * spends its time, issue 15); the CPU engine's p50 and p99 for the same batches on a pool loaded alike
 * (the same run's baseline, issue 57); and, on the error stream after each row, the router's costs.
 *
 * <pre>
 * ./gphash run org.gphash.bench.gpu.SmallBatchesBench [--keys 1048576] [--rounds 2000] [--dir /dev/shm]
 * </pre>
 */
public final class SmallBatchesBench {

    private SmallBatchesBench() {
    }

    public static void main(String[] argv) throws Exception {
        small(GpuBenchArgs.parse(argv, "SmallBatchesBench"));
    }

    private static void small(GpuBenchArgs o) throws Exception {
        long keys = num(o.keys, 1L << 20);
        int vs = 128;
        int rounds = (int) num(o.rounds, 2000);
        Path p = o.dir.resolve("gphash-small.pool");
        Path cp = o.dir.resolve("gphash-small-cpu.pool");
        Files.deleteIfExists(cp);
        // The CPU engine on a pool loaded alike, the same batches after each row: the baseline of the same run.
        try (GpuEngine gpu = GpuTargetsBench.loaded(p, keys, vs);
             CpuEngine cpu = CpuEngine.create(GpuTargetsBench.config(cp, Backend.CPU, vs, keys, IndexMirror.AUTO, BktCacheConfig.DISABLED))) {
            GpuTargetsBench.load(cpu, keys, vs, null);
            BatchResult r = new BatchResult(vs, 4096);
            System.out.println("| batch | reads | wall us/batch mean | p50 | p99 | GPU us/batch | GPU us per stage (profiled pass) "
                    + "| CPU engine p50 / p99 |");
            System.out.println("| ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |");
            for (int n : new int[] {1, 8, 64, 512, 4096}) {
                for (double reads : new double[] {1.0, 0.5}) {
                    List<Batch> w = GpuTargetsBench.workload((long) n * rounds, n, vs, reads, OpKind.UPDATE, x -> x.nextLong(keys), n);
                    for (Batch b : w.subList(0, Math.min(200, w.size()))) {
                        gpu.execute(b, r);  // warm-up
                    }
                    long[] wall = new long[w.size()];
                    long gpuNanos = 0;
                    for (int i = 0; i < w.size(); i++) {
                        long t0 = System.nanoTime();
                        gpu.execute(w.get(i), r);
                        wall[i] = System.nanoTime() - t0;
                        gpuNanos += gpu.features().lastBatchGpuNanos();
                    }
                    gpu.diagnostics().profileStages(true);
                    int profiled = Math.min(300, w.size());
                    for (Batch b : w.subList(0, profiled)) {
                        gpu.execute(b, r);
                    }
                    StringBuilder st = new StringBuilder();
                    for (Map.Entry<String, Long> e : gpu.diagnostics().stageNanos().entrySet()) {
                        if (e.getValue() > 0) {
                            st.append(String.format(Locale.ROOT, "%s %.1f, ", e.getKey(), e.getValue() / 1e3 / profiled));
                        }
                    }
                    gpu.diagnostics().profileStages(false);
                    long[] cpuWall = new long[w.size()];
                    for (Batch b : w.subList(0, Math.min(200, w.size()))) {
                        cpu.execute(b, r);  // warm-up
                    }
                    for (int i = 0; i < w.size(); i++) {
                        long t0 = System.nanoTime();
                        cpu.execute(w.get(i), r);
                        cpuWall[i] = System.nanoTime() - t0;
                    }
                    Arrays.sort(cpuWall);
                    Arrays.sort(wall);
                    double mean = Arrays.stream(wall).average().orElse(0) / 1e3;
                    boolean small = reads >= 1 && n <= GpuTuning.fromSystemProperty().smallReadsMax();
                    System.out.printf(Locale.ROOT, "| %d | %.0f%% | %.1f | %.1f | %.1f | %s | %s | %.1f / %.1f |%n", n, reads * 100,
                            mean, wall[wall.length / 2] / 1e3, wall[(int) (wall.length * 0.99)] / 1e3,
                            small ? "- (one launch)" : String.format(Locale.ROOT, "%.1f", gpuNanos / 1e3 / wall.length),
                            st.isEmpty() ? "-" : st.substring(0, st.length() - 2),
                            cpuWall[cpuWall.length / 2] / 1e3, cpuWall[(int) (cpuWall.length * 0.99)] / 1e3);
                    // What the router chose by after the row (stderr, beside the table): where a row ran on
                    // the host at many times the GPU's time, these say which figure was wrong.
                    System.err.printf(Locale.ROOT, "after batch %d, %.0f%% reads: host batches %d, lends %d; route costs: %s%n", n,
                            reads * 100, gpu.diagnostics().hostBatches(), gpu.diagnostics().hostLends(),
                            gpu.diagnostics().routeCosts());
                }
            }
        } finally {
            Files.deleteIfExists(p);
            Files.deleteIfExists(cp);
        }
    }
}
