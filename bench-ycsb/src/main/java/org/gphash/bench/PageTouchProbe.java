package org.gphash.bench;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * What the first write to each page of a shared file mapping costs, against writes to pages already
 * touched: the CPU engine's load writes every value into a fresh heap block of the pool's mapping,
 * so it pays this once per page (issue 25: its load from 16 threads ran far below
 * {@code ConcurrentHashMap}). The file is extended as the pool extends it (zeros written through the
 * file, so the file system holds the pages), mapped shared, then each thread writes 128-byte values
 * through its own part, in order. {@code mode}: {@code fresh} (nothing before), {@code touched} (a
 * byte of every page written first, on one thread, timed apart) or {@code populate}
 * ({@code madvise(MADV_POPULATE_WRITE)} over the mapping first, Linux 5.14+, timed apart).
 *
 * <pre>./gphash run org.gphash.bench.PageTouchProbe THREADS fresh|touched|populate [MiB per thread, 512] [dir, /dev/shm]</pre>
 */
public final class PageTouchProbe {

    private static final int VALUE = 128;
    private static final long PAGE = 4096;
    private static final int MADV_POPULATE_WRITE = 23;

    private PageTouchProbe() {
    }

    public static void main(String[] args) throws Throwable {
        if (args.length < 2 || !Set.of("fresh", "touched", "populate").contains(args[1])) {
            System.err.println("usage: PageTouchProbe THREADS fresh|touched|populate [MiB per thread] [dir]");
            System.exit(2);
        }
        int threads = Integer.parseInt(args[0]);
        String mode = args[1];
        long perThread = (args.length > 2 ? Long.parseLong(args[2]) : 512) << 20;
        Path dir = Path.of(args.length > 3 ? args[3] : "/dev/shm");
        Path p = Files.createTempFile(dir, "gphash-page-touch-", ".bin");
        long size = perThread * threads;
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ, StandardOpenOption.WRITE);
             Arena arena = Arena.ofShared()) {
            ByteBuffer zeros = ByteBuffer.allocateDirect(1 << 20);
            for (long o = 0; o < size; o += zeros.capacity()) {
                zeros.clear();
                ch.write(zeros, o);
            }
            MemorySegment m = ch.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
            long t0 = System.nanoTime();
            if (mode.equals("touched")) {
                for (long o = 0; o < size; o += PAGE) {
                    m.set(ValueLayout.JAVA_BYTE, o, (byte) 1);
                }
            } else if (mode.equals("populate")) {
                Linker linker = Linker.nativeLinker();
                MethodHandle madvise = linker.downcallHandle(linker.defaultLookup().find("madvise").orElseThrow(),
                        FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));
                int rc = (int) madvise.invokeExact(m, size, MADV_POPULATE_WRITE);
                if (rc != 0) {
                    throw new IllegalStateException("madvise(MADV_POPULATE_WRITE) failed (Linux 5.14 or later needed)");
                }
            }
            double before = (System.nanoTime() - t0) / 1e6;
            double rate = writeValues(m, threads, perThread);
            System.out.printf(Locale.ROOT, "page-touch %s, %d threads, %d MiB each: %.1f M values/s (%.2f GB/s)%s%n", mode,
                    threads, perThread >> 20, rate / 1e6, rate * VALUE / 1e9,
                    mode.equals("fresh") ? "" : String.format(Locale.ROOT, "; %s beforehand %.0f ms (%.2f us a page)", mode,
                            before, before * 1e3 / (size / PAGE)));
        } finally {
            Files.deleteIfExists(p);
        }
    }

    /** Each thread writes 128-byte values through its own part of {@code m}, in order; values written per second, all threads. */
    private static double writeValues(MemorySegment m, int threads, long perThread) throws Exception {
        MemorySegment value = Arena.global().allocate(VALUE);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch go = new CountDownLatch(1);
            Future<?>[] done = new Future<?>[threads];
            for (int t = 0; t < threads; t++) {
                long base = t * perThread;
                done[t] = pool.submit(() -> {
                    go.await();
                    for (long o = 0; o < perThread; o += VALUE) {
                        MemorySegment.copy(value, 0, m, base + o, VALUE);
                    }
                    return null;
                });
            }
            long t0 = System.nanoTime();
            go.countDown();
            for (Future<?> f : done) {
                f.get();
            }
            return perThread * threads / (double) VALUE / ((System.nanoTime() - t0) / 1e9);
        } finally {
            pool.shutdown();
        }
    }
}
