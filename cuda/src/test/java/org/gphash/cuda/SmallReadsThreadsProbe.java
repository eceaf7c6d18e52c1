package org.gphash.cuda;

import static org.gphash.cuda.GpuTestSupport.key;
import static org.gphash.cuda.GpuTestSupport.value;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.OpKind;
import org.gphash.cuda.pipeline.MirrorPath;
import org.gphash.cuda.pipeline.SmallReads;

/**
 * How the CUDA driver takes several host threads each running its own small batches of gets (copy
 * in, one launch, copy out, wait) on streams of their own: the question behind serving
 * synchronous single-key callers without one dispatcher. Modes: "engine" (every thread calls the
 * engine's execute, which runs small batches of gets on its slots outside its lock), "free" (each
 * thread its own set of slots, nothing shared but the context), "queue-locked" (as free, but
 * queueing, the driver calls that start a batch, under one lock; the wait outside it). The first
 * run of this probe, with the engine still running every batch under its lock, gave "engine"
 * 27,000 batches/s at any thread count and "free" 152,000 at 16 threads. A diagnostic main, run on
 * the GPU machine:
 * {@code cuda/device-check.sh main org.gphash.cuda.SmallReadsThreadsProbe [keys] [seconds]}.
 */
public final class SmallReadsThreadsProbe {

    private SmallReadsThreadsProbe() {
    }

    public static void main(String[] args) throws Exception {
        int keys = args.length > 0 ? Integer.parseInt(args[0]) : 1 << 20;
        double seconds = args.length > 1 ? Double.parseDouble(args[1]) : 1.0;
        int vs = GpuTestSupport.VALUE_SIZE;
        try (GpuTestSupport t = GpuTestSupport.create();
             GpuEngine gpu = GpuEngines.create(GpuTestSupport.config(t.pool("probe"), Backend.GPU, 8, 4, 2, 4, keys, 5))) {
            Batch load = Batch.create(8, vs, 1 << 16);
            BatchResult loaded = new BatchResult(vs, 1 << 16);
            for (long k = 0; k < keys; k++) {
                load.add(OpKind.PUT, key(k, 8), value(k, 1));
                if (load.size() == 1 << 16 || k == keys - 1) {
                    gpu.execute(load, loaded);
                    load.clear();
                }
            }
            MirrorPath path = (MirrorPath) gpu.path();
            System.out.printf(Locale.ROOT, "%-13s %7s %5s %12s %12s %10s %9s%n",
                    "mode", "threads", "batch", "batches/s", "gets/s", "mean us", "wrong");
            List<String> rows = new ArrayList<>();
            for (int batch : new int[] {1, 8}) {
                for (String mode : new String[] {"engine", "free", "queue-locked"}) {
                    for (int threads : new int[] {1, 2, 4, 8, 16}) {
                        rows.add(run(gpu, path, mode, threads, batch, keys, seconds));
                        System.out.println(rows.get(rows.size() - 1));
                    }
                }
            }
        }
    }

    private static String run(GpuEngine gpu, MirrorPath path, String mode, int threads, int batchSize, int keys,
                              double seconds) throws Exception {
        int vs = GpuTestSupport.VALUE_SIZE;
        AtomicLong batches = new AtomicLong();
        AtomicLong wrong = new AtomicLong();
        ReentrantLock queueLock = new ReentrantLock();
        CyclicBarrier start = new CyclicBarrier(threads + 1);
        long[] window = new long[2];
        List<Thread> workers = new ArrayList<>();
        long runNanos = (long) (seconds * 1e9);
        for (int w = 0; w < threads; w++) {
            int id = w;
            Thread th = Thread.ofPlatform().start(() -> {
                SplittableRandom random = new SplittableRandom(id * 7919L + batchSize);
                Batch b = Batch.create(8, vs, batchSize);
                BatchResult r = new BatchResult(vs, batchSize);
                long[] asked = new long[batchSize];
                gpu.bindContext();
                SmallReads own = mode.equals("engine") ? null : path.newSmallReads();
                try {
                    start.await();
                    long end = System.nanoTime() + runNanos;
                    long done = 0;
                    while (System.nanoTime() < end) {
                        b.clear();
                        for (int i = 0; i < batchSize; i++) {
                            asked[i] = random.nextInt(keys);
                            b.add(OpKind.GET, key(asked[i], 8), null);
                        }
                        if (own == null) {
                            gpu.execute(b, r);
                        } else {
                            r.reset(batchSize);
                            org.gphash.spi.SubmittedBatch read;
                            if (mode.equals("queue-locked")) {
                                queueLock.lock();
                                try {
                                    read = path.readOn(own, b, r);
                                } finally {
                                    queueLock.unlock();
                                }
                            } else {
                                read = path.readOn(own, b, r);
                            }
                            read.await();
                        }
                        for (int i = 0; i < batchSize; i++) {
                            if (!java.util.Arrays.equals(r.value(i), value(asked[i], 1))) {
                                wrong.incrementAndGet();
                            }
                        }
                        done++;
                    }
                    batches.addAndGet(done);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                } finally {
                    if (own != null) {
                        own.close();
                    }
                }
            });
            workers.add(th);
        }
        start.await();
        window[0] = System.nanoTime();
        for (Thread th : workers) {
            th.join();
        }
        window[1] = System.nanoTime();
        double secs = (window[1] - window[0]) / 1e9;
        double perSecond = batches.get() / secs;
        return String.format(Locale.ROOT, "%-13s %7d %5d %12.0f %12.0f %10.1f %9d", mode, threads, batchSize, perSecond,
                perSecond * batchSize, threads * 1e6 / perSecond, wrong.get());
    }
}
