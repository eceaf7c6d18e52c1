package org.gphash.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

import org.gphash.format.HeapChunk;
import org.gphash.format.ValueClasses;
import org.gphash.table.SizeClassHeap;
import org.gphash.table.ValueHeap;

/**
 * The value heaps' allocators alone, without a pool (issue 53: "measure it against the fixed-size
 * heap"): format 2's {@link ValueHeap} (one block size, lock-free claims on a bitmap) against format
 * 3's {@link SizeClassHeap} (size classes in segments, one lock), from 1 to {@code --threads} threads.
 * Each thread keeps {@code --live} blocks of its own and, for {@code --seconds}, frees its oldest and
 * takes a new one, as an update does; the figure is those pairs per second, all threads together.
 * Three rows per thread count: format 2 with 128-byte values, format 3 with the same values (their
 * class: 144-byte blocks), and format 3 with sizes of 8 B to 4 KiB (lognormal around 80 B, as the
 * issue's space target). Accounting only: no value bytes are written.
 *
 * <pre>
 * ./gphash run org.gphash.bench.HeapBench [--threads 16] [--seconds 2] [--live 100000]
 * </pre>
 */
public final class HeapBench {

    private static final int VALUE = 128;
    private static final long HEAP_BYTES = 8L << 30;

    private HeapBench() {
    }

    /** One allocator as the bench drives it: a block for a value of {@code length} bytes, and its return. */
    private interface Allocator {
        long take(int length);

        void give(long offset, int length);
    }

    public static void main(String[] args) throws Exception {
        int threads = Runtime.getRuntime().availableProcessors();
        int seconds = 2;
        int live = 100_000;
        for (int i = 0; i + 1 < args.length; i += 2) {
            String v = args[i + 1];
            switch (args[i]) {
                case "--threads" -> threads = Integer.parseInt(v);
                case "--seconds" -> seconds = Integer.parseInt(v);
                case "--live" -> live = Integer.parseInt(v);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        System.out.printf(Locale.ROOT, "HeapBench: %d live blocks a thread, %d s a row, %d CPUs, JDK %s%n", live, seconds,
                Runtime.getRuntime().availableProcessors(), Runtime.version().feature());
        System.out.println("| threads | format 2, 128 B (M pairs/s) | format 3, 128 B | format 3, 8 B-4 KiB |");
        System.out.println("| ---: | ---: | ---: | ---: |");
        List<Integer> counts = new ArrayList<>(List.of(1));
        for (int t = 2; t < threads; t *= 2) {
            counts.add(t);
        }
        if (threads > 1) {
            counts.add(threads);
        }
        for (int t : counts) {
            double fixed2 = run(formatTwo(), t, seconds, live, false);
            double fixed3 = run(formatThree(), t, seconds, live, false);
            double mixed3 = run(formatThree(), t, seconds, live, true);
            System.out.printf(Locale.ROOT, "| %d | %.2f | %.2f | %.2f |%n", t, fixed2 / 1e6, fixed3 / 1e6, mixed3 / 1e6);
        }
    }

    private static Allocator formatTwo() {
        ValueHeap heap = ValueHeap.detached(VALUE, List.of(new HeapChunk(VALUE, HEAP_BYTES)));
        return new Allocator() {
            @Override
            public long take(int length) {
                return heap.allocate();
            }

            @Override
            public void give(long offset, int length) {
                heap.free(offset);
            }
        };
    }

    private static Allocator formatThree() {
        SizeClassHeap heap = new SizeClassHeap();
        heap.addRegion(SizeClassHeap.SEGMENT_BYTES, HEAP_BYTES);
        return new Allocator() {
            @Override
            public long take(int length) {
                return heap.allocate(ValueClasses.classOf(length));
            }

            @Override
            public void give(long offset, int length) {
                heap.free(offset, ValueClasses.classOf(length));
            }
        };
    }

    /** Pairs (a block freed, one taken) a second from {@code threads} threads, after each fills its live set. */
    private static double run(Allocator heap, int threads, int seconds, int live, boolean mixed) throws Exception {
        CyclicBarrier start = new CyclicBarrier(threads + 1);
        CyclicBarrier filled = new CyclicBarrier(threads + 1);
        AtomicBoolean stop = new AtomicBoolean();
        LongAdder pairs = new LongAdder();
        List<Thread> all = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            long seed = 53L * (t + 1);
            all.add(Thread.ofPlatform().start(() -> {
                SplittableRandom random = new SplittableRandom(seed);
                long[] offsets = new long[live];
                int[] lengths = new int[live];
                try {
                    start.await();
                    for (int i = 0; i < live; i++) {
                        lengths[i] = mixed ? size(random) : VALUE;
                        offsets[i] = take(heap, lengths[i]);
                    }
                    filled.await();
                    long n = 0;
                    for (int i = 0; !stop.get(); i = i + 1 == live ? 0 : i + 1) {
                        int length = mixed ? size(random) : VALUE;
                        long fresh = take(heap, length);  // the new block first, as an update takes it
                        heap.give(offsets[i], lengths[i]);
                        offsets[i] = fresh;
                        lengths[i] = length;
                        n++;
                    }
                    pairs.add(n);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }));
        }
        start.await();
        filled.await();
        long t0 = System.nanoTime();
        Thread.sleep(seconds * 1000L);
        stop.set(true);
        long elapsed = System.nanoTime() - t0;
        for (Thread t : all) {
            t.join();
        }
        return pairs.sum() / (elapsed / 1e9);
    }

    private static long take(Allocator heap, int length) {
        long offset = heap.take(length);
        if (offset < 0) {
            throw new IllegalStateException("the bench's heap of " + HEAP_BYTES + " bytes is full");
        }
        return offset;
    }

    /** Lognormal around 80 bytes (sigma 1), kept within 8 B to 4 KiB: the space target's sizes. */
    private static int size(SplittableRandom random) {
        for (;;) {
            int v = (int) Math.exp(Math.log(80) + random.nextGaussian());
            if (v >= 8 && v <= 4096) {
                return v;
            }
        }
    }
}
