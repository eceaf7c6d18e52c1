package org.gphash.bench.gpu;

import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.SplittableRandom;

import jcuda.Pointer;
import org.gphash.Backend;
import org.gphash.IndexMirror;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.bktcache.BktCacheConfig;
import org.gphash.cuda.DeviceBatch;
import org.gphash.cuda.GpuEngine;
import org.gphash.cuda.GpuEngines;

/**
 * Values of up to 1 MiB on the GPU (issue 53): device-resident batches on a format 3 pool of 1 MiB
 * values, whose blocks over 8 KiB take runs of whole segments (pipeline/heap_segments.cuh's runs
 * step). For each length (a fixed one, or uniform from 8 KiB to 1 MiB: each update a new length): the
 * load of {@code --keys} keys, uniform updates and uniform gets, batches of {@code --batch}, in
 * operations/s and value bytes/s, wall (the device batch's own time: its columns are filled before it)
 * and on the GPU's clock, the updates after one batch of them untimed (it grows the heap); then one
 * batch of updates by stage. Every outcome is checked, and every
 * read's length.
 *
 * <p>{@code LargeValuesBench [--keys N] [--ops N] [--batch N] [--lengths 16384,262144,1048576,mixed] [--dir D]};
 * defaults 4096 keys, 16384 operations, batches of 1024, /dev/shm.
 */
public final class LargeValuesBench {

    private static final int VS = 1 << 20;
    private static final int MIN_RUN_LENGTH = 8 << 10;

    private LargeValuesBench() {
    }

    public static void main(String[] args) throws Exception {
        long keys = 4096;
        long ops = 16384;
        int batch = 1024;
        String lengths = "16384,262144,1048576,mixed";
        Path dir = Path.of("/dev/shm");
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--keys" -> keys = Long.parseLong(args[++i]);
                case "--ops" -> ops = Long.parseLong(args[++i]);
                case "--batch" -> batch = Integer.parseInt(args[++i]);
                case "--lengths" -> lengths = args[++i];
                case "--dir" -> dir = Path.of(args[++i]);
                default -> throw new IllegalArgumentException("unknown argument " + args[i]
                        + "; LargeValuesBench [--keys N] [--ops N] [--batch N] [--lengths L,L,mixed] [--dir D]");
            }
        }
        StringBuilder table = new StringBuilder();
        table.append("| values | load: Mops/s wall / GPU, GB/s wall | update | get |\n| --- | --- | --- | --- |\n");
        for (String l : lengths.split(",")) {
            int fixed = l.equals("mixed") ? -1 : Integer.parseInt(l);
            double[][] r = run(dir.resolve("gphash-large-values.pool"), keys, ops, batch, fixed);
            table.append("| ").append(fixed < 0 ? "8 KiB-1 MiB uniform" : fixed + " B");
            for (double[] row : r) {
                table.append(String.format(Locale.ROOT, " | %.3f / %.3f, %.1f", row[0], row[1], row[2]));
            }
            table.append(" |\n");
        }
        System.out.println();
        System.out.print(table);
    }

    /** {load, update, get} as {wall Mops/s, GPU Mops/s, wall GB/s of value bytes}. */
    private static double[][] run(Path pool, long keys, long ops, int batchSize, int fixed) throws Exception {
        Files.deleteIfExists(pool);
        double[][] out = new double[3][];
        try (GpuEngine gpu = GpuEngines.create(GpuTargetsBench.config(pool, Backend.GPU, VS, keys, IndexMirror.REQUIRED,
                BktCacheConfig.DISABLED, 3));
             DeviceBatch batch = new DeviceBatch(gpu.cuda(), 8, VS, batchSize)) {
            Filler f = new Filler(batch, batchSize, fixed);
            SplittableRandom random = new SplittableRandom(5357);
            out[0] = pass(gpu, f, keys, OpKind.INSERT, r -> r, random, Outcome.INSERTED);
            // The first batch of updates grows the heap by its new values (the old ones are freed after
            // them, in the same run): a growth each pool makes once, not what updates cost after it.
            pass(gpu, f, batchSize, OpKind.UPDATE, r -> random.nextLong(keys), random, Outcome.UPDATED);
            out[1] = pass(gpu, f, ops, OpKind.UPDATE, r -> random.nextLong(keys), random, Outcome.UPDATED);
            out[2] = pass(gpu, f, ops, OpKind.GET, r -> random.nextLong(keys), random, Outcome.FOUND);
            gpu.diagnostics().profileStages(true);
            pass(gpu, f, batchSize, OpKind.UPDATE, r -> random.nextLong(keys), random, Outcome.UPDATED);
            System.out.printf(Locale.ROOT, "%s, update: %s%n", fixed < 0 ? "mixed" : fixed + " B", StageShares.stages(gpu, batchSize));
            gpu.diagnostics().profileStages(false);
            System.out.printf(Locale.ROOT, "%s: %s%n", fixed < 0 ? "mixed" : fixed + " B", gpu.stats());
        }
        Files.deleteIfExists(pool);
        return out;
    }

    interface Keys {
        long of(long i);
    }

    private static double[] pass(GpuEngine gpu, Filler f, long n, OpKind kind, Keys keys, SplittableRandom random,
                                 Outcome want) {
        long wall = 0;
        long onGpu = 0;
        long bytes = 0;
        for (long first = 0; first < n; first += f.size) {
            int m = (int) Math.min(f.size, n - first);
            bytes += f.fill(m, kind, first, keys, random);
            long t0 = System.nanoTime();
            gpu.features().executeOnDevice(f.batch);
            wall += System.nanoTime() - t0;
            onGpu += gpu.features().lastBatchGpuNanos();
            bytes += f.check(want);
        }
        return new double[] {n / (wall / 1e3), onGpu == 0 ? 0 : n / (onGpu / 1e3), bytes / (double) wall};
    }

    /** Fills the one device batch: keys, kinds, lengths, each value's first 16 bytes its key and length. */
    private static final class Filler {
        final DeviceBatch batch;
        final int size;
        private final int fixed;
        private final byte[] kinds;
        private final byte[] keyColumn;
        private final int[] lengthColumn;
        private final long[] keyOf;
        private final int[] lengthOf = new int[1 << 24];
        private final byte[] head = new byte[16];
        private OpKind kind;
        private int m;

        Filler(DeviceBatch batch, int size, int fixed) {
            this.batch = batch;
            this.size = size;
            this.fixed = fixed;
            this.kinds = new byte[size];
            this.keyColumn = new byte[size * 8];
            this.lengthColumn = new int[size];
            this.keyOf = new long[size];
        }

        /** {@return the value bytes the batch writes} */
        long fill(int m, OpKind kind, long first, Keys keys, SplittableRandom random) {
            this.kind = kind;
            this.m = m;
            ByteBuffer kb = ByteBuffer.wrap(keyColumn).order(ByteOrder.LITTLE_ENDIAN);
            long bytes = 0;
            for (int i = 0; i < m; i++) {
                long k = keys.of(first + i);
                kinds[i] = (byte) kind.ordinal();
                kb.putLong(i * 8, k);
                keyOf[i] = k;
                lengthColumn[i] = 0;
                if (kind.hasValue()) {
                    int length = fixed >= 0 ? fixed : MIN_RUN_LENGTH + random.nextInt(VS - MIN_RUN_LENGTH + 1);
                    lengthColumn[i] = length;
                    lengthOf[(int) k] = length;
                    bytes += length;
                }
            }
            batch.uploadKindsAndKeys(m, kinds, keyColumn);
            for (int i = 0; kind.hasValue() && i < m; i++) {
                ByteBuffer.wrap(head).order(ByteOrder.LITTLE_ENDIAN).putLong(0, keyOf[i]).putLong(8, lengthColumn[i]);
                cuMemcpyHtoD(batch.values().withByteOffset((long) i * VS), Pointer.to(head), 16);
            }
            batch.uploadLengths(Arrays.copyOf(lengthColumn, m));
            return bytes;
        }

        /** {@return the value bytes the batch read} */
        long check(Outcome want) {
            byte[] codes = batch.downloadCodes();
            for (int i = 0; i < m; i++) {
                if (Outcome.ofCode(codes[i]) != want) {
                    throw new IllegalStateException(kind + " of key " + keyOf[i] + ": " + Outcome.ofCode(codes[i]) + ", not " + want);
                }
            }
            if (kind != OpKind.GET) {
                return 0;
            }
            int[] got = batch.downloadOutLengths();
            long bytes = 0;
            for (int i = 0; i < m; i++) {
                if (got[i] != lengthOf[(int) keyOf[i]]) {
                    throw new IllegalStateException("key " + keyOf[i] + " read a value of " + got[i] + " bytes, not "
                            + lengthOf[(int) keyOf[i]]);
                }
                bytes += got[i];
            }
            return bytes;
        }
    }
}
