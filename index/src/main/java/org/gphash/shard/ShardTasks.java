package org.gphash.shard;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.function.IntConsumer;
import java.util.function.IntFunction;
import java.util.function.IntPredicate;

/**
 * Work on several shards at once, the way every sharded path runs it: the first shard's on the calling
 * thread, the others' on the index's threads; all of it finishes before the caller hears of a
 * failure, which is the first one, the others suppressed on it. Opening and closing the shards, their
 * parts of a host batch ({@link ShardedEngine}) and of a device-resident one (the GPU engine's
 * {@code DeviceBatchesAcrossShards}) all go through here.
 */
public final class ShardTasks {

    private ShardTasks() {
    }

    /**
     * Runs {@code work(s)} for every shard {@code s} below {@code shards} that {@code which} accepts,
     * at once; returns the results in shard order (null for a shard not run) once all are done.
     *
     * @param shards  the shard count
     * @param which   the shards to run
     * @param workers the threads that run all but the first
     * @param work    a shard's work
     * @param <T>     a result
     * @return the results, one per shard
     * @throws RuntimeException the first failure, with the others suppressed on it
     */
    public static <T> List<T> atOnce(int shards, IntPredicate which, Executor workers, IntFunction<T> work) {
        List<CompletableFuture<T>> others = new ArrayList<>(shards);
        int mine = -1;
        for (int s = 0; s < shards; s++) {
            if (!which.test(s)) {
                others.add(null);
            } else if (mine < 0) {
                mine = s;
                others.add(null);
            } else {
                int shard = s;
                others.add(CompletableFuture.supplyAsync(() -> work.apply(shard), workers));
            }
        }
        List<T> results = new ArrayList<>(shards);
        RuntimeException failure = null;
        T first = null;
        if (mine >= 0) {
            try {
                first = work.apply(mine);
            } catch (RuntimeException e) {
                failure = e;
            }
        }
        for (int s = 0; s < shards; s++) {
            CompletableFuture<T> f = others.get(s);
            if (f == null) {
                results.add(s == mine ? first : null);
                continue;
            }
            try {
                results.add(f.join());
            } catch (CompletionException e) {
                RuntimeException cause = e.getCause() instanceof RuntimeException r ? r : e;
                if (failure == null) {
                    failure = cause;
                } else {
                    failure.addSuppressed(cause);
                }
                results.add(null);
            }
        }
        if (failure != null) {
            throw failure;
        }
        return results;
    }

    /**
     * Runs {@code pass(r)} for every range {@code r} below {@code ranges} at once, range 0 on the
     * calling thread: the passes of a batch's split over ranges of its operations (the sharded
     * index's, the cluster client's).
     *
     * @param ranges  the range count
     * @param workers the threads that run all but the first
     * @param pass    a range's pass
     * @throws RuntimeException the first failure, with the others suppressed on it
     */
    public static void inRanges(int ranges, Executor workers, IntConsumer pass) {
        atOnce(ranges, r -> true, workers, r -> {
            pass.accept(r);
            return null;
        });
    }

    /**
     * Runs {@code work} for every shard at once, shard 0 on the calling thread; returns the results in
     * shard order once all are done, or throws the first failure with the others suppressed.
     */
    static <T> List<T> onEveryShard(int n, ExecutorService workers, IntFunction<T> work) {
        return atOnce(n, s -> true, workers, work);
    }
}
