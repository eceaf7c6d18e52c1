package org.gphash.bench.gpu;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.Locale;

import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.GPHashIndex;
import org.gphash.cuda.GpuEngineFeatures;
import org.gphash.cuda.runtime.CudaRuntime;
import org.gphash.table.PoolTable;

/**
 * Where a fresh JVM's first open of a pool goes, for YCSB's client, which counts the open in every
 * phase (issue 57): the open as the application waits for it, the engine's own stages beside it, and
 * the same open again in the same JVM (classes loaded, the GPU's driver started). Run with
 * {@code -verbose:class}, the lines between the markers count the classes each open loaded.
 *
 * <pre>OpenStagesProbe create POOL ITEMS        (a pool of ITEMS 8-byte keys, 128-byte values, on the CPU backend)
 * OpenStagesProbe open POOL gpu|cpu          (two opens and closes, timed)
 * OpenStagesProbe pool POOL                  (the pool's open alone, as the CPU engine opens it, twice)
 * OpenStagesProbe check                      (the GPU's checks alone: JCuda's library, cuInit, the device)</pre>
 */
public final class OpenStagesProbe {

    private static final int VALUE = 128;

    private OpenStagesProbe() {
    }

    public static void main(String[] args) {
        if (args[0].equals("check")) {
            long t0 = System.nanoTime();
            CudaRuntime.checkUsable(0);
            long[] d = CudaRuntime.driverStartNanos();
            System.out.printf(Locale.ROOT, "PROBE check alone %.1f ms (JCuda's library %.1f, cuInit %.1f)%n",
                    (System.nanoTime() - t0) / 1e6, d[0] / 1e6, d[1] / 1e6);
            return;
        }
        Path pool = Path.of(args[1]);
        if (args[0].equals("pool")) {
            for (int round = 1; round <= 2; round++) {
                long t0 = System.nanoTime();
                PoolTable t = PoolTable.open(GPHashIndex.builder(pool).backend(Backend.CPU).config(), null);
                long t1 = System.nanoTime();
                t.close();
                System.out.printf(Locale.ROOT, "PROBE pool open %d alone %.1f ms (recovery %.1f)%n", round, (t1 - t0) / 1e6,
                        t.recovery().duration().toNanos() / 1e6);
            }
            return;
        }
        if (args[0].equals("create")) {
            long items = Long.parseLong(args[2]);
            try (GPHashIndex ix = GPHashIndex.builder(pool).backend(Backend.CPU).keySize(8).valueSize(VALUE)
                    .initialCapacity(items).create()) {
                Batch b = Batch.create(8, VALUE, 4096);
                BatchResult r = new BatchResult(VALUE, 4096);
                byte[] v = new byte[VALUE];
                for (long k = 0; k < items; ) {
                    b.clear();
                    for (int i = 0; i < 4096 && k < items; i++, k++) {
                        b.put(k, v);
                    }
                    ix.execute(b, r);
                }
            }
            return;
        }
        Backend backend = Backend.valueOf(args[2].toUpperCase(Locale.ROOT));
        for (int round = 1; round <= 2; round++) {
            long uptime = ManagementFactory.getRuntimeMXBean().getUptime();
            System.out.println("PROBE-MARK before open " + round);
            long t0 = System.nanoTime();
            GPHashIndex ix = GPHashIndex.builder(pool).backend(backend).open();
            long t1 = System.nanoTime();
            System.out.println("PROBE-MARK after open " + round);
            ix.get(1L);
            long t2 = System.nanoTime();
            String stages = ix.gpu().map(g -> g instanceof GpuEngineFeatures f ? f.diagnostics().openTimes().toString() : "")
                    .orElse("");
            System.out.printf(Locale.ROOT, "PROBE %s open %d: %.1f ms (JVM up %d ms before it), first get %.2f ms; %s%n",
                    backend, round, (t1 - t0) / 1e6, uptime, (t2 - t1) / 1e6, stages);
            ix.close();
            System.out.println("PROBE-MARK closed " + round);
        }
    }
}
