package org.gphash.shard;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.EntryChunk;
import org.gphash.IndexStats;
import org.gphash.Outcome;
import org.gphash.RecoveryReport;
import org.gphash.format.Geometry;
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
 */
public final class ShardedEngine implements Engine {

    /** Batches of fewer operations are split on the calling thread; larger ones split in parallel too. */
    static final int PARALLEL_SPLIT_MIN = 1 << 14;

    private final Path dir;
    private final ShardManifest manifest;
    private final Engine[] shards;
    private final ShardFunction function;
    private final ExecutorService workers;
    private final ConcurrentLinkedQueue<BatchPartition> partitions = new ConcurrentLinkedQueue<>();
    private final int keySize;
    private final int valueSize;
    private final Duration openTime;

    ShardedEngine(Path dir, ShardManifest manifest, Engine[] shards, ExecutorService workers, Duration openTime) {
        this.dir = dir;
        this.manifest = manifest;
        this.shards = shards.clone();
        this.function = new ShardFunction(manifest.seed(), manifest.shards());
        this.workers = workers;
        this.keySize = manifest.geometry().keySize();
        this.valueSize = manifest.geometry().valueSize();
        this.openTime = openTime;
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

    /** {@return shard {@code i}'s engine (for tools and benchmarks that run a shard's own batches)} */
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

    @Override
    public Geometry geometry() {
        return shards[0].geometry();
    }

    @Override
    public Outcome get(MemorySegment key, MemorySegment valueOut) {
        return of(key).get(key, valueOut);
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
        int n = batch.size();
        result.reset(n);
        if (n == 0) {
            return;
        }
        BatchPartition p = partitions.poll();
        if (p == null) {
            p = new BatchPartition(function, keySize, valueSize);
        }
        try {
            split(p, batch, n);
            runParts(p, batch, result);
        } finally {
            partitions.offer(p);
        }
    }

    /** Assigns every operation its shard: in ranges on several threads for a large batch. */
    private void split(BatchPartition p, Batch batch, int n) {
        p.prepare(n);
        int ranges = n < PARALLEL_SPLIT_MIN ? 1 : shards.length;
        if (ranges == 1) {
            p.assign(batch, 0, n);
        } else {
            CompletableFuture<?>[] others = new CompletableFuture<?>[ranges - 1];
            for (int r = 1; r < ranges; r++) {
                int from = (int) ((long) n * r / ranges);
                int to = (int) ((long) n * (r + 1) / ranges);
                others[r - 1] = CompletableFuture.runAsync(() -> p.assign(batch, from, to), workers);
            }
            p.assign(batch, 0, (int) ((long) n / ranges));
            CompletableFuture.allOf(others).join();
        }
        p.count(n);
    }

    /** Runs each shard's part (gather, execute, scatter) at once; throws the first failure, the others suppressed. */
    private void runParts(BatchPartition p, Batch batch, BatchResult result) {
        List<CompletableFuture<Void>> others = null;
        int mine = -1;
        for (int s = 0; s < shards.length; s++) {
            if (p.size(s) == 0) {
                continue;
            }
            if (mine < 0) {
                mine = s;
                continue;
            }
            if (others == null) {
                others = new ArrayList<>(shards.length - 1);
            }
            int shard = s;
            others.add(CompletableFuture.runAsync(() -> runPart(p, shard, batch, result), workers));
        }
        RuntimeException failure = null;
        try {
            runPart(p, mine, batch, result);
        } catch (RuntimeException e) {
            failure = e;
        }
        if (others != null) {
            for (CompletableFuture<Void> f : others) {
                try {
                    f.join();
                } catch (java.util.concurrent.CompletionException e) {
                    RuntimeException cause = e.getCause() instanceof RuntimeException r ? r : e;
                    if (failure == null) {
                        failure = cause;
                    } else {
                        failure.addSuppressed(cause);
                    }
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    /** One shard's part: its operations gathered, run on its engine, the results put back in place (also when it fails). */
    private void runPart(BatchPartition p, int shard, Batch batch, BatchResult result) {
        Batch part = p.gather(shard, batch);
        BatchResult partResult = p.resultOf(shard);
        try {
            shards[shard].execute(part, partResult);
        } finally {
            p.scatter(shard, result, valueSize);
        }
    }

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
        ShardedIndexes.snapshot(this, target);
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
            forEachShard(Engine::close);
        } finally {
            workers.shutdown();
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
    private void forEachShard(java.util.function.Consumer<Engine> action) {
        ShardedIndexes.onEveryShard(shards.length, workers, s -> {
            action.accept(shards[s]);
            return null;
        });
    }

    @Override
    public String toString() {
        return "sharded index " + dir + " (" + shards.length + " shards)";
    }
}
