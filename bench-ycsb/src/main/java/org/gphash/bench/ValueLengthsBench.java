package org.gphash.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.SplittableRandom;

import org.gphash.Durability;
import org.gphash.GPHashIndex;
import org.gphash.index.CpuEngine;

/**
 * Issue 53's workload of values of mixed length on the CPU engine (format 3, step 4): {@code items}
 * values of 8 B to 4 KiB (lognormal around 80 B, mean about 130 B, as the design's simulation and
 * {@code SizeClassHeapTest}), loaded by single puts, then {@code rounds} rounds that rewrite every value
 * at a new length (new block taken, old one reclaimed), then uniform gets; the same on a format 3 pool
 * of fixed 128-byte values and a format 2 pool of 128-byte values in the same run, for the issue's
 * "mixed sizes at 0.8x of fixed 128" and its space target ("after ten rounds of updates that change each
 * value's size, the pool holds at most 1.3x the live bytes").
 *
 * <pre>./gphash run org.gphash.bench.ValueLengthsBench [items=400000] [rounds=10] [threads=2] [all|mixed]</pre>
 *
 * ({@code mixed}: the pool of mixed lengths alone, for a profile of it.)
 *
 * Prints, per pool, million operations a second for the load, the rounds (all of them) and the gets;
 * the heap bytes the values take (format 3: the segments their classes hold; format 2: the blocks in
 * use) over the live value bytes after the load and at the worst of the rounds (blocks retired but not
 * yet reclaimed count); and the file's bytes (the table, and the first heap region sized for the
 * initial capacity) with the pool's figures below.
 */
public final class ValueLengthsBench {

    private ValueLengthsBench() {
    }

    /** A pool variant: its format, its value size, and whether values vary in length. */
    private record Variant(String name, int format, int valueSize, boolean mixed) {
    }

    public static void main(String[] args) throws Exception {
        int items = args.length > 0 ? Integer.parseInt(args[0]) : 400_000;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        int threads = args.length > 2 ? Integer.parseInt(args[2]) : 2;
        boolean mixedOnly = args.length > 3 && args[3].equals("mixed");
        Path dir = Files.isDirectory(Path.of("/dev/shm")) ? Path.of("/dev/shm") : Path.of(System.getProperty("java.io.tmpdir"));
        Variant[] variants = {
            new Variant("format 3, 8 B-4 KiB", 3, 4096, true),
            new Variant("format 3, 128 B", 3, 128, false),
            new Variant("format 2, 128 B", 2, 128, false),
        };
        if (mixedOnly) {
            variants = new Variant[] {variants[0]};
        }
        for (Variant v : variants) {  // warm-up: every code path on a throwaway pool, so that no variant gets a cold JIT
            measure(v, dir, Math.min(items, 100_000), 2, threads, false);
        }
        System.out.printf(Locale.ROOT, "values of mixed length: %d items, %d rounds, %d threads, single calls, "
                + "durability PER_BATCH, pools in %s%n", items, rounds, threads, dir);
        System.out.println("| pool | load (Mops/s) | rewrite rounds (Mops/s) | gets (Mops/s) | live value bytes | "
                + "heap held / live after load | worst over the rounds | file bytes at the end |");
        System.out.println("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
        for (Variant v : variants) {
            measure(v, dir, items, rounds, threads, true);
        }
    }

    private static void measure(Variant v, Path dir, int items, int rounds, int threads, boolean print) throws Exception {
        Path path = dir.resolve("value-lengths-" + ProcessHandle.current().pid() + ".pool");
        int[] length = new int[items];
        try (GPHashIndex index = GPHashIndex.builder(path).keySize(8).valueSize(v.valueSize()).poolFormat(v.format())
                .initialCapacity(items).durability(Durability.PER_BATCH).create()) {
            CpuEngine engine = (CpuEngine) index.engine();
            double load = run(index, v, length, threads, 0, items);
            double heldAfterLoad = (double) engine.valueBytesHeld() / live(length);
            double worst = 0;
            long rewriteNanos = 0;
            for (int r = 1; r <= rounds; r++) {
                long t0 = System.nanoTime();
                run(index, v, length, threads, r, items);
                rewriteNanos += System.nanoTime() - t0;
                worst = Math.max(worst, (double) engine.valueBytesHeld() / live(length));  // retired blocks included
            }
            double rewrites = (double) items * rounds / (rewriteNanos / 1e3);
            double gets = gets(index, items, threads);
            long liveAtEnd = live(length);
            if (print) {
                System.out.printf(Locale.ROOT, "| %s | %.3f | %.3f | %.3f | %d | %.3f | %.3f | %d |%n", v.name(), load,
                        rewrites, gets, liveAtEnd, heldAfterLoad, worst, index.stats().fileBytes());
                System.out.printf(Locale.ROOT, "  %s: %s%n", v.name(), index.stats());
            }
        } finally {
            Files.deleteIfExists(path);
        }
    }

    private static long live(int[] length) {
        long bytes = 0;
        for (int l : length) {
            bytes += l;
        }
        return bytes;
    }

    /** Round {@code round} (0: the load) writes every key once, its length drawn anew; {@return Mops/s} */
    private static double run(GPHashIndex index, Variant v, int[] length, int threads, int round, int items)
            throws InterruptedException {
        Thread[] ts = new Thread[threads];
        long start = System.nanoTime();
        for (int t = 0; t < threads; t++) {
            int id = t;
            ts[t] = new Thread(() -> {
                SplittableRandom r = new SplittableRandom(id * 7919L + round * 104729L);
                byte[][] byLength = new byte[v.valueSize() + 1][];
                for (int k = id; k < items; k += threads) {
                    int l = v.mixed() ? size(r) : v.valueSize();
                    byte[] value = byLength[l] == null ? byLength[l] = new byte[l] : byLength[l];
                    if (l > 0) {
                        value[0] = (byte) round;
                    }
                    index.put(k, value);
                    length[k] = l;
                }
            });
            ts[t].start();
        }
        for (Thread t : ts) {
            t.join();
        }
        return items / ((System.nanoTime() - start) / 1e3);
    }

    /** {@code 2 * items} uniform gets; {@return Mops/s} */
    private static double gets(GPHashIndex index, int items, int threads) throws InterruptedException {
        Thread[] ts = new Thread[threads];
        long per = 2L * items / threads;
        long start = System.nanoTime();
        for (int t = 0; t < threads; t++) {
            int id = t;
            ts[t] = new Thread(() -> {
                SplittableRandom r = new SplittableRandom(id);
                for (long i = 0; i < per; i++) {
                    if (index.get(r.nextInt(items)) == null) {
                        throw new IllegalStateException("a loaded key is missing");
                    }
                }
            });
            ts[t].start();
        }
        for (Thread t : ts) {
            t.join();
        }
        return per * threads / ((System.nanoTime() - start) / 1e3);
    }

    /** Lognormal around 80 bytes (sigma 1), kept within 8 B to 4 KiB: the design's simulation's sizes. */
    private static int size(SplittableRandom r) {
        for (;;) {
            int v = (int) Math.exp(Math.log(80) + gaussian(r));
            if (v >= 8 && v <= 4096) {
                return v;
            }
        }
    }

    private static double gaussian(SplittableRandom r) {
        double u = 1 - r.nextDouble();  // (0, 1]
        return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * r.nextDouble());
    }
}
