package org.gphash.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.SplittableRandom;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.GPHashIndex;

/**
 * What a pool variant costs the CPU engine against a plain format 2 pool: item checksums, or pool
 * format 3 (issue 53: values framed in a heap of size classes). The same pool built twice, with and
 * without the variant, then the same uniform GETs and updates on each, alternating so both see the
 * same machine.
 *
 * <pre>./gphash run org.gphash.bench.ItemChecksumCost [items=1000000] [ops=2000000] [threads=2] [rounds=2] [checksums|format3]</pre>
 *
 * Prints Mops/s per phase and the ratio with/without (values of 128 bytes, 8-byte keys, batches of
 * 4096, the pool on /dev/shm where there is one), the pools' bytes, and each pool's open after its
 * clean close.
 */
public final class ItemChecksumCost {

    private static final int VALUE = 128;
    private static final int BATCH = 4096;

    private ItemChecksumCost() {
    }

    public static void main(String[] args) throws Exception {
        long items = args.length > 0 ? Long.parseLong(args[0]) : 1_000_000;
        long ops = args.length > 1 ? Long.parseLong(args[1]) : 2_000_000;
        int threads = args.length > 2 ? Integer.parseInt(args[2]) : 2;
        int rounds = args.length > 3 ? Integer.parseInt(args[3]) : 2;
        String variant = args.length > 4 ? args[4] : "checksums";
        if (!variant.equals("checksums") && !variant.equals("format3")) {
            throw new IllegalArgumentException("the variant is checksums or format3, got " + variant);
        }
        Path dir = Files.isDirectory(Path.of("/dev/shm")) ? Path.of("/dev/shm") : Path.of(System.getProperty("java.io.tmpdir"));
        Path plain = dir.resolve("checksum-cost-plain-" + ProcessHandle.current().pid() + ".pool");
        Path summed = dir.resolve("checksum-cost-summed-" + ProcessHandle.current().pid() + ".pool");
        // Warm-up: the same code paths on throwaway pools, so that neither measured pool gets a cold JIT.
        for (boolean sums : new boolean[] {false, true}) {
            Path w = dir.resolve("checksum-cost-warmup-" + ProcessHandle.current().pid() + ".pool");
            try (GPHashIndex warm = variant(GPHashIndex.builder(w).initialCapacity(200_000), sums ? variant : "").create()) {
                run(warm, 200_000, 200_000, threads, Op.LOAD);
                run(warm, 200_000, 400_000, threads, Op.GET);
                run(warm, 200_000, 400_000, threads, Op.UPDATE);
            } finally {
                Files.deleteIfExists(w);
            }
        }
        try (GPHashIndex a = GPHashIndex.builder(plain).initialCapacity(items).create();
             GPHashIndex b = variant(GPHashIndex.builder(summed).initialCapacity(items), variant).create()) {
            double[][] mops = new double[2][3];
            for (int i = 0; i < 2; i++) {
                GPHashIndex index = i == 0 ? a : b;
                mops[i][0] += run(index, items, items, threads, Op.LOAD);
            }
            for (int r = 0; r < rounds; r++) {
                for (int i = 0; i < 2; i++) {
                    GPHashIndex index = i == 0 ? a : b;
                    mops[i][1] += run(index, items, ops, threads, Op.GET) / rounds;
                    mops[i][2] += run(index, items, ops, threads, Op.UPDATE) / rounds;
                }
            }
            System.out.printf(Locale.ROOT, "%s: %d items, %d ops per phase, %d threads, %d rounds%n",
                    variant.equals("format3") ? "pool format 3" : "item checksums", items, ops, threads, rounds);
            String[] names = {"load (inserts)", "GET uniform", "update uniform"};
            System.out.println("| phase | without (Mops/s) | with (Mops/s) | with / without |");
            System.out.println("| --- | ---: | ---: | ---: |");
            for (int p = 0; p < 3; p++) {
                System.out.printf(Locale.ROOT, "| %s | %.3f | %.3f | %.2fx |%n", names[p], mops[0][p], mops[1][p],
                        mops[1][p] / mops[0][p]);
            }
            System.out.printf(Locale.ROOT, "pool bytes: without %d, with %d (%.3fx)%n", a.stats().fileBytes(),
                    b.stats().fileBytes(), (double) b.stats().fileBytes() / a.stats().fileBytes());
            a.close();
            b.close();
            // The open after a clean close: format 2 reads its close record, format 3 scans the table.
            System.out.printf(Locale.ROOT, "open after a clean close: without %.1f ms, with %.1f ms%n", openMillis(plain),
                    openMillis(summed));
        } finally {
            Files.deleteIfExists(plain);
            Files.deleteIfExists(summed);
        }
    }

    /** Milliseconds to open the pool at {@code path} (then closed). */
    private static double openMillis(Path path) {
        long t0 = System.nanoTime();
        try (GPHashIndex index = GPHashIndex.builder(path).open()) {
            return (System.nanoTime() - t0) / 1e6;
        }
    }

    enum Op { LOAD, GET, UPDATE }

    /** {@code b} with the variant measured ({@code ""}: none). */
    private static GPHashIndex.Builder variant(GPHashIndex.Builder b, String variant) {
        return switch (variant) {
            case "checksums" -> b.itemChecksums(true);
            case "format3" -> b.poolFormat(3);
            default -> b;
        };
    }

    /** Runs {@code ops} operations in batches over {@code threads} threads; returns Mops/s. */
    private static double run(GPHashIndex index, long items, long ops, int threads, Op op) throws InterruptedException {
        Thread[] ts = new Thread[threads];
        long per = ops / threads;
        long start = System.nanoTime();
        for (int t = 0; t < threads; t++) {
            int id = t;
            ts[t] = new Thread(() -> {
                SplittableRandom r = new SplittableRandom(id * 7919L + op.ordinal());
                Batch batch = index.newBatch(BATCH);
                BatchResult result = new BatchResult(VALUE, BATCH);
                byte[] value = new byte[VALUE];
                long first = id * per;
                for (long i = 0; i < per; i++) {
                    long k = op == Op.LOAD ? first + i : r.nextLong(items);
                    value[0] = (byte) k;
                    switch (op) {
                        case LOAD -> batch.insert(k, value);
                        case GET -> batch.get(k);
                        case UPDATE -> batch.update(k, value);
                    }
                    if (batch.size() == BATCH) {
                        index.execute(batch, result);
                        batch.clear();
                    }
                }
                if (batch.size() > 0) {
                    index.execute(batch, result);
                }
            });
            ts[t].start();
        }
        for (Thread t : ts) {
            t.join();
        }
        return per * threads / ((System.nanoTime() - start) / 1e3);
    }
}
