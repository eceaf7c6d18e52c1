package org.gphash.bench.journal;

import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;

import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.GPHashIndex;
import org.gphash.JournalReplay;
import org.gphash.Journaling;
import org.gphash.journal.Journals;

/**
 * The journal's figures against the same engine without one, in one run (issue 51): host batches of
 * puts, updates and gets with and without a journal on a disk (rate, journal bytes per second, batch
 * p50/p99, the same with a checkpoint running), a checkpoint's time and writer pause, single puts
 * from many threads (journal on the disk and the pool on tmpfs, against the CPU engine's default with
 * its pool on the same disk), and the open after a power cut (pool deleted) from a checkpoint and the
 * journal written after it, with the time by part.
 *
 * <pre>
 * ./gphash run org.gphash.bench.journal.JournalBench [--backend gpu|cpu] [--pool-format 2|3] [--keys 16777216] [--batch 1048576]
 *     [--replay-bytes 1073741824] [--threads 16] [--seconds 3] --pool-dir /dev/shm --disk-dir /var/tmp/gphash-bench
 * </pre>
 *
 * Prints one line per figure, then a table; every figure names the part and what it was measured against.
 */
public final class JournalBench {

    private static final int VALUE = 128;
    /** The pools' format ({@code --pool-format}, default 2): format 3 on the CPU backend journals each value's length. */
    private static int poolFormat = 2;

    private JournalBench() {
    }

    public static void main(String[] args) throws Exception {
        Backend backend = Backend.GPU;
        long keys = 1 << 24;
        int batchSize = 1 << 20;
        long replayBytes = 1L << 30;
        int threads = 16;
        int seconds = 3;
        Path poolDir = Path.of("/dev/shm");
        Path diskDir = Path.of("/var/tmp/gphash-journal-bench");
        String parts = "batches,singles,rebuild";
        for (int i = 0; i < args.length; i += 2) {
            String v = args[i + 1];
            switch (args[i]) {
                case "--backend" -> backend = Backend.valueOf(v.toUpperCase(Locale.ROOT));
                case "--keys" -> keys = Long.parseLong(v);
                case "--batch" -> batchSize = Integer.parseInt(v);
                case "--replay-bytes" -> replayBytes = Long.parseLong(v);
                case "--threads" -> threads = Integer.parseInt(v);
                case "--seconds" -> seconds = Integer.parseInt(v);
                case "--pool-dir" -> poolDir = Path.of(v);
                case "--disk-dir" -> diskDir = Path.of(v);
                case "--parts" -> parts = v;
                case "--pool-format" -> poolFormat = Integer.parseInt(v);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        Files.createDirectories(diskDir);
        List<String> table = new ArrayList<>();
        if (parts.contains("batches")) {
            batches(backend, keys, batchSize, poolDir, diskDir, table);
        }
        if (parts.contains("singles")) {
            singles(threads, seconds, poolDir, diskDir, table);
            lmdbSingles(threads, seconds, diskDir, table);
        }
        if (parts.contains("rebuild")) {
            rebuild(backend, keys, batchSize, replayBytes, poolDir, diskDir, table);
        }
        System.out.println();
        System.out.println("| part | figure |");
        System.out.println("| --- | --- |");
        table.forEach(System.out::println);
    }

    private static void clean(Path... paths) throws IOException {
        for (Path p : paths) {
            if (Files.isDirectory(p)) {
                try (var files = Files.walk(p)) {
                    for (Path f : files.sorted(Comparator.reverseOrder()).toList()) {
                        Files.delete(f);
                    }
                }
            } else {
                Files.deleteIfExists(p);
            }
        }
    }

    private static void fill(Batch batch, BatchResult result, org.gphash.OpKind kind, long first, int n, long keys,
                             SplittableRandom random, long stamp) {
        batch.clear();
        batch.setSize(n);
        batch.kinds().fill((byte) kind.ordinal());
        var k = batch.keys();
        var v = batch.values();
        for (int i = 0; i < n; i++) {
            long key = random == null ? first + i : 1 + random.nextLong(keys);
            k.set(ValueLayout.JAVA_LONG_UNALIGNED, (long) i * 8, key);
            if (kind.hasValue()) {
                v.set(ValueLayout.JAVA_LONG_UNALIGNED, (long) i * VALUE, key ^ stamp);
            }
        }
        result.reset(n);
    }

    /** Loads, updates and reads in host batches, with and without a journal on the disk. */
    private static void batches(Backend backend, long keys, int batchSize, Path poolDir, Path diskDir, List<String> table)
            throws IOException {
        for (boolean journaled : new boolean[] {false, true}) {
            Path pool = poolDir.resolve("jbench-batches.pool");
            Path journal = diskDir.resolve("jbench-batches.journal");
            clean(pool, journal);
            GPHashIndex.Builder b = GPHashIndex.builder(pool).backend(backend).keySize(8).valueSize(VALUE).initialCapacity(keys)
                    .poolFormat(poolFormat);
            if (journaled) {
                b.journal(Journaling.in(journal).checkpointEvery(Duration.ZERO).checkpointAfterBytes(Long.MAX_VALUE));
            }
            String tag = journaled ? "journal on disk" : "no journal";
            try (GPHashIndex index = b.create()) {
                Batch batch = Batch.create(8, VALUE, batchSize);
                BatchResult result = new BatchResult(VALUE, batchSize);
                long loadNanos = 0;   // the batches' execute calls only, not the filling of their columns
                for (long first = 1; first <= keys; first += batchSize) {
                    int n = (int) Math.min(batchSize, keys - first + 1);
                    fill(batch, result, org.gphash.OpKind.PUT, first, n, keys, null, 1);
                    long t0 = System.nanoTime();
                    index.execute(batch, result);
                    loadNanos += System.nanoTime() - t0;
                }
                double loadS = loadNanos / 1e9;
                long journalBytes = journaled ? dirBytes(journal) : 0;
                row(table, "load " + keys + " puts, batches of " + batchSize + ", " + tag, String.format(Locale.ROOT,
                        "%.1f Mops/s%s", keys / loadS / 1e6, journaled ? String.format(Locale.ROOT, ", journal %.0f MB/s (%.0f MB)",
                                journalBytes / loadS / 1e6, journalBytes / 1e6) + "; "
                                + Journals.stages(index.engine()) : ""));
                SplittableRandom random = new SplittableRandom(7);
                int rounds = 8;
                long[] lat = new long[rounds];
                for (int r = 0; r < rounds; r++) {
                    fill(batch, result, org.gphash.OpKind.PUT, 0, batchSize, keys, random, 2 + r);
                    long s = System.nanoTime();
                    index.execute(batch, result);
                    lat[r] = System.nanoTime() - s;
                }
                row(table, "update (put of present keys, uniform), " + tag, stats(lat, batchSize)
                        + (journaled ? "; " + Journals.stages(index.engine()) : ""));
                if (journaled) {
                    // The same with a checkpoint running beside the batches.
                    AtomicLong cpNanos = new AtomicLong();
                    Thread cp = Thread.ofPlatform().start(() -> {
                        long s = System.nanoTime();
                        index.checkpoint();
                        cpNanos.set(System.nanoTime() - s);
                    });
                    List<Long> during = new ArrayList<>();
                    while (cp.isAlive() || during.size() < 4) {
                        fill(batch, result, org.gphash.OpKind.PUT, 0, batchSize, keys, random, 100 + during.size());
                        long s = System.nanoTime();
                        index.execute(batch, result);
                        during.add(System.nanoTime() - s);
                    }
                    joinQuietly(cp);
                    row(table, "update during a checkpoint, " + tag, stats(during.stream().mapToLong(Long::longValue).toArray(), batchSize)
                            + String.format(Locale.ROOT, "; the checkpoint of %d keys took %.2f s", keys, cpNanos.get() / 1e9)
                            + "; since the start: " + Journals.stages(index.engine()));
                }
                for (int r = 0; r < rounds; r++) {
                    fill(batch, result, org.gphash.OpKind.GET, 0, batchSize, keys, random, 0);
                    long s = System.nanoTime();
                    index.execute(batch, result);
                    lat[r] = System.nanoTime() - s;
                }
                row(table, "get (uniform), " + tag, stats(lat, batchSize));
            }
            clean(pool, journal);
        }
    }

    /** Single puts from many threads: journal on the disk (pool on tmpfs) against the pool on the disk without one. */
    private static void singles(int threads, int seconds, Path poolDir, Path diskDir, List<String> table) throws Exception {
        for (int mode = 0; mode < 2; mode++) {
            Path pool = (mode == 0 ? diskDir : poolDir).resolve("jbench-singles.pool");
            Path journal = diskDir.resolve("jbench-singles.journal");
            clean(pool, journal);
            GPHashIndex.Builder b = GPHashIndex.builder(pool).keySize(8).valueSize(VALUE).initialCapacity(1 << 20)
                    .poolFormat(poolFormat);
            String tag = mode == 0 ? "CPU engine, pool on the disk, PER_BATCH (today's default)"
                    : "CPU engine, pool on tmpfs, journal on the disk (flush per call)";
            if (mode == 1) {
                b.journal(journal);
            }
            try (GPHashIndex index = b.create()) {
                byte[] v = new byte[VALUE];
                long puts = timedPuts(threads, seconds, key -> index.put(key, v));
                row(table, threads + " threads of single puts, each durable on return, " + tag,
                        String.format(Locale.ROOT, "%.0f puts/s", puts / (double) seconds));
            }
            clean(pool, journal);
        }
    }

    /**
     * {@code threads} threads putting random keys of 1 to 2^20 through {@code put} for {@code seconds};
     * returns the puts made.
     */
    private static long timedPuts(int threads, int seconds, LongConsumer put) throws InterruptedException {
        AtomicLong ops = new AtomicLong();
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            ts.add(Thread.ofPlatform().start(() -> {
                SplittableRandom r = new SplittableRandom(id);
                long n = 0;
                while (System.nanoTime() < end) {
                    put.accept(1 + r.nextLong(1 << 20));
                    n++;
                }
                ops.addAndGet(n);
            }));
        }
        for (Thread t : ts) {
            t.join();
        }
        return ops.get();
    }

    /** The same single puts on LMDB, each its own write transaction committed with LMDB's default fsync. */
    private static void lmdbSingles(int threads, int seconds, Path diskDir, List<String> table) throws Exception {
        Path dir = diskDir.resolve("jbench-lmdb");
        clean(dir);
        Files.createDirectories(dir);
        try (org.lmdbjava.Env<ByteBuffer> env = org.lmdbjava.Env.create().setMapSize(4L << 30).setMaxDbs(1)
                .setMaxReaders(1024).open(dir.toFile())) {
            org.lmdbjava.Dbi<ByteBuffer> db = env.openDbi("bench", org.lmdbjava.DbiFlags.MDB_CREATE);
            ThreadLocal<ByteBuffer> keys = ThreadLocal.withInitial(() -> ByteBuffer.allocateDirect(8).order(ByteOrder.LITTLE_ENDIAN));
            ThreadLocal<ByteBuffer> values = ThreadLocal.withInitial(() -> ByteBuffer.allocateDirect(VALUE));
            long puts = timedPuts(threads, seconds, key -> {
                ByteBuffer k = keys.get().clear().putLong(0, key);
                try (org.lmdbjava.Txn<ByteBuffer> txn = env.txnWrite()) {
                    db.put(txn, k, values.get().clear());
                    txn.commit();
                }
            });
            row(table, threads + " threads of single puts, each durable on return, LMDB on the disk (a write "
                    + "transaction per put, default sync)", String.format(Locale.ROOT, "%.0f puts/s", puts / (double) seconds));
        }
        clean(dir);
    }

    /** A checkpoint of {@code keys} keys, about {@code replayBytes} of journal after it, a power cut, and the open. */
    private static void rebuild(Backend backend, long keys, int batchSize, long replayBytes, Path poolDir, Path diskDir,
                                List<String> table) throws IOException {
        Path pool = poolDir.resolve("jbench-rebuild.pool");
        Path journal = diskDir.resolve("jbench-rebuild.journal");
        clean(pool, journal);
        Journaling j = Journaling.in(journal).checkpointEvery(Duration.ZERO).checkpointAfterBytes(Long.MAX_VALUE);
        GPHashIndex.Builder b = GPHashIndex.builder(pool).backend(backend).keySize(8).valueSize(VALUE).initialCapacity(keys)
                .poolFormat(poolFormat).journal(j);
        Batch batch = Batch.create(8, VALUE, batchSize);
        BatchResult result = new BatchResult(VALUE, batchSize);
        GPHashIndex index = b.create();
        for (long first = 1; first <= keys; first += batchSize) {
            int n = (int) Math.min(batchSize, keys - first + 1);
            fill(batch, result, org.gphash.OpKind.PUT, first, n, keys, null, 1);
            index.execute(batch, result);
        }
        long s = System.nanoTime();
        index.checkpoint();
        double cpS = (System.nanoTime() - s) / 1e9;
        long afterCheckpoint = dirBytes(journal);
        SplittableRandom random = new SplittableRandom(11);
        long written = 0;
        long per = (long) batchSize * (8 + VALUE + 1);
        for (int r = 0; written < replayBytes; r++) {
            fill(batch, result, org.gphash.OpKind.PUT, 0, batchSize, keys, random, 1000 + r);
            index.execute(batch, result);
            written += per;
        }
        long journalAfter = dirBytes(journal) - afterCheckpoint;
        index.engine().abandon();   // the power cut: nothing more is flushed, and the pool goes
        Files.deleteIfExists(pool);
        s = System.nanoTime();
        try (GPHashIndex reopened = GPHashIndex.builder(pool).backend(backend).journal(j).open()) {
            double openS = (System.nanoTime() - s) / 1e9;
            JournalReplay rep = reopened.lastRecovery().journal();
            row(table, "checkpoint of " + keys + " keys (" + backend + ")", String.format(Locale.ROOT, "%.2f s", cpS));
            row(table, "open after a power cut: " + keys + "-key checkpoint + " + (journalAfter >> 20) + " MiB of journal ("
                    + backend + ")", String.format(Locale.ROOT, "%.2f s (rebuild %.2f s: checkpoint of %d entries %.2f s, %d writes in %d records replayed %.2f s)",
                    openS, rep.duration().toNanos() / 1e9, rep.checkpointEntries(), rep.checkpointLoad().toNanos() / 1e9,
                    rep.operationsReplayed(), rep.recordsReplayed(),
                    (rep.duration().toNanos() - rep.checkpointLoad().toNanos()) / 1e9));
            byte[] v = reopened.get(1);
            if (v == null) {
                throw new IllegalStateException("key 1 is missing after the rebuild");
            }
        }
        clean(pool, journal);
    }

    private static long dirBytes(Path dir) throws IOException {
        try (var files = Files.list(dir)) {
            long sum = 0;
            for (Path f : files.toList()) {
                sum += Files.size(f);
            }
            return sum;
        }
    }

    private static String stats(long[] nanos, int batchSize) {
        long[] s = nanos.clone();
        Arrays.sort(s);
        double p50 = s[s.length / 2] / 1e6;
        double p99 = s[Math.min(s.length - 1, (int) Math.ceil(s.length * 0.99) - 1)] / 1e6;
        double total = Arrays.stream(s).sum() / 1e9;
        return String.format(Locale.ROOT, "%.1f Mops/s, batch p50 %.1f ms, p99 %.1f ms (%d batches)",
                (double) batchSize * s.length / total / 1e6, p50, p99, s.length);
    }

    private static void row(List<String> table, String what, String figure) {
        System.out.println(what + ": " + figure);
        table.add("| " + what + " | " + figure + " |");
    }

    private static void joinQuietly(Thread t) {
        try {
            t.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
