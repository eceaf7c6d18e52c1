package org.gphash.crashtest;

import java.nio.file.Path;

import org.gphash.Backend;
import org.gphash.Durability;

/** A crash-test run's options, as {@link CrashTest} parsed them, for the {@link Driver}. */
final class RunOptions {
    Backend backend = Backend.CPU;
    int rounds;
    /** System.nanoTime() after which no round starts (--minutes); 0: none. */
    long deadlineNanos;
    long seed;
    boolean powerFail;
    /** The journal's directory (--journal), or null: the pool alone. */
    Path journal;
    long keys;
    long initialCapacity;
    int roundsPerPool;
    int maxKillMillis;
    int maxPersists;
    int roundTimeoutSeconds;
    boolean verbose;
    boolean keepPool;
    boolean dropMetaPersists;
    boolean itemChecksums;
    /** The format new pools take (issue 53); with 3 the check after a round is the model's alone (the tools read format 2). */
    int poolFormat = 2;
    Durability durability = Durability.PER_BATCH;
    int batch = 1;
    /** With several threads: even-numbered threads make single calls, the others batches of {@link #batch}. */
    boolean mixed;

    /** Operations thread {@code t} runs at a time: its batch, or one where it makes single calls. */
    int batchOf(int t) {
        return mixed && t % 2 == 0 ? 1 : batch;
    }
    /** ON_CLOSE_OR_SYNC: sync after every this many acknowledgements (1: before each one). */
    int syncEvery = 1;
    /** 0: one pool file; n: a sharded index of n shard pools in a directory (issue 30). */
    int shards;
    /** Worker threads, each with keys and an acknowledgement log of its own. */
    int threads = 1;
    String classPath;
}
