package org.gphash.crashtest;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

import org.gphash.Backend;
import org.gphash.BackendUnavailableException;
import org.gphash.cli.Cli;
import org.gphash.cli.ToolVersion;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine;

/**
 * {@code gphash crashtest}: the kill-and-verify crash harness. Its last line is always
 * {@code crashtest: backend=B rounds=N kills=K ops_verified=V lost=L torn=T leaked_bytes=X}; it
 * exits 0 when L, T and X are 0 and every post-recovery check passed, 1 otherwise, 2 when the
 * backend is unavailable or the options are wrong.
 */
@Command(name = "crashtest", versionProvider = ToolVersion.class,
        description = {"Forks a worker JVM running inserts, updates and deletes (with resizes) on a pool, kills it "
                + "with SIGKILL at random moments and at chosen crash points, round after round, and after each "
                + "round reopens the pool and checks that every acknowledged operation survived whole, that "
                + "'gphash check' passes and that no value space leaked.",
                "With --power-fail the worker instead simulates power failures: every store not yet persisted "
                        + "is discarded."})
public final class CrashTest implements Callable<Integer> {

    @Mixin
    Cli.Help help = new Cli.Help();

    @Option(names = "--backend", description = "cpu or gpu (default cpu)", defaultValue = "cpu")
    String backend;

    @Option(names = "--rounds", description = "rounds to run (default ${DEFAULT-VALUE})", defaultValue = "40")
    int rounds;

    @Option(names = "--minutes", description = "start no round after this many minutes (default: no limit; "
            + "--rounds still bounds the run); the summary counts the rounds run")
    Integer minutes;

    @Option(names = "--seed", description = "seed of the run (default: from the clock)")
    Long seed;

    @Option(names = "--power-fail", description = "simulate power failures (discard unpersisted stores) instead of SIGKILL; "
            + "with --journal: SIGKILL, then the pool deleted and the journal cut to what was flushed (its last record torn)")
    boolean powerFail;

    @Option(names = "--journal", paramLabel = "DIR", description = "journal the index in DIR (builder.journal): every "
            + "round's open finds the pool intact (SIGKILL) or rebuilds it from checkpoint and journal (--power-fail)")
    Path journal;

    @Option(names = "--keys", description = "size of the key space (default ${DEFAULT-VALUE})", defaultValue = "2000")
    long keys;

    @Option(names = "--initial-capacity", description = "initial capacity of each new pool (default ${DEFAULT-VALUE}); "
            + "small, so resizes happen", defaultValue = "64")
    long initialCapacity;

    @Option(names = "--rounds-per-pool", description = "rounds before the pool is recreated (default ${DEFAULT-VALUE})",
            defaultValue = "10")
    int roundsPerPool;

    @Option(names = "--max-kill-ms", description = "longest a worker runs before its random kill (default ${DEFAULT-VALUE})",
            defaultValue = "300")
    int maxKillMillis;

    @Option(names = "--max-persists", description = "power-fail mode: fail at a random persist call up to this "
            + "(default ${DEFAULT-VALUE})", defaultValue = "4000")
    int maxPersists;

    @Option(names = "--round-timeout", description = "seconds a round may take before the worker is killed anyway "
            + "(default ${DEFAULT-VALUE})", defaultValue = "20")
    int roundTimeout;

    @Option(names = "--verbose", description = "a progress line after every round")
    boolean verbose;

    @Option(names = "--keep-pool", description = "leave the pool and the worker's files behind")
    boolean keepPool;

    @Option(names = "--shards", description = "run on a sharded index of this many shard pools (a directory at "
            + "POOL; batches span the shards; SIGKILL rounds only; default: one pool file)", defaultValue = "0")
    int shards;

    @Option(names = "--item-checksums", description = "pools keep item checksums (CPU backend): every read after a "
            + "crash also checks them")
    boolean itemChecksums;

    @Option(names = "--pool-format", description = "format of new pools: 2 (default) or 3 (issue 53: values of any "
            + "length, written by the workers at lengths of their own on the CPU backend, of the value size on the GPU's)", defaultValue = "2")
    int poolFormat;

    @Option(names = "--durability", description = "PER_OPERATION, PER_BATCH or ON_CLOSE_OR_SYNC (default "
            + "${DEFAULT-VALUE}); with ON_CLOSE_OR_SYNC the worker syncs before it acknowledges",
            defaultValue = "PER_BATCH")
    org.gphash.Durability durability;

    @Option(names = "--threads", description = "worker threads running operations at once (default ${DEFAULT-VALUE}); "
            + "each has keys of its own (key - 1 = thread mod threads) and its own acknowledgement log, so each "
            + "key's acknowledged history is one thread's while the threads' batches run concurrently",
            defaultValue = "1")
    int threads;

    @Option(names = "--batch", description = "operations per batch (default ${DEFAULT-VALUE}: single operations); a "
            + "batch is acknowledged when execute returns, and after a crash any of the unacknowledged batch's "
            + "operations may be applied, each whole", defaultValue = "1")
    int batch;

    @Option(names = "--mixed", description = "with --threads of 2 or more and --batch: even-numbered threads make "
            + "single calls while the others run batches (issue 57: the GPU backend runs single calls on the host, "
            + "between its batches)")
    boolean mixed;

    @Option(names = "--sync-every", description = "with ON_CLOSE_OR_SYNC: the worker acknowledges each operation (or "
            + "batch) when it returns and syncs after every N of them (default ${DEFAULT-VALUE}: a sync before each "
            + "acknowledgement); after a crash each key holds its value at the last sync or the whole value of one "
            + "operation since", defaultValue = "1")
    int syncEvery;

    @Option(names = "--mutate-drop-meta-persists", hidden = true,
            description = "test only: the power-fail shadow ignores 8-byte persists (must make the run fail)")
    boolean dropMetaPersists;

    @Parameters(index = "0", arity = "0..1", paramLabel = "POOL",
            description = "pool file to use (it is recreated; default: a new file under /dev/shm, else the temp dir)")
    Path pool;

    /** The most worker threads: each opens an acknowledgement log and the driver keeps one in-flight batch each. */
    static final int MAX_THREADS = 64;

    private PrintStream out = System.out;

    public static void main(String[] args) {
        System.exit(run(args, System.out));
    }

    /** Runs the harness and returns its exit code (tests call this). */
    public static int run(String[] args, PrintStream out) {
        CrashTest ct = new CrashTest();
        ct.out = out;
        CommandLine cl = new CommandLine(ct);
        cl.setExecutionExceptionHandler((e, c, p) -> {
            if (e instanceof BackendUnavailableException) {
                out.println("crashtest: the " + ct.backend + " backend is not available here: " + e.getMessage());
                return 2;
            }
            throw e;
        });
        return cl.execute(args);
    }

    @Override
    public Integer call() throws Exception {
        RunOptions o = new RunOptions();
        o.backend = switch (backend.toLowerCase(Locale.ROOT)) {
            case "cpu" -> Backend.CPU;
            case "gpu" -> Backend.GPU;
            default -> throw new CommandLine.ParameterException(new CommandLine(this),
                    "--backend must be cpu or gpu, got " + backend);
        };
        if (rounds < 1 || minutes != null && minutes < 1 || keys < 1 || roundsPerPool < 1 || maxPersists < 1 || batch < 1 || syncEvery < 1) {
            throw new CommandLine.ParameterException(new CommandLine(this),
                    "--rounds, --minutes, --keys, --rounds-per-pool, --max-persists, --batch and --sync-every must be positive");
        }
        if (journal != null && shards > 0) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--journal works with a single pool, not --shards");
        }
        if (powerFail && o.backend == Backend.GPU && journal == null) {
            // The GPU engine orders its stores with __threadfence_system on a tmpfs pool and does not
            // route them through a Persister, so the shadow would see nothing: a pass would mean nothing.
            out.println("crashtest: --power-fail simulates lost persists through the CPU engine's Persister; "
                    + "it is not available with --backend gpu");
            return 2;
        }
        if (shards < 0 || shards > org.gphash.Placement.MAX_SHARDS || (shards > 0 && powerFail)) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--shards must be 0 to "
                    + org.gphash.Placement.MAX_SHARDS + ", and works with SIGKILL rounds only (not --power-fail: its shadow "
                    + "follows one pool file), got " + shards);
        }
        if (threads < 1 || threads > MAX_THREADS || threads > keys) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--threads must be 1 to " + MAX_THREADS
                    + " and at most --keys, got " + threads);
        }
        if (threads > 1 && durability == org.gphash.Durability.ON_CLOSE_OR_SYNC && syncEvery > 1) {
            // The sync marks record one sequence of acknowledgements; several threads have one each.
            throw new CommandLine.ParameterException(new CommandLine(this),
                    "--sync-every works with one worker thread: drop --threads or --sync-every");
        }
        if (mixed && (threads < 2 || batch < 2)) {
            throw new CommandLine.ParameterException(new CommandLine(this),
                    "--mixed needs --threads of 2 or more and a --batch of 2 or more (single calls beside batches)");
        }
        o.threads = threads;
        o.shards = shards;
        o.itemChecksums = itemChecksums;
        if (poolFormat != 2 && poolFormat != 3) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--pool-format must be 2 or 3, got " + poolFormat);
        }
        o.poolFormat = poolFormat;
        o.durability = durability;
        o.batch = batch;
        o.mixed = mixed;
        o.syncEvery = durability == org.gphash.Durability.ON_CLOSE_OR_SYNC ? syncEvery : 1;
        o.rounds = rounds;
        o.deadlineNanos = minutes == null ? 0 : System.nanoTime() + minutes * 60_000_000_000L;
        o.seed = seed != null ? seed : System.nanoTime();
        o.powerFail = powerFail;
        o.journal = journal == null ? null : journal.toAbsolutePath();
        o.keys = keys;
        o.initialCapacity = initialCapacity;
        o.roundsPerPool = roundsPerPool;
        o.maxKillMillis = maxKillMillis;
        o.maxPersists = maxPersists;
        o.roundTimeoutSeconds = roundTimeout;
        o.verbose = verbose;
        o.keepPool = keepPool;
        o.dropMetaPersists = dropMetaPersists;
        o.classPath = System.getProperty("gphash.crashtest.classpath", System.getProperty("java.class.path"));
        Path p = pool != null ? pool : defaultPool();
        out.println("crashtest: backend=" + o.backend.name().toLowerCase(Locale.ROOT) + " rounds=" + rounds + " seed="
                + o.seed + " mode=" + (powerFail ? "power-fail" : "sigkill") + (journal != null ? " journal=" + o.journal : "") + " durability=" + durability + " batch=" + batch + (mixed ? " mixed" : "")
                + (o.syncEvery > 1 ? " sync_every=" + o.syncEvery : "") + (threads > 1 ? " threads=" + threads : "") + (o.shards > 0 ? " shards=" + o.shards : "")
                + (o.poolFormat != 2 ? " format=" + o.poolFormat : "")
                + " pool=" + p.toAbsolutePath());
        Tally t = new Driver(o, p, out).run();
        report(o, t);
        return t.failed() ? 1 : 0;
    }

    private static Path defaultPool() {
        Path shm = Path.of("/dev/shm");
        Path dir = Files.isDirectory(shm) && Files.isWritable(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir"));
        return dir.resolve("gphash-crashtest-" + ProcessHandle.current().pid() + ".pool");
    }

    private void report(RunOptions o, Tally t) {
        out.printf("crashtest: kills landed: before open (JVM start)=%d, in recovery (open)=%d, in a resize=%d, "
                        + "in value reclamation=%d, "
                        + "outside any crash point (between operations, or before an operation's first point)=%d, "
                        + "parked at a chosen crash point=%d; power failures=%d%n",
                t.killsBeforeOpen, t.killsInRecovery, t.killsInResize, t.killsInReclamation, t.killsBetweenOperations, t.targetedKills,
                t.powerFailures);
        if (o.journal != null) {
            out.printf("crashtest: journal: power cuts=%d (journal bytes cut=%d), rebuilds from checkpoint and journal=%d "
                    + "(of them from a checkpoint=%d), writes replayed=%d, torn last records cut=%d%n", t.journalPowerCuts,
                    t.journalBytesCut, t.journalRebuilds, t.journalCheckpointsLoaded, t.journalOpsReplayed, t.journalTornCuts);
        }
        out.printf("crashtest: rounds that closed the pool: %d (crashed inside close()=%d, closed before the crash=%d)%n",
                t.closeRounds, t.crashesInClose, t.closedCleanly);
        out.println("crashtest: last crash point reached at each kill: " + t.lastPointAtKill);
        if (o.threads > 1) {
            out.println("crashtest: operations verified by worker thread: " + t.opsVerifiedByThread);
        }
        if (o.powerFail) {
            out.println("crashtest: persist points where the power failed:");
            for (Map.Entry<String, Long> e : t.powerFailSites.entrySet()) {
                out.println("    " + e.getValue() + "  " + e.getKey());
            }
        }
        out.printf("crashtest: recovery cleared %d INSERT slots, removed %d duplicates, resumed %d resizes; "
                        + "%d resizes completed; %d in-flight operations found applied; %d rounds opened a pool "
                        + "left as the crash before left it (their workers repaired it); check failures=%d%n",
                t.insertSlotsCleared, t.duplicatesRemoved, t.resizesResumed, t.resizes, t.inflightApplied,
                t.repairRounds, t.checkFailures);
        if (t.opsVerified == 0) {
            // Passing with nothing checked would say nothing: say so (large batches need a longer run before the kill).
            out.println("crashtest: WARNING: no acknowledged operation was verified: every worker was killed before "
                    + "its first " + (o.batch > 1 ? "batch" : "operation") + " returned; raise --max-kill-ms (now "
                    + o.maxKillMillis + ")");
        }
        // The contract: this is the last line, exactly in this form.
        out.printf("crashtest: backend=%s rounds=%d kills=%d ops_verified=%d lost=%d torn=%d leaked_bytes=%d%n",
                o.backend.name().toLowerCase(Locale.ROOT), t.rounds, t.kills + t.powerFailures, t.opsVerified, t.lost,
                t.torn, t.leakedBytes);
        out.flush();
    }
}
