package org.gphash.shard;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.EntryChunk;
import org.gphash.Geometry;
import org.gphash.GpuFeatures;
import org.gphash.IndexStats;
import org.gphash.Outcome;
import org.gphash.RecoveryReport;
import org.gphash.error.PoolExistsException;
import org.gphash.error.PoolIoException;
import org.gphash.spi.Engine;
import org.gphash.spi.ScanState;

/**
 * One index over several shard engines, each a whole pool (and on the GPU engine, its own GPU):
 * a key's operations go to the engine of its shard ({@link ShardFunction}). Single calls go
 * straight to that engine. A batch is split by shard, the parts run at once (one on the calling
 * thread, the others on this engine's threads), and the results are merged back in the caller's
 * order; the split keeps each key's operations in batch order, so whatever a shard engine promises
 * about the order of one key's operations holds for the sharded index.
 *
 * <p>What a batch across shards promises on a crash: each shard's part is whole or absent as a
 * batch on one pool is, independently of the other shards' parts (the shards share no log).
 * {@link #snapshot} copies the shards one after another while operations go on, so a batch that
 * runs meanwhile may be in one shard's copy and not yet in another's, the same contract as a crash.
 *
 * <p>Over 400 lines because it is the whole {@link Engine} contract, each operation a line or a few
 * forwarding to a shard or gathering from all; the split of batches (and the copies of parts not run in place) are
 * {@code BatchPartition}'s, the directory's life {@link ShardedIndexes}'.
 */
public final class ShardedEngine implements Engine {

    private final Path dir;
    private final ShardManifest manifest;
    private final Engine[] shards;
    private final ShardFunction function;
    private final ExecutorService workers;
    private final ConcurrentLinkedQueue<BatchPartition> partitions = new ConcurrentLinkedQueue<>();
    private final int keySize;
    private final int valueSize;
    private final Duration openTime;
    /** Device-resident batches split on the GPU, where the shards are GPU engines ({@code EngineFactory.gpuFeaturesAcross}). */
    private final Optional<GpuFeatures> gpu;

    ShardedEngine(Path dir, ShardManifest manifest, Engine[] shards, ExecutorService workers, Optional<GpuFeatures> gpu,
                  Duration openTime) {
        this.dir = dir;
        this.manifest = manifest;
        this.shards = shards.clone();
        this.function = new ShardFunction(manifest.seed(), manifest.shards());
        this.workers = workers;
        this.keySize = manifest.geometry().keySize();
        this.valueSize = manifest.geometry().valueSize();
        this.openTime = openTime;
        this.gpu = gpu;
    }

    /** The threads that run shards' parts beside the caller's (platform threads: a GPU engine binds its context to the thread). */
    static ExecutorService newWorkers(Path dir) {
        AtomicInteger n = new AtomicInteger();
        return Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "gphash-shard-" + n.getAndIncrement() + " " + dir.getFileName());
            t.setDaemon(true);
            return t;
        });
    }

    /** {@return the number of shards} */
    public int shardCount() {
        return shards.length;
    }

    /**
     * Shard {@code i}'s engine, for tools and benchmarks that run a shard's own batches.
     *
     * @param i the shard
     * @return its engine
     */
    public Engine shard(int i) {
        return shards[i];
    }

    /** {@return the manifest the index was opened with} */
    public ShardManifest manifest() {
        return manifest;
    }

    /** {@return the shard function} */
    public ShardFunction function() {
        return function;
    }

    private Engine of(MemorySegment key) {
        return shards[function.shardOf(key, 0, keySize)];
    }

    /** The shards' GPU features split device-resident batches by shard on the GPU that holds them. */
    @Override
    public Optional<GpuFeatures> gpuFeatures() {
        return gpu;
    }

    @Override
    public Geometry geometry() {
        return shards[0].geometry();
    }

    @Override
    public Outcome get(MemorySegment key, MemorySegment valueOut) {
        return of(key).get(key, valueOut);
    }

    /** The shards' own: every shard pool has the index's format, and their engines one backend. */
    @Override
    public boolean valueLengths() {
        return shards[0].valueLengths();
    }

    @Override
    public int read(MemorySegment key, MemorySegment valueOut) {
        return of(key).read(key, valueOut);
    }

    @Override
    public Outcome put(MemorySegment key, MemorySegment value) {
        return of(key).put(key, value);
    }

    @Override
    public Outcome insert(MemorySegment key, MemorySegment value) {
        return of(key).insert(key, value);
    }

    @Override
    public Outcome update(MemorySegment key, MemorySegment value) {
        return of(key).update(key, value);
    }

    @Override
    public Outcome delete(MemorySegment key) {
        return of(key).delete(key);
    }

    @Override
    public Outcome compareAndSet(MemorySegment key, MemorySegment expected, MemorySegment value) {
        return of(key).compareAndSet(key, expected, value);
    }

    @Override
    public Outcome compareAndDelete(MemorySegment key, MemorySegment expected) {
        return of(key).compareAndDelete(key, expected);
    }

    @Override
    public Outcome getAlongside(MemorySegment key, MemorySegment valueOut) {
        return of(key).getAlongside(key, valueOut);
    }

    @Override
    public void execute(Batch batch, BatchResult result) {
        if (shards.length == 1) {
            shards[0].execute(batch, result);
            return;
        }
        int n = batch.size();
        result.reset(batch);
        if (n == 0) {
            return;
        }
        BatchPartition p = partitions.poll();
        if (p == null) {
            p = new BatchPartition(function, keySize, valueSize, valueLengths());
        }
        try {
            long t0 = System.nanoTime();
            int ranges = (int) Math.max(1, Math.min(MAX_RANGES, n / RANGE_MIN));
            p.prepare(n, ranges);
            BatchPartition q = p;
            ShardTasks.inRanges(ranges, workers, r -> q.assign(batch, r));
            p.place();
            ShardTasks.inRanges(ranges, workers, q::list);
            long t1 = System.nanoTime();
            runParts(batch, result, p);
            stages.add(t1 - t0, System.nanoTime() - t1);
        } finally {
            partitions.offer(p);
        }
    }

    /** Ranges of a batch a pass of the split works on at once: one per this many operations ... */
    static final int RANGE_MIN = 1 << 14;
    /** ... and at most this many. */
    static final int MAX_RANGES = 8;

    /** Runs each shard's part at once (one on the calling thread); throws the first failure, the others suppressed. */
    private void runParts(Batch batch, BatchResult result, BatchPartition p) {
        ShardTasks.atOnce(shards.length, s -> p.size(s) > 0, workers, s -> {
            runPart(batch, result, p, s);
            return null;
        });
    }

    /**
     * Runs {@code shard}'s part of {@code batch}: where it lies, if its engine does so
     * ({@link Engine#executeInPlace}), else copied out, run as a batch of its own and its results copied
     * back (also after a failure: the outcomes up to it).
     */
    private void runPart(Batch batch, BatchResult result, BatchPartition p, int shard) {
        if (shards[shard].executeInPlace(batch, result, p.positions(shard), p.size(shard))) {
            stages.inPlace();
            return;
        }
        long c0 = System.nanoTime();
        Batch part = p.copyOut(batch, shard);
        long c1 = System.nanoTime();
        try {
            shards[shard].execute(part, p.resultOf(shard));
        } finally {
            long c2 = System.nanoTime();
            p.copyBack(result, shard);
            stages.copied(c1 - c0 + System.nanoTime() - c2);
        }
    }

    /**
     * Where the batches' time went since the last reset: splitting (each operation's shard, the lists
     * of positions), the shards' runs (all at once), and of that, copying the parts that did not run
     * where they lay out and their results back (summed over shards); nanoseconds of wall time summed
     * over calls, the number of batches, and of parts run in place and copied. For benchmarks that
     * explain the sharded host path's cost.
     *
     * @param reset whether to start counting again
     * @return split, run and copy nanoseconds, batches, parts in place, parts copied
     */
    public long[] stageNanos(boolean reset) {
        return stages.read(reset);
    }

    /** The stage times of {@link #stageNanos}. */
    private static final class StageTimes {
        private final LongAdder split = new LongAdder();
        private final LongAdder run = new LongAdder();
        private final LongAdder copies = new LongAdder();
        private final LongAdder batches = new LongAdder();
        private final LongAdder inPlace = new LongAdder();
        private final LongAdder copied = new LongAdder();

        void add(long s, long r) {
            split.add(s);
            run.add(r);
            batches.increment();
        }

        void inPlace() {
            inPlace.increment();
        }

        void copied(long nanos) {
            copies.add(nanos);
            copied.increment();
        }

        long[] read(boolean reset) {
            LongAdder[] all = {split, run, copies, batches, inPlace, copied};
            long[] v = new long[all.length];
            for (int i = 0; i < all.length; i++) {
                v[i] = reset ? all[i].sumThenReset() : all[i].sum();
            }
            return v;
        }
    }

    private final StageTimes stages = new StageTimes();

    @Override
    public boolean ordersOperationsOnAKey() {
        for (Engine e : shards) {
            if (!e.ordersOperationsOnAKey()) {
                return false;
            }
        }
        return true;
    }

    /** {@return every shard's figures, in shard order} */
    public List<IndexStats> shardStats() {
        List<IndexStats> all = new ArrayList<>(shards.length);
        for (Engine e : shards) {
            all.add(e.stats());
        }
        return all;
    }

    @Override
    public IndexStats stats() {
        return ShardTotals.stats(shardStats(), lastRecovery());
    }

    @Override
    public RecoveryReport lastRecovery() {
        List<RecoveryReport> all = new ArrayList<>(shards.length);
        for (Engine e : shards) {
            all.add(e.lastRecovery());
        }
        return ShardTotals.recovery(all, openTime);
    }

    @Override
    public ScanState startScan() {
        return new Scan(this, shards[0].startScan());
    }

    @Override
    public void readEntries(ScanState state, EntryChunk chunk) {
        if (!(state instanceof Scan scan) || scan.owner != this) {
            throw new IllegalArgumentException("a scan state made by another engine (" + state + ") was passed to the "
                    + "sharded index at " + dir);
        }
        if (scan.inner.done() && scan.shard + 1 < shards.length) {
            scan.shard++;
            scan.inner = shards[scan.shard].startScan();
        }
        shards[scan.shard].readEntries(scan.inner, chunk);
    }

    /** Where a scan over the shards stands: a shard, and where the scan of that shard stands. */
    private static final class Scan implements ScanState {
        private final ShardedEngine owner;
        private int shard;
        private ScanState inner;

        Scan(ShardedEngine owner, ScanState inner) {
            this.owner = owner;
            this.inner = inner;
        }

        @Override
        public boolean done() {
            return inner.done() && shard == owner.shards.length - 1;
        }
    }

    /**
     * A copy of every shard at {@code target}, a new directory with the manifest: the sharded index's
     * copy, which opens like the original. Shard by shard (see the class comment for what that
     * promises across shards).
     */
    @Override
    public void snapshot(Path target) {
        if (Files.exists(target, LinkOption.NOFOLLOW_LINKS)) {
            throw new PoolExistsException("cannot snapshot to " + target + ": it exists");
        }
        try {
            Files.createDirectory(target, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        } catch (IOException e) {
            throw new PoolIoException("cannot create " + target + ": " + e.getMessage(), e);
        }
        for (int s = 0; s < shardCount(); s++) {
            shard(s).snapshot(ShardManifest.shardPath(target, s));
        }
        manifest().write(target);
    }

    @Override
    public boolean reloadBucketCache(boolean wait) {
        boolean any = false;
        for (Engine e : shards) {
            any |= e.reloadBucketCache(wait);
        }
        return any;
    }

    @Override
    public void sync() {
        forEachShard(Engine::sync);
    }

    @Override
    public void close() {
        try {
            try {
                closeGpuFeatures();
            } finally {
                forEachShard(Engine::close);
            }
        } finally {
            workers.shutdown();
        }
    }

    /** The GPU view's device memory goes before the shards' engines (it holds none of their state). */
    private void closeGpuFeatures() {
        if (gpu.isPresent() && gpu.get() instanceof AutoCloseable c) {
            try {
                c.close();
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
    }

    @Override
    public void abandon() {
        try {
            for (Engine e : shards) {
                e.abandon();
            }
        } finally {
            workers.shutdown();
        }
    }

    /** Runs {@code action} on every shard at once; throws the first failure (the others suppressed) once all are done. */
    private void forEachShard(Consumer<Engine> action) {
        ShardTasks.onEveryShard(shards.length, workers, s -> {
            action.accept(shards[s]);
            return null;
        });
    }

    @Override
    public String toString() {
        return "sharded index " + dir + " (" + shards.length + " shards)";
    }
}
