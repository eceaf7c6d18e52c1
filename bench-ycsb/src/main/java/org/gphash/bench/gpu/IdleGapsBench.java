package org.gphash.bench.gpu;

import static org.gphash.bench.gpu.GpuBenchArgs.num;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.GPHashConfig;
import org.gphash.GPHashIndex;
import org.gphash.GpuTuning;
import org.gphash.IndexMirror;
import org.gphash.OpKind;
import org.gphash.bktcache.BktCacheConfig;
import org.gphash.cuda.GpuEngine;
import org.gphash.cuda.GpuEngines;

/**
 * One GPU batch's time after the GPU had nothing to do for 0 to 100 ms (issue 57): why the router
 * measures the GPU again with several batches, not one ({@code RouteCosts.choose}).
 *
 * <pre>
 * ./gphash run org.gphash.bench.gpu.IdleGapsBench [--keys 1048576] [--dir /dev/shm]
 * </pre>
 */
public final class IdleGapsBench {

    private IdleGapsBench() {
    }

    public static void main(String[] argv) throws Exception {
        gaps(GpuBenchArgs.parse(argv, "IdleGapsBench"));
    }

    /**
     * What one GPU batch costs after the GPU has had nothing to do for a while (issue 57): the router
     * measures the GPU again with one batch among host batches, and those batches cost many times what
     * the same batch costs among GPU batches. Every batch on the GPU here (hostBatchesMax=0), one thread,
     * a gap before each: spun (the thread busy, as host batches keep it) or slept, from none to 100 ms.
     */
    private static void gaps(GpuBenchArgs o) throws Exception {
        long keys = num(o.keys, 1L << 20);
        int vs = 128;
        Path p = o.dir.resolve("gphash-gaps.pool");
        Files.deleteIfExists(p);
        GPHashConfig c = GPHashIndex.builder(p).backend(Backend.GPU).keySize(8).valueSize(vs).initialCapacity(keys)
                .seed(20261122L).bucketCache(BktCacheConfig.DISABLED).indexMirror(IndexMirror.REQUIRED)
                .gpuTuning(GpuTuning.fromSystemProperty().with("hostBatchesMax=0")).config();
        try (GpuEngine gpu = GpuEngines.create(c)) {
            GpuTargetsBench.load(gpu, keys, vs);
            BatchResult r = new BatchResult(vs, 4096);
            System.out.println("| batch | reads | gap | spun p50 / p90 us | slept p50 / p90 us |");
            System.out.println("| ---: | ---: | ---: | ---: | ---: |");
            for (int n : new int[] {64, 512}) {
                for (double reads : new double[] {1.0, 0.5}) {
                    List<Batch> w = GpuTargetsBench.workload(200L * n, n, vs, reads, OpKind.UPDATE, x -> x.nextLong(keys), n);
                    for (Batch b : w) {
                        gpu.execute(b, r);  // warm-up
                    }
                    for (long gapMicros : new long[] {0, 100, 1_000, 10_000, 100_000}) {
                        int samples = gapMicros >= 100_000 ? 12 : gapMicros >= 10_000 ? 50 : 200;
                        String spun = afterGaps(gpu, w, r, samples, gapMicros, false);
                        String slept = afterGaps(gpu, w, r, samples, gapMicros, true);
                        System.out.printf(Locale.ROOT, "| %d | %.0f%% | %.1f ms | %s | %s |%n", n, reads * 100, gapMicros / 1e3,
                                spun, slept);
                    }
                }
            }
        } finally {
            Files.deleteIfExists(p);
        }
    }

    /** p50 / p90 of {@code samples} batches of {@code w}, each after a gap of {@code gapMicros}, spun or slept. */
    private static String afterGaps(GpuEngine gpu, List<Batch> w, BatchResult r, int samples, long gapMicros, boolean sleep)
            throws InterruptedException {
        long[] t = new long[samples];
        for (int i = 0; i < samples; i++) {
            if (sleep) {
                Thread.sleep(gapMicros / 1000, (int) (gapMicros % 1000) * 1000);
            } else {
                for (long end = System.nanoTime() + gapMicros * 1000; System.nanoTime() < end; ) {
                    Thread.onSpinWait();
                }
            }
            long t0 = System.nanoTime();
            gpu.execute(w.get(i % w.size()), r);
            t[i] = System.nanoTime() - t0;
        }
        Arrays.sort(t);
        return String.format(Locale.ROOT, "%.1f / %.1f", t[samples / 2] / 1e3, t[samples * 9 / 10] / 1e3);
    }
}
