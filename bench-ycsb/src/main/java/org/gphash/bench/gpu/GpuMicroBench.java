package org.gphash.bench.gpu;

import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.GPHashConfig;
import org.gphash.GPHashIndex;
import org.gphash.OpKind;
import org.gphash.cli.Cli;
import org.gphash.cli.ToolVersion;
import org.gphash.cuda.DeviceBatch;
import org.gphash.cuda.GpuEngine;
import org.gphash.cuda.GpuEngines;
import org.gphash.index.CpuEngine;
import org.gphash.spi.Engine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * Micro benchmark of the GPU engine against the CPU-assisted path on the same host and the same
 * operation stream (GPHash §4.2): positive and negative search, insert, update and delete over a
 * loaded pool on tmpfs, for each batch size. The CPU-assisted path is the CPU engine with
 * {@code --threads} threads, paying the copies a GPU application would pay: keys (and values of
 * writes) from GPU memory to the host before a batch, found values back after it.
 *
 * <pre>
 * ./gphash run org.gphash.bench.gpu.GpuMicroBench --keys 16777216 --key-sizes 8,32 --batches 12,14,16,18,20
 * </pre>
 */
public final class GpuMicroBench {

    private static final int VALUE_SIZE = 128;

    enum Op { POSITIVE_SEARCH, NEGATIVE_SEARCH, UPDATE, INSERT, DELETE }

    record Options(long keys, int[] keySizes, int[] batchLog2, long opsPerPoint, Path dir, int threads, boolean cpu) {
        static Options parse(String[] args) throws Cli.UsageException {
            Line l = Cli.parse(new Line(), args);
            if (l.help.requested()) {
                System.out.print(Cli.usage(l));
                System.exit(0);
            }
            Cli.range("--keys", l.keys, 1, Long.MAX_VALUE / 2);
            Cli.range("--ops", l.ops, 1, Long.MAX_VALUE / 2);
            Cli.range("--threads", l.threads, 1, 1024);
            for (int b : l.batches) {
                Cli.range("--batches", b, 0, 26);
            }
            return new Options(l.keys, l.keySizes, l.batches, l.ops, l.dir, l.threads, !l.noCpu);
        }
    }

    /** The command line ({@link Cli}: picocli). */
    @Command(versionProvider = ToolVersion.class, name = "GpuMicroBench", sortOptions = false, usageHelpAutoWidth = false,
            description = "The GPU engine against the CPU-assisted path, per operation, key size and batch size.")
    static final class Line {
        @Option(names = "--keys", paramLabel = "N", description = "keys loaded; default 2^24")
        long keys = 1L << 24;
        @Option(names = "--key-sizes", paramLabel = "LIST", split = ",", description = "default 8,32")
        int[] keySizes = {8, 32};
        @Option(names = "--batches", paramLabel = "LIST", split = ",", description = "log2 batch sizes; default 12,14,16,18,20")
        int[] batches = {12, 14, 16, 18, 20};
        @Option(names = "--ops", paramLabel = "N", description = "operations per point; default 2^22")
        long ops = 1L << 22;
        @Option(names = "--dir", paramLabel = "DIR", description = "default /dev/shm")
        Path dir = Path.of("/dev/shm");
        @Option(names = "--threads", paramLabel = "T", description = "CPU-assisted threads; default 16")
        int threads = 16;
        @Option(names = "--no-cpu", description = "skip the CPU-assisted path")
        boolean noCpu;
        @Mixin
        Cli.Help help = new Cli.Help();
    }

    record Point(int keySize, int batch, Op op, double gpuMops, double gpuBatchMicros, double deviceMops,
                 double cpuMops, double cpuBatchMicros) {
    }

    public static void main(String[] args) throws Exception {
        Options o;
        try {
            o = Options.parse(args);
        } catch (Cli.UsageException e) {
            System.err.println("GpuMicroBench: " + e.getMessage());
            System.exit(2);
            return;
        }
        List<Point> points = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(o.threads());
        try {
            for (int ks : o.keySizes()) {
                Path gp = o.dir().resolve("gphash-bench-gpu-" + ks + ".pool");
                Path cp = o.dir().resolve("gphash-bench-cpu-" + ks + ".pool");
                Files.deleteIfExists(gp);
                Files.deleteIfExists(cp);
                long capacity = (long) (o.keys() * 1.3);
                try (GpuEngine gpu = GpuEngines.create(config(gp, Backend.GPU, ks, capacity));
                     CpuEngine cpu = o.cpu() ? CpuEngine.create(config(cp, Backend.CPU, ks, capacity)) : null;
                     HostRoundTrip copies = new HostRoundTrip();
                     DeviceBatch device = new DeviceBatch(ks, VALUE_SIZE, 1 << 20)) {
                    System.out.printf(Locale.ROOT, "# %d-byte keys on %s: loading %,d keys%n", ks, gpu.features().deviceName(), o.keys());
                    double gl = load(gpu, o, ks, null);
                    double cl = cpu == null ? 0 : load(cpu, o, ks, pool);
                    System.out.printf(Locale.ROOT, "load: GPU %.2f Mops/s, CPU (%d threads) %.2f Mops/s; GPU %s%n", gl, o.threads(),
                            cl, gpu.stats());
                    long fresh = o.keys() * 8;
                    for (int log2 : o.batchLog2()) {
                        int b = 1 << log2;
                        for (Op op : Op.values()) {
                            Point p = measure(gpu, cpu, copies, device, pool, o, ks, b, op, fresh);
                            points.add(p);
                            System.out.printf(Locale.ROOT, "%2d B keys  batch 2^%-2d  %-16s GPU %8.2f Mops/s (%9.1f us/batch)  "
                                            + "device-resident %8.2f Mops/s  CPU-assisted %8.2f Mops/s (%9.1f us/batch)  "
                                            + "ratio %6.2f%n", ks, log2, op,
                                    p.gpuMops(), p.gpuBatchMicros(), p.deviceMops(), p.cpuMops(), p.cpuBatchMicros(),
                                    p.cpuMops() == 0 ? 0 : p.gpuMops() / p.cpuMops());
                        }
                        fresh += 2 * o.opsPerPoint();
                    }
                    System.out.printf("GPU pool after the sweep: %s%n", gpu.stats());
                }
                Files.deleteIfExists(gp);
                Files.deleteIfExists(cp);
            }
        } finally {
            pool.shutdownNow();
        }
        System.out.println();
        System.out.println("| key | batch | operation | GPU Mops/s (host batch) | GPU us/batch | GPU Mops/s (device-resident) "
                + "| CPU-assisted Mops/s | CPU-assisted us/batch | GPU host batch / CPU-assisted |");
        System.out.println("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
        for (Point p : points) {
            System.out.printf(Locale.ROOT, "| %d B | 2^%d | %s | %.2f | %.1f | %.2f | %.2f | %.1f | %.2f |%n", p.keySize(),
                    Integer.numberOfTrailingZeros(p.batch()), p.op().name().toLowerCase(Locale.ROOT).replace('_', ' '),
                    p.gpuMops(), p.gpuBatchMicros(), p.deviceMops(), p.cpuMops(), p.cpuBatchMicros(),
                    p.cpuMops() == 0 ? 0 : p.gpuMops() / p.cpuMops());
        }
    }

    private static GPHashConfig config(Path path, Backend backend, int keySize, long capacity) {
        return GPHashIndex.builder(path).backend(backend).keySize(keySize).valueSize(VALUE_SIZE)
                .initialCapacity(capacity).seed(20261121L).config();
    }

    static byte[] key(long k, int keySize) {
        byte[] b = new byte[keySize];
        ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).putLong(0, k);
        for (int i = 8; i < keySize; i++) {
            b[i] = (byte) (k >>> (i % 8));
        }
        return b;
    }

    static byte[] value(long k, long version) {
        byte[] v = new byte[VALUE_SIZE];
        ByteBuffer.wrap(v).order(ByteOrder.LITTLE_ENDIAN).putLong(0, k).putLong(8, version);
        return v;
    }

    /** Inserts keys 0..keys-1 in batches of 2^20; returns Mops/s. */
    private static double load(Engine e, Options o, int ks, ExecutorService pool) throws Exception {
        int b = 1 << 20;
        long nanos = 0;
        BatchResult r = new BatchResult(VALUE_SIZE, b);
        List<BatchResult> results = new ArrayList<>();
        for (long first = 0; first < o.keys(); first += b) {
            int n = (int) Math.min(b, o.keys() - first);
            Batch batch = Batch.create(ks, VALUE_SIZE, n);
            for (long k = first; k < first + n; k++) {
                batch.insert(key(k, ks), value(k, 0));
            }
            List<Batch> parts = pool == null ? null : split(batch, o.threads(), ks);
            long t0 = System.nanoTime();
            if (pool == null) {
                e.execute(batch, r);
            } else {
                parallel(e, pool, parts, results);
            }
            nanos += System.nanoTime() - t0;
        }
        return o.keys() / (nanos / 1e3);
    }

    private static Point measure(GpuEngine gpu, CpuEngine cpu, HostRoundTrip copies, DeviceBatch device,
                                 ExecutorService pool, Options o, int ks, int b, Op op, long fresh) throws Exception {
        long batches = Math.max(1, o.opsPerPoint() / b);
        SplittableRandom random = new SplittableRandom(b * 31L + op.ordinal());
        long gpuNanos = 0;
        long deviceNanos = 0;
        long cpuNanos = 0;
        BatchResult r = new BatchResult(VALUE_SIZE, b);
        List<BatchResult> results = new ArrayList<>();
        // INSERT writes fresh keys; DELETE removes those of the INSERT point just before it.
        long insertBase = fresh;
        for (long i = 0; i < batches; i++) {
            Batch batch = Batch.create(ks, VALUE_SIZE, b);
            for (int j = 0; j < b; j++) {
                long seq = i * b + j;
                switch (op) {
                    case POSITIVE_SEARCH -> batch.add(OpKind.GET, key(random.nextLong(o.keys()), ks), null);
                    case NEGATIVE_SEARCH -> batch.add(OpKind.GET, key(o.keys() * 4 + random.nextLong(o.keys()), ks), null);
                    case UPDATE -> {
                        long k = random.nextLong(o.keys());
                        batch.add(OpKind.UPDATE, key(k, ks), value(k, seq + 1));
                    }
                    case INSERT -> batch.add(OpKind.INSERT, key(insertBase + seq, ks), value(insertBase + seq, 1));
                    case DELETE -> batch.add(OpKind.DELETE, key(insertBase + seq, ks), null);
                }
            }
            // Host batches (keys from and values to Java memory) on even batches, device-resident on odd
            // ones, so both forms see the same table state on average; INSERT and DELETE need every batch
            // run exactly once, which this keeps.
            if ((i & 1) == 0 || batches == 1) {
                long t0 = System.nanoTime();
                gpu.execute(batch, r);
                gpuNanos += System.nanoTime() - t0;
            } else {
                device.upload(batch);
                long t0 = System.nanoTime();
                gpu.features().executeOnDevice(device);
                deviceNanos += System.nanoTime() - t0;
            }
            if (cpu != null) {
                List<Batch> parts = split(batch, o.threads(), ks);
                copies.placeOnDevice(batch.keys());
                long t1 = System.nanoTime();
                // The CPU-assisted path: keys (and written values) to the host, the CPU engine, found values back.
                copies.keysToHost(batch.keys());
                if (op == Op.UPDATE || op == Op.INSERT) {
                    copies.keysToHost(batch.values());
                }
                parallel(cpu, pool, parts, results);
                if (op == Op.POSITIVE_SEARCH || op == Op.NEGATIVE_SEARCH) {
                    for (int p = 0; p < parts.size(); p++) {
                        copies.valuesToDevice(results.get(p).values());
                    }
                }
                cpuNanos += System.nanoTime() - t1;
            }
        }
        long total = batches * b;
        long hostBatches = batches == 1 ? 1 : (batches + 1) / 2;
        long deviceBatches = batches - hostBatches;
        return new Point(ks, b, op, hostBatches * b / (gpuNanos / 1e3), gpuNanos / 1e3 / hostBatches,
                deviceBatches == 0 ? 0 : deviceBatches * b / (deviceNanos / 1e3),
                cpu == null ? 0 : total / (cpuNanos / 1e3), cpu == null ? 0 : cpuNanos / 1e3 / batches);
    }

    /** Cuts a batch into {@code parts} batches, one per CPU thread. */
    static List<Batch> split(Batch batch, int parts, int ks) {
        List<Batch> out = new ArrayList<>();
        int n = batch.size();
        int per = (n + parts - 1) / parts;
        for (int first = 0; first < n; first += per) {
            int m = Math.min(per, n - first);
            int vs = batch.valueSize();
            Batch p = Batch.create(ks, vs, m);
            for (int i = first; i < first + m; i++) {
                OpKind kind = batch.kind(i);
                byte[] v = kind.hasValue()
                        ? batch.values().asSlice((long) i * vs, vs).toArray(ValueLayout.JAVA_BYTE)
                        : null;
                p.add(kind, batch.key(i), v);
            }
            out.add(p);
        }
        return out;
    }

    /** Runs part i on a pool thread into {@code results.get(i)} (reused across batches: no allocation). */
    static void parallel(Engine e, ExecutorService pool, List<Batch> parts, List<BatchResult> results)
            throws Exception {
        while (results.size() < parts.size()) {
            results.add(new BatchResult(parts.get(results.size()).valueSize(), 1));  // the parts' values, not the default size
        }
        List<Callable<Void>> tasks = new ArrayList<>();
        for (int i = 0; i < parts.size(); i++) {
            Batch p = parts.get(i);
            BatchResult r = results.get(i);
            tasks.add(() -> {
                e.execute(p, r);
                return null;
            });
        }
        for (Future<Void> f : pool.invokeAll(tasks)) {
            f.get();
        }
    }

    private GpuMicroBench() {
    }
}
