package org.gphash.bench.gpu;

import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.SplittableRandom;

import jcuda.Pointer;
import org.gphash.Backend;
import org.gphash.IndexMirror;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.bench.ValueLengths;
import org.gphash.bktcache.BktCacheConfig;
import org.gphash.cuda.DeviceBatch;
import org.gphash.cuda.GpuEngine;
import org.gphash.cuda.GpuEngines;

/**
 * Issue 53's target for values of mixed length on the GPU: device-resident batches whose values are
 * 16 B to 4 KiB, lognormal around 80 B (mean about 130 B; {@link ValueLengths#MIXED}), on a format 3
 * pool of 4 KiB values, against values of 128 bytes on a format 3 pool of 128-byte values, in the same
 * run: the load, uniform updates (each a new length), inserts of fresh keys and uniform positive
 * searches, batches of 2^20, Mops/s wall (the device batch's own time: its columns are filled
 * before it) and on the GPU's clock; every outcome is checked, and every read's length.
 *
 * <p>{@code MixedLengthsBench [--keys N] [--ops N] [--value-size B] [--dir D]}; defaults 4M keys, 4M
 * operations, 4096, /dev/shm.
 */
public final class MixedLengthsBench {

    private static final int BATCH = 1 << 20;

    private MixedLengthsBench() {
    }

    public static void main(String[] args) throws Exception {
        long keys = 1L << 22;
        long ops = 1L << 22;
        int vs = ValueLengths.MIXED_DEFAULT_VALUE_SIZE;
        Path dir = Path.of("/dev/shm");
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--keys" -> keys = Long.parseLong(args[++i]);
                case "--ops" -> ops = Long.parseLong(args[++i]);
                case "--value-size" -> vs = Integer.parseInt(args[++i]);
                case "--dir" -> dir = Path.of(args[++i]);
                default -> throw new IllegalArgumentException("unknown argument " + args[i]
                        + "; MixedLengthsBench [--keys N] [--ops N] [--value-size B] [--dir D]");
            }
        }
        double[][] mixed = run(dir.resolve("gphash-mixed-lengths.pool"), keys, ops, vs, ValueLengths.MIXED);
        double[][] fixed = run(dir.resolve("gphash-fixed-128.pool"), keys, ops, 128, ValueLengths.FIXED);
        String[] rows = {"load (inserts)", "update, uniform", "insert (fresh keys)", "positive search, uniform"};
        System.out.println();
        System.out.println("| operation | mixed 16 B-" + vs + " B, format 3 (wall / GPU Mops/s) | 128 B, format 3 | mixed / 128 B (wall) |");
        System.out.println("| --- | ---: | ---: | ---: |");
        for (int r = 0; r < rows.length; r++) {
            System.out.printf(Locale.ROOT, "| %s | %.1f / %.1f | %.1f / %.1f | %.2fx |%n", rows[r], mixed[r][0], mixed[r][1],
                    fixed[r][0], fixed[r][1], mixed[r][0] / fixed[r][0]);
        }
        System.out.printf(Locale.ROOT, "mixed lengths: %.1f bytes a value on average; updates wrote %.1f GB/s of value bytes%n",
                mixed[4][0], mixed[1][0] * mixed[4][0] / 1e3);
    }

    /** {load, update, insert, search} as {wall, GPU} Mops/s, then {mean length, 0}. */
    private static double[][] run(Path pool, long keys, long ops, int vs, ValueLengths lengths) throws Exception {
        Files.deleteIfExists(pool);
        double[][] out = new double[5][];
        try (GpuEngine gpu = GpuEngines.create(GpuTargetsBench.config(pool, Backend.GPU, vs, keys + ops, IndexMirror.REQUIRED,
                BktCacheConfig.DISABLED, 3));
             DeviceBatch batch = new DeviceBatch(gpu.cuda(), 8, vs, BATCH)) {
            Filler f = new Filler(batch, vs, lengths);
            out[0] = pass(gpu, f, keys, OpKind.INSERT, r -> r, 1, Outcome.INSERTED);
            SplittableRandom random = new SplittableRandom(53);
            out[1] = pass(gpu, f, ops, OpKind.UPDATE, r -> random.nextLong(keys), 2, Outcome.UPDATED);
            out[2] = pass(gpu, f, ops / 2, OpKind.INSERT, r -> keys + r, 1, Outcome.INSERTED);
            out[3] = pass(gpu, f, ops, OpKind.GET, r -> random.nextLong(keys), 0, Outcome.FOUND);
            out[4] = new double[] {f.meanLength(), 0};
            // Where a batch's GPU time goes, by stage (per-stage events, apart from the timed passes).
            for (OpKind kind : new OpKind[] {OpKind.UPDATE, OpKind.GET}) {
                gpu.diagnostics().profileStages(true);  // clears the last kind's stages
                pass(gpu, f, BATCH, kind, r -> random.nextLong(keys), 3, kind == OpKind.GET ? Outcome.FOUND : Outcome.UPDATED);
                System.out.printf(Locale.ROOT, "%s, %s: %s%n", lengths, kind, StageShares.stages(gpu, BATCH));
            }
            gpu.diagnostics().profileStages(false);
            System.out.printf(Locale.ROOT, "%s: %s%n", lengths, gpu.stats());
        }
        Files.deleteIfExists(pool);
        return out;
    }

    interface Keys {
        long of(long i);
    }

    private static double[] pass(GpuEngine gpu, Filler f, long n, OpKind kind, Keys keys, long version, Outcome want) {
        long wall = 0;
        long onGpu = 0;
        for (long first = 0; first < n; first += BATCH) {
            int m = (int) Math.min(BATCH, n - first);
            f.fill(m, kind, first, keys, version);
            long t0 = System.nanoTime();
            gpu.features().executeOnDevice(f.batch);
            wall += System.nanoTime() - t0;
            onGpu += gpu.features().lastBatchGpuNanos();
            f.check(want);
        }
        return new double[] {n / (wall / 1e3), onGpu == 0 ? 0 : n / (onGpu / 1e3)};
    }

    /** Fills the one device batch in parts (a batch of 2^20 values of 4 KiB is 4 GiB, over a Java array's reach). */
    private static final class Filler {
        private static final int PART = 1 << 16;
        final DeviceBatch batch;
        private final int vs;
        private final ValueLengths lengths;
        private final byte[] kinds = new byte[BATCH];
        private final byte[] keyColumn = new byte[BATCH * 8];
        private final int[] lengthColumn = new int[BATCH];
        private final long[] keyOf = new long[BATCH];
        private final long[] versionOf = new long[BATCH];
        private final byte[] part;
        private long lengthSum;
        private long values;
        private OpKind kind;

        Filler(DeviceBatch batch, int vs, ValueLengths lengths) {
            this.batch = batch;
            this.vs = vs;
            this.lengths = lengths;
            this.part = new byte[PART * vs];
        }

        void fill(int m, OpKind kind, long first, Keys keys, long version) {
            this.kind = kind;
            ByteBuffer kb = ByteBuffer.wrap(keyColumn).order(ByteOrder.LITTLE_ENDIAN);
            for (int i = 0; i < m; i++) {
                long k = keys.of(first + i);
                kinds[i] = (byte) kind.ordinal();
                kb.putLong(i * 8, k);
                keyOf[i] = k;
                versionOf[i] = version + first + i;
                lengthColumn[i] = lengths.of(k, versionOf[i], vs);
            }
            batch.uploadKindsAndKeys(m, kinds, keyColumn);
            if (kind.hasValue()) {
                ByteBuffer vb = ByteBuffer.wrap(part).order(ByteOrder.LITTLE_ENDIAN);
                for (int p = 0; p < m; p += PART) {
                    int c = Math.min(PART, m - p);
                    for (int i = 0; i < c; i++) {
                        vb.putLong(i * vs, keyOf[p + i]);
                        vb.putLong(i * vs + 8, versionOf[p + i]);
                        lengthSum += lengthColumn[p + i];
                        values++;
                    }
                    cuMemcpyHtoD(batch.values().withByteOffset((long) p * vs), Pointer.to(part), (long) c * vs);
                }
            }
            if (lengths == ValueLengths.MIXED) {
                batch.uploadLengths(lengthColumn);
            }
        }

        void check(Outcome want) {
            byte[] codes = batch.downloadCodes();
            for (int i = 0; i < codes.length; i++) {
                if (Outcome.ofCode(codes[i]) != want) {
                    throw new IllegalStateException(kind + " of key " + keyOf[i] + ": " + Outcome.ofCode(codes[i]) + ", not " + want);
                }
            }
            if (kind == OpKind.GET && lengths == ValueLengths.MIXED) {
                int[] got = batch.downloadOutLengths();
                for (int i = 0; i < codes.length; i++) {
                    if (got[i] < 16 || got[i] > vs) {
                        throw new IllegalStateException("key " + keyOf[i] + " read a value of " + got[i] + " bytes");
                    }
                }
            }
        }

        double meanLength() {
            return values == 0 ? 0 : (double) lengthSum / values;
        }
    }
}
