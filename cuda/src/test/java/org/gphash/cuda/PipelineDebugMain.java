package org.gphash.cuda;

import java.nio.file.Files;
import java.nio.file.Path;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.IndexMirror;
import org.gphash.Outcome;
import org.gphash.bktcache.BktCacheConfig;

/** A diagnostic for the GPU machine: batches of distinct inserts, then every key read back. Run with -Dgphash.gpuTuning=logBatches=true. */
public final class PipelineDebugMain {

    private PipelineDebugMain() {
    }

    public static void main(String[] args) throws Exception {
        differentialRound0();
        distinctInserts();
    }

    /** DifferentialTest's first case, round 0, on both engines; keys whose state differs afterwards, with their operations. */
    static void differentialRound0() throws Exception {
        Path dir = Files.createTempDirectory(Path.of("/dev/shm"), "dbg");
        long seed = 1;
        try (org.gphash.spi.Engine cpu = org.gphash.index.CpuEngine.create(GpuTestSupport.config(dir.resolve("c"),
                org.gphash.Backend.CPU, 8, 2, 2, 8, 512, seed));
             GpuEngine gpu = GpuEngines.create(GpuTestSupport.config(dir.resolve("g"), 8, 2, 2, 8, 512, seed,
                     BktCacheConfig.DISABLED).withIndexMirror(IndexMirror.REQUIRED))) {
            java.util.Random random = new java.util.Random(seed);
            int keySpace = 20_000;
            long version = 0;
            org.gphash.OpKind[] kinds = GpuTestSupport.PLAIN_KINDS;
            int n = 1 + random.nextInt(3_000);
            Batch batch = Batch.create(8, GpuTestSupport.VALUE_SIZE, n);
            java.util.Set<Long> used = new java.util.HashSet<>();
            while (batch.size() < n) {
                long k = random.nextInt(keySpace);
                if (!used.add(k)) {
                    continue;
                }
                org.gphash.OpKind kind = random.nextDouble() < 0.7 ? org.gphash.OpKind.INSERT : kinds[random.nextInt(kinds.length)];
                batch.add(kind, GpuTestSupport.key(k, 8), kind.hasValue() ? GpuTestSupport.value(k, ++version) : null);
            }
            BatchResult rc = new BatchResult(GpuTestSupport.VALUE_SIZE, n);
            BatchResult rg = new BatchResult(GpuTestSupport.VALUE_SIZE, n);
            cpu.execute(batch, rc);
            gpu.execute(batch, rg);
            int diff = 0;
            for (int i = 0; i < n; i++) {
                if (rc.outcome(i) != rg.outcome(i)) {
                    diff++;
                }
            }
            System.out.printf("round 0: n=%d, outcome differences %d, sizes cpu %d gpu %d%n", n, diff, cpu.stats().size(),
                    gpu.stats().size());
            Batch get = Batch.create(8, GpuTestSupport.VALUE_SIZE, n);
            for (int i = 0; i < n; i++) {
                get.get(batch.key(i));
            }
            cpu.execute(get, rc);
            gpu.execute(get, rg);
            int shown = 0;
            java.util.Map<org.gphash.OpKind, Integer> lostByKind = new java.util.TreeMap<>();
            for (int i = 0; i < n; i++) {
                if (rc.outcome(i) != rg.outcome(i)) {
                    lostByKind.merge(batch.kind(i), 1, Integer::sum);
                    if (shown++ < 8) {
                        System.out.printf("  op %d %s key %d: cpu %s gpu %s%n", i, batch.kind(i),
                                java.nio.ByteBuffer.wrap(batch.key(i)).order(java.nio.ByteOrder.LITTLE_ENDIAN).getLong(),
                                rc.outcome(i), rg.outcome(i));
                    }
                }
            }
            System.out.println("  state differences by the op's kind: " + lostByKind + "; gpu " + gpu.stats());
        }
    }

    static void distinctInserts() throws Exception {
        for (long[] c : new long[][] {{100_000, 5000}, {512, 2000}, {100_000, 100_000}}) {
            Path p = Files.createTempDirectory(Path.of("/dev/shm"), "dbg").resolve("p.pool");
            try (GpuEngine gpu = GpuEngines.create(GpuTestSupport.config(p, 8, 2, 2, 8, c[0], 5, BktCacheConfig.DISABLED)
                    .withIndexMirror(IndexMirror.REQUIRED))) {
                int n = (int) c[1];
                Batch b = Batch.create(8, GpuTestSupport.VALUE_SIZE, n);
                for (long k = 0; k < n; k++) {
                    b.insert(GpuTestSupport.key(k, 8), GpuTestSupport.value(k, 1));
                }
                BatchResult r = new BatchResult(GpuTestSupport.VALUE_SIZE, n);
                gpu.execute(b, r);
                System.out.printf("capacity %d, %d inserts: INSERTED %d; %s%n", c[0], n, r.count(Outcome.INSERTED), gpu.stats());
                Batch g = Batch.create(8, GpuTestSupport.VALUE_SIZE, n);
                for (long k = 0; k < n; k++) {
                    g.get(GpuTestSupport.key(k, 8));
                }
                gpu.execute(g, r);
                int found = r.count(Outcome.FOUND);
                StringBuilder missing = new StringBuilder();
                for (int k = 0, shown = 0; k < n && shown < 10; k++) {
                    if (r.outcome(k) != Outcome.FOUND) {
                        missing.append(k).append(' ');
                        shown++;
                    }
                }
                System.out.printf("  read back: FOUND %d of %d; first missing: %s; verify: %s%n", found, n, missing,
                        gpu.diagnostics().verify());
            }
        }
    }
}
