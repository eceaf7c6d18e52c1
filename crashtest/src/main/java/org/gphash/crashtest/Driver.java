package org.gphash.crashtest;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.gphash.GPHashIndex;
import org.gphash.RecoveryReport;
import org.gphash.cli.Progress;
import org.gphash.error.JournalDamagedException;
import org.gphash.error.PoolFormatException;
import org.gphash.recovery.PoolReport;
import org.gphash.recovery.PoolScanner;
import org.gphash.recovery.Problem;
import org.gphash.shard.ShardManifest;
import org.gphash.spi.CrashPoint;

/**
 * Runs rounds: fork a worker on the pool, let it work, kill it (SIGKILL at a random moment or while
 * parked at a chosen crash point; or let it simulate a power failure), then reopen the pool (which
 * runs recovery) and check that every acknowledged operation is there, that nothing is torn, that
 * the offline check passes, and that no value space leaked.
 *
 * <p>The pool is recreated every {@code roundsPerPool} rounds with a tiny initial capacity, so that
 * resizes and heap growths keep happening over a long run instead of only in its first rounds.
 */
final class Driver {

    /** Crash points a targeted round parks at: resizes and reclamation first, as the issue asks. */
    private static final CrashPoint[] RESIZE_POINTS = {CrashPoint.RESIZE_LEVEL_ALLOCATED, CrashPoint.RESIZE_STARTED,
            CrashPoint.RESIZE_ITEM_COPIED, CrashPoint.RESIZE_ITEM_MOVED, CrashPoint.RESIZE_REHASHED,
            CrashPoint.RESIZE_COMMITTED};

    private final RunOptions o;
    /** Power failures simulated in the worker by its shadow of the pool's persists (--power-fail without --journal). */
    private final boolean shadow;
    /** A power cut after each kill: the pool deleted, the journal cut to what was flushed (--power-fail --journal). */
    private final boolean journalPowerCut;
    /** Where the worker records what its journal flushed (the last segment forced and its durable bytes). */
    private final Path flushed;
    private final PrintStream log;
    private final SplittableRandom random;
    private final Workload workload;
    private final Path pool;
    private final Path ack;
    private final Path board;
    private final Path site;
    private final Path synced;
    private final Path workerErr;
    private final Tally tally = new Tally();
    /** What the acknowledged history says every key holds. */
    private final AckedModel model;
    /** Each worker thread's next sequence number ({@link Workload#firstSeq}). */
    private final long[] nextSeq;
    /** Whether value space leaks across rounds, pool file by pool file. */
    private final GrowthCheck growth;

    Driver(RunOptions o, Path pool, PrintStream log) throws IOException {
        this.o = o;
        this.shadow = o.powerFail && o.journal == null;
        this.journalPowerCut = o.powerFail && o.journal != null;
        this.log = log;
        this.pool = pool;
        this.random = new SplittableRandom(o.seed);
        this.workload = new Workload(o.seed, o.keys, o.threads);
        this.nextSeq = new long[o.threads];
        for (int t = 0; t < o.threads; t++) {
            nextSeq[t] = Workload.firstSeq(t);
        }
        int pools = Math.max(1, o.shards);
        this.growth = new GrowthCheck(pools, o.poolFormat, o.threads);
        String base = pool.getFileName().toString();
        Path dir = pool.toAbsolutePath().getParent();
        this.ack = dir.resolve(base + ".ack");
        this.board = dir.resolve(base + ".board");
        this.site = dir.resolve(base + ".site");
        this.synced = dir.resolve(base + ".synced");
        this.workerErr = dir.resolve(base + ".worker-err");
        this.flushed = dir.resolve(base + ".flushed");
        this.model = new AckedModel(o, workload, tally, log, synced);
        if (o.journal != null) {
            // This driver's own opens force the journal too (the rebuild's cut of a torn tail, a close).
            Worker.recordFlushes(flushed);
        }
    }

    Tally run() throws IOException, InterruptedException {
        try {
            for (int r = 0; r < o.rounds; r++) {
                if (o.deadlineNanos != 0 && System.nanoTime() - o.deadlineNanos > 0) {
                    break;
                }
                if (r % o.roundsPerPool == 0) {
                    newPool();
                }
                round(r, r % o.roundsPerPool);
                if (o.verbose || (r + 1) % 100 == 0) {
                    log.printf("round %d: kills=%d power_failures=%d ops_verified=%d lost=%d torn=%d leaked_bytes=%d check_failures=%d%n",
                            r + 1, tally.kills, tally.powerFailures, tally.opsVerified, tally.lost, tally.torn,
                            tally.leakedBytes, tally.checkFailures);
                }
            }
        } finally {
            if (!o.keepPool) {
                deletePool(pool);
                if (o.journal != null) {
                    deletePool(o.journal);
                }
                for (Path p : List.of(board, site, synced, workerErr, flushed)) {
                    Files.deleteIfExists(p);
                }
                deleteAckLogs();
            }
        }
        return tally;
    }

    private void newPool() throws IOException {
        deletePool(pool);
        if (o.journal != null) {
            deletePool(o.journal);
            // A new journal: no flush recorded yet. Overwritten, not deleted: this driver's own record of
            // its flushes holds the file open, and would go on writing to a deleted file.
            try (FileChannel ch = FileChannel.open(flushed,
                    StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
                ch.write(ByteBuffer.allocate(16), 0);
            }
        }
        GPHashIndex.Builder b = builder(pool).keySize(8)
                .valueSize(Workload.valueSize(o.poolFormat)).initialCapacity(o.initialCapacity).seed(random.nextLong())
                .itemChecksums(o.itemChecksums);
        if (o.poolFormat != 2) {
            b.poolFormat(o.poolFormat);
        }
        if (o.shards > 0) {
            b.shards(o.shards);
        }
        try (GPHashIndex index = b.create()) {
            List<org.gphash.IndexStats> shards = index.shardStats();
            growth.newPool(shards);
        }
        model.clear();
    }

    /** A builder for the pool at {@code at} with the run's backend and journal. */
    private GPHashIndex.Builder builder(Path at) {
        GPHashIndex.Builder b = GPHashIndex.builder(at).backend(o.backend);
        return o.journal != null ? b.journal(org.gphash.Journaling.in(o.journal)) : b;
    }

    /** The pool files: the one pool, or each shard's of a sharded index. */
    private List<Path> poolFiles(Path at) {
        if (o.shards == 0) {
            return List.of(at);
        }
        List<Path> files = new ArrayList<>(o.shards);
        for (int s = 0; s < o.shards; s++) {
            files.add(ShardManifest.shardPath(at, s));
        }
        return files;
    }

    /** Removes a pool file, or a sharded index's directory and everything in it. */
    private static void deletePool(Path at) throws IOException {
        if (Files.isDirectory(at, LinkOption.NOFOLLOW_LINKS)) {
            try (Stream<Path> files = Files.walk(at)) {
                for (Path f : files.sorted(Comparator.reverseOrder()).toList()) {
                    Files.delete(f);
                }
            }
        } else {
            Files.deleteIfExists(at);
        }
    }

    private void round(int r, int inGeneration) throws IOException, InterruptedException {
        tally.rounds++;
        deleteAckLogs();
        Files.deleteIfExists(site);
        Files.deleteIfExists(synced);
        Files.deleteIfExists(ShadowPersistence.imageOf(pool));
        long[] start = nextSeq.clone();
        List<String> cmd = new ArrayList<>(List.of(javaBin(), "--enable-native-access=ALL-UNNAMED",
                "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-Xmx256m",
                "-cp", o.classPath, Worker.class.getName(),
                "pool=" + pool, "ack=" + ack, "board=" + board, "site=" + site, "backend=" + o.backend,
                "seed=" + o.seed, "keys=" + o.keys, "threads=" + o.threads,
                "start=" + Arrays.stream(start).mapToObj(Long::toString).collect(Collectors.joining(",")),
                "durability=" + o.durability,
                "batch=" + o.batch, "mixed=" + o.mixed, "syncEvery=" + o.syncEvery, "synced=" + synced));
        if (o.journal != null) {
            // The flush marks stay from round to round: what an earlier worker (or this driver's
            // verifying open) forced is still on the disk when this worker dies before its first force.
            cmd.add("journal=" + o.journal);
            cmd.add("flushed=" + flushed);
            cmd.add("checkpointMillis=" + (50 + random.nextInt(1000)));
        }
        CrashPoint target = chooseTarget(inGeneration);
        String site = shadow ? chooseSite(target) : null;
        if (repairNext) {
            // The pool still holds the last round's crash: this worker's open repairs it. In
            // power-fail mode the power fails inside that repair.
            repairNext = false;
            tally.repairRounds++;
            target = null;
            site = shadow ? REPAIR_SITE : null;
        }
        if (site != null) {
            target = null;
        }
        // One round in eight (not the first of a pool, nor a repair round) closes the pool after its
        // operations: the kill or the power failure may land inside close() (its persists, the close
        // record, the commit that marks the pool clean), or after it, when the next open trusts the record.
        boolean closeRound = inGeneration > 0 && !REPAIR_SITE.equals(site) && random.nextInt(8) == 0;
        if (closeRound) {
            target = null;
            site = null;
            tally.closeRounds++;
            int first = o.batchOf(0);  // thread 0 closes
            cmd.add("closeAfter=" + (first * (1 + random.nextInt(first > 1 ? 8 : 200))));
            if (shadow) {
                cmd.add("closeFailAt=" + (1 + random.nextInt(6)));  // close persists 3 to 5 times: some rounds close cleanly
            }
        }
        if (target != null) {
            cmd.add("target=" + target);
            cmd.add("targetCount=" + (1 + random.nextInt(target.name().startsWith("RESIZE_ITEM") ? 8 : 2)));
        }
        boolean targeted = target != null;
        if (shadow) {
            // A round aimed at a call site fails at its k-th persist (see chooseSite). Of the rest,
            // one in eight fails within the first few persists, which are recovery's own, and the
            // others at a random persist count.
            if (site != null) {
                cmd.add("failSite=" + site);
                // A repair's clears are few and close together, often one persist: fail at its first.
                int count = site.equals(REPAIR_SITE) ? 1 : 1 + random.nextInt(site.endsWith("persistSlots") ? 6 : 2);
                cmd.add("failSiteCount=" + count);
                cmd.add("failAtPersist=0");
                targeted = true;
            } else {
                int bound = random.nextInt(8) == 0 ? 4 : o.maxPersists;
                cmd.add("failAtPersist=" + (target != null || closeRound ? 0 : 1 + random.nextInt(bound)));
            }
            if (o.dropMetaPersists) {
                cmd.add("dropMetaPersists=true");
            }
        }
        Files.deleteIfExists(board);
        Process worker = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(workerErr.toFile()).start();
        // If this JVM is stopped (Ctrl-C), take the worker down too instead of leaving it running.
        Thread reaper = new Thread(worker::destroyForcibly, "crashtest-reaper");
        Runtime.getRuntime().addShutdownHook(reaper);
        boolean exitedByItself;
        try {
            exitedByItself = drive(worker, target, targeted);
        } finally {
            if (worker.isAlive()) {
                worker.destroyForcibly();
                worker.waitFor();
            }
            Runtime.getRuntime().removeShutdownHook(reaper);
        }
        int exit = worker.exitValue();
        PhaseBoard.Snapshot where = PhaseBoard.read(board);
        boolean closed = exitedByItself && exit == Worker.CLOSED_EXIT;
        if (closeRound && (closed || where.state() == PhaseBoard.CLOSING)) {
            if (closed) {
                tally.closedCleanly++;
            } else {
                tally.crashesInClose++;
            }
        }
        // A simulated power failure left what the medium holds beside the pool: it becomes the pool
        // (the worker's other threads wrote on into the old file until it halted).
        Path image = ShadowPersistence.imageOf(pool);
        if (Files.exists(image)) {
            Files.move(image, pool, StandardCopyOption.REPLACE_EXISTING,
                    StandardCopyOption.ATOMIC_MOVE);
        }
        if (exitedByItself && exit != ShadowPersistence.POWER_FAIL_EXIT && !closed) {
            throw new IllegalStateException("round " + (r + 1) + ": worker exited with status " + exit
                    + " on its own; its output:\n" + Files.readString(workerErr));
        }
        if (!closed) {
            classify(where, exitedByItself, target);
        }
        if (journalPowerCut) {
            cutPower();
        }
        // One round in ten is verified on a copy, leaving the crashed pool for the next worker to
        // repair on its open (else every worker opens a pool the driver already recovered, and no
        // crash ever lands in recovery's repair).
        // (Not with a journal: a copy of the pool would be opened with the same journal.)
        boolean leaveForRepair = o.journal == null && inGeneration + 1 < o.roundsPerPool && random.nextInt(10) == 0;
        boolean recovered = verify(start, r, leaveForRepair);
        repairNext = leaveForRepair && recovered;
        if (!recovered) {
            newPool();  // nothing can be checked on a pool recovery refuses: go on with a new one
        }
    }

    /**
     * The power cut of a journaled pool after the worker's kill: the pool (tmpfs) is gone; each journal
     * segment keeps what the worker's last flush made durable (segments before the one it names were
     * forced whole when the journal moved past them, those after it only their header) and a random
     * part of the rest, so the last record kept may be torn; checkpoint temporaries go too.
     */
    private void cutPower() throws IOException {
        tally.journalPowerCuts++;
        deletePool(pool);
        long forcedSegment = -1;
        long forcedBytes = 0;
        if (Files.exists(flushed) && Files.size(flushed) >= 16) {
            ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(flushed)).order(ByteOrder.LITTLE_ENDIAN);
            forcedSegment = b.getLong(0);
            forcedBytes = b.getLong(8);
        }
        try (Stream<Path> files = Files.list(o.journal)) {
            for (Path f : files.toList()) {
                String name = f.getFileName().toString();
                if (name.endsWith(".tmp")) {
                    Files.delete(f);
                    continue;
                }
                if (!name.startsWith("journal-") || !name.endsWith(".seg")) {
                    continue;
                }
                long first = Long.parseUnsignedLong(name.substring(8, 24), 16);
                long size = Files.size(f);
                long durable = first < forcedSegment ? size : first == forcedSegment ? Math.min(size, forcedBytes) : Math.min(size, 64);
                long keep = durable + (size > durable ? random.nextLong(size - durable + 1) : 0);
                if (keep < size) {
                    tally.journalBytesCut += size - keep;
                    try (FileChannel ch = FileChannel.open(f, StandardOpenOption.WRITE)) {
                        ch.truncate(keep);
                    }
                }
            }
        }
    }

    /** Set when the pool was left as the last round's crash left it, for the next worker to repair. */
    private boolean repairNext;

    private CrashPoint chooseTarget(int inGeneration) {
        // Early in a pool's life resizes happen: park at a resize point there. Every fourth round
        // parks at value reclamation. The rest are kills at random moments.
        if (inGeneration == 0 || inGeneration == 1 && random.nextBoolean()) {
            return RESIZE_POINTS[random.nextInt(RESIZE_POINTS.length)];
        }
        if (random.nextInt(4) == 0) {
            return CrashPoint.VALUE_RECLAIMED;
        }
        if (shadow && random.nextInt(4) == 0) {
            CrashPoint[] all = CrashPoint.values();
            return all[random.nextInt(all.length)];
        }
        return null;
    }

    /**
     * Power-fail mode: persist calls of resizes and of recovery are rare among all persists, so a
     * failure at a random persist count seldom lands in them. Half the rounds aimed at a resize crash
     * point aim at a resize's persist call instead (a partly persisted run of copies or clears is a
     * state no crash point shows), and one round in six of the others at recovery's or a header
     * commit's. Returns the engine {@code Class.method} to fail in, or null.
     */
    private String chooseSite(CrashPoint target) {
        if (target != null && target.name().startsWith("RESIZE_") && random.nextBoolean()) {
            return RESIZE_SITES.get(random.nextInt(RESIZE_SITES.size()));
        }
        if (target == null && random.nextInt(6) == 0) {
            return OTHER_SITES.get(random.nextInt(OTHER_SITES.size()));
        }
        return null;
    }

    /**
     * Persist call sites of a resize (engine {@code Class.method}, as {@link ShadowPersistence#callSite()}
     * names them; {@code DriverSitesTest} checks that each names a method that exists).
     */
    static final List<String> RESIZE_SITES = List.of("Resizer.persistSlots", "Resizer.addTopLevel");
    /** Persist call sites of a header commit. */
    static final List<String> OTHER_SITES = List.of("HeaderStore.commit");
    /** Recovery's repair: the site of a round whose worker opens a pool left unrecovered. */
    static final String REPAIR_SITE = "CpuPasses.clearBroken";

    /** Lets the worker run and kills it; returns whether it exited by itself (a power failure). */
    private boolean drive(Process worker, CrashPoint target, boolean targeted) throws InterruptedException, IOException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(o.roundTimeoutSeconds);
        if (shadow || targeted) {
            // Wait for the power failure, or for the worker to park at its target; if neither comes
            // (the point was not reached in time), it is killed at whatever it is doing.
            long patience = targeted ? 1500 : o.roundTimeoutSeconds * 1000L;
            long until = Math.min(deadline, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(patience));
            while (System.nanoTime() < until && worker.isAlive()) {
                if (target != null && !shadow && PhaseBoard.read(board).state() == PhaseBoard.PARKED) {
                    break;
                }
                Thread.sleep(5);
            }
            if (!worker.isAlive()) {
                return true;
            }
        } else if (random.nextInt(8) == 0) {
            // Some kills are timed from the fork, so they can land while the worker is opening the
            // pool, i.e. during recovery.
            Thread.sleep(100 + random.nextInt(600));
        } else {
            while (System.nanoTime() < deadline && worker.isAlive()
                    && PhaseBoard.read(board).state() < PhaseBoard.RUNNING) {
                Thread.sleep(2);
            }
            Thread.sleep(random.nextInt(o.maxKillMillis + 1));
        }
        if (!worker.isAlive()) {
            return true;
        }
        worker.destroyForcibly(); // SIGKILL on Linux
        worker.waitFor();
        return false;
    }

    private void classify(PhaseBoard.Snapshot where, boolean exitedByItself, CrashPoint target) throws IOException {
        if (exitedByItself) {
            tally.powerFailures++;
            String s = Files.exists(site) ? Files.readString(site) : "?";
            tally.powerFailSites.merge(s, 1L, Long::sum);
        } else {
            tally.kills++;
            if (where.state() == PhaseBoard.PARKED) {
                tally.targetedKills++;
            }
        }
        if (where.state() == PhaseBoard.STARTING) {
            tally.killsBeforeOpen++;
        } else if (where.state() == PhaseBoard.OPENING) {
            tally.killsInRecovery++;
        }
        if (where.inResize()) {
            tally.killsInResize++;
        }
        if (where.point() == 0 && where.state() == PhaseBoard.RUNNING) {
            tally.killsBetweenOperations++;
        }
        if (where.point() > 0) {
            CrashPoint p = CrashPoint.values()[where.point() - 1];
            tally.lastPointAtKill.merge(p, 1L, Long::sum);
            if (p == CrashPoint.VALUE_RECLAIMED) {
                tally.killsInReclamation++;
            }
        }
    }

    /**
     * Checks the round: every acknowledged operation against the model, after a recovering open, then
     * the offline check. With {@code onCopy}, all of it runs on a copy of the pool, and the pool is
     * left as the crash left it.
     */
    private boolean verify(long[] start, int r, boolean onCopy) throws IOException {
        if (!onCopy) {
            return verify(start, r, pool);
        }
        Path copy = pool.resolveSibling(pool.getFileName() + ".verify");
        deletePool(copy);
        // Owner-only like the pool itself (a sharded index: its directory, manifest and shards).
        if (o.shards > 0) {
            Files.createDirectory(copy, PosixFilePermissions.asFileAttribute(
                    PosixFilePermissions.fromString("rwx------")));
            try (Stream<Path> files = Files.list(pool)) {
                for (Path f : files.toList()) {
                    Files.copy(f, copy.resolve(f.getFileName()), StandardCopyOption.COPY_ATTRIBUTES);
                }
            }
        } else {
            Files.copy(pool, copy, StandardCopyOption.REPLACE_EXISTING,
                    StandardCopyOption.COPY_ATTRIBUTES);
        }
        try {
            return verify(start, r, copy);
        } finally {
            deletePool(copy);
        }
    }

    /**
     * Checks the round on {@code pool}; false when recovery refused to open it (damage no crash
     * leaves, counted as a check failure: a pool that lost persists a crash must not lose can look so).
     */
    private boolean verify(long[] start, int r, Path pool) throws IOException {
        // Each worker thread's acknowledgements, against the model of its own keys; then each
        // thread's first unacknowledged operation (and the rest of its batch) is in flight.
        Workload.Op[] inflight = new Workload.Op[o.threads];
        model.startRound();
        for (int t = 0; t < o.threads; t++) {
            inflight[t] = model.replayAcks(Worker.ackLogOf(ack, t), start[t], r);
            // Up to a batch of operations may be unacknowledged (the rest of a batch whose acks were
            // cut, or the next batch); the next round starts after all of them.
            nextSeq[t] = inflight[t].seq() + o.batchOf(t);
        }

        RecoveryReport rec;
        GPHashIndex opened;
        try {
            opened = builder(pool).open();
        } catch (PoolFormatException | JournalDamagedException refused) {
            tally.checkFailures++;
            Path kept = keepRefused(pool, r);
            log.printf("round %d: recovery refused the pool: %s (kept as %s, with the worker's output and the ack logs)%n",
                    r + 1, refused.getMessage(), kept);
            return false;
        }
        try (GPHashIndex index = opened) {
            rec = index.lastRecovery();
            if (rec.journal().rebuilt()) {
                tally.journalRebuilds++;
                tally.journalOpsReplayed += rec.journal().operationsReplayed();
                tally.journalTornCuts += rec.journal().cut().isEmpty() ? 0 : 1;
                tally.journalCheckpointsLoaded += rec.journal().checkpoint().isEmpty() ? 0 : 1;
            }
            tally.insertSlotsCleared += rec.insertSlotsCleared();
            tally.duplicatesRemoved += rec.duplicatesRemoved();
            if (rec.resizeResumed()) {
                tally.resizesResumed++;
            }
            if (rec.valueBlocksInUse() != rec.items()) {
                tally.leakedBytes += (rec.valueBlocksInUse() - rec.items()) * (long) Workload.valueSize(o.poolFormat);
                log.printf("round %d: after recovery %d value blocks are in use for %d items%n", r + 1,
                        rec.valueBlocksInUse(), rec.items());
            }
            model.compare(index, inflight, r);
        }
        List<Path> files = poolFiles(pool);
        for (int s = 0; s < files.size(); s++) {
            PoolReport check = PoolScanner.scan(files.get(s), Progress.NONE, o.itemChecksums);
            if (!check.sound() || check.findings().count(Problem.INSERT_SLOT) > 0) {
                tally.checkFailures++;
                log.printf("round %d: check of %s failed after recovery: %s%n", r + 1, files.get(s).getFileName(),
                        check.findings().kinds());
            }
            growth.check(check, s, model.maxItems(), 1024 + 2L * o.batch * o.threads, tally, log, r);
        }
        return true;
    }

    /**
     * Keeps what a refused round left for study (issue 52): the pool, the journal, the worker's output
     * and every thread's acknowledgement log, in a directory beside the pool named for the round.
     */
    private Path keepRefused(Path refused, int r) throws IOException {
        Path dir = pool.toAbsolutePath().resolveSibling(pool.getFileName() + ".refused-round-" + (r + 1) + "-seed-" + o.seed);
        Files.createDirectories(dir);
        List<Path> what = new ArrayList<>(List.of(refused, workerErr, site, board));
        for (int t = 0; t < o.threads; t++) {
            what.add(Worker.ackLogOf(ack, t));
        }
        for (Path p : what) {
            if (Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)) {
                Files.copy(p, dir.resolve(p.getFileName()), StandardCopyOption.REPLACE_EXISTING);
            }
        }
        if (o.journal != null && Files.isDirectory(o.journal)) {
            Path j = Files.createDirectories(dir.resolve("journal"));
            try (Stream<Path> files = Files.list(o.journal)) {
                for (Path f : files.toList()) {
                    Files.copy(f, j.resolve(f.getFileName()), StandardCopyOption.REPLACE_EXISTING);
                }
            }
        }
        return dir;
    }

    /** Deletes every worker thread's acknowledgement log. */
    private void deleteAckLogs() throws IOException {
        for (int t = 0; t < o.threads; t++) {
            Files.deleteIfExists(Worker.ackLogOf(ack, t));
        }
    }

    private static String javaBin() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }
}
