package org.gphash.bench;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * How many cache lines at random places of a shared file mapping a machine's threads read per
 * second, with {@code depth} independent loads in flight per thread: the ceiling of an engine whose
 * operations are each a handful of cache misses in a pool larger than the caches. The CPU engine's
 * get touches its four candidate buckets (three lines each for 8-byte keys and 8 slots) and its
 * value (two lines); {@code ConcurrentHashMap}'s get reads about five lines (issue 25: the CPU
 * engine's batches from 16 threads ran well below the map). The mapping is a file in {@code dir},
 * written first so that every page is there, then read by every thread at addresses from its own
 * xorshift generator, {@code depth} loads at a time whose addresses do not depend on each other.
 *
 * <pre>./gphash run org.gphash.bench.LineReadProbe THREADS [MiB, 4096] [depth, 16] [dir, /dev/shm]</pre>
 */
public final class LineReadProbe {

    private static final long LINE = 64;
    private static final long READS_PER_THREAD = 1L << 25;

    private LineReadProbe() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: LineReadProbe THREADS [MiB] [depth] [dir]");
            System.exit(2);
        }
        int threads = Integer.parseInt(args[0]);
        long size = (args.length > 1 ? Long.parseLong(args[1]) : 4096) << 20;
        int depth = args.length > 2 ? Integer.parseInt(args[2]) : 16;
        Path dir = Path.of(args.length > 3 ? args[3] : "/dev/shm");
        if (depth < 1 || depth > 64 || Long.bitCount(size) != 1) {
            System.err.println("depth must be 1 to 64 and the size a power of two of MiB");
            System.exit(2);
        }
        Path p = Files.createTempFile(dir, "gphash-line-read-", ".bin");
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ, StandardOpenOption.WRITE);
             Arena arena = Arena.ofShared()) {
            ByteBuffer ones = ByteBuffer.allocateDirect(1 << 20);
            while (ones.hasRemaining()) {
                ones.put((byte) 1);
            }
            for (long o = 0; o < size; o += ones.capacity()) {
                ones.clear();
                ch.write(ones, o);
            }
            MemorySegment m = ch.map(FileChannel.MapMode.READ_ONLY, 0, size, arena);
            readLines(m, threads, depth, size / LINE - 1);  // untimed: the mapping's pages and the JIT
            double rate = readLines(m, threads, depth, size / LINE - 1);
            System.out.printf(Locale.ROOT, "line-read %d threads, %d MiB, %d loads in flight a thread: %.0f M lines/s "
                    + "(%.1f ns a line a thread)%n", threads, size >> 20, depth, rate / 1e6, threads / rate * 1e9);
        } finally {
            Files.deleteIfExists(p);
        }
    }

    /** Every thread reads {@link #READS_PER_THREAD} random lines, {@code depth} at a time; lines per second, all threads. */
    private static double readLines(MemorySegment m, int threads, int depth, long lineMask) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch go = new CountDownLatch(1);
            Future<?>[] done = new Future<?>[threads];
            long[] sinks = new long[threads * 16];
            for (int t = 0; t < threads; t++) {
                int id = t;
                done[t] = pool.submit(() -> {
                    long x = 0x9E3779B97F4A7C15L * (id + 1);
                    long[] at = new long[depth];
                    long sum = 0;
                    go.await();
                    for (long r = 0; r < READS_PER_THREAD; r += depth) {
                        for (int i = 0; i < depth; i++) {
                            x ^= x << 13;
                            x ^= x >>> 7;
                            x ^= x << 17;
                            at[i] = (x & lineMask) * LINE;
                        }
                        for (int i = 0; i < depth; i++) {
                            sum += m.get(ValueLayout.JAVA_LONG, at[i]);
                        }
                    }
                    sinks[id * 16] = sum;  // so that no load is dropped
                    return null;
                });
            }
            long t0 = System.nanoTime();
            go.countDown();
            for (Future<?> f : done) {
                f.get();
            }
            return READS_PER_THREAD * threads / ((System.nanoTime() - t0) / 1e9);
        } finally {
            pool.shutdown();
        }
    }
}
