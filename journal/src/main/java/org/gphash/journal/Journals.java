package org.gphash.journal;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.function.ObjLongConsumer;

import org.gphash.Durability;
import org.gphash.GPHashConfig;
import org.gphash.GPHashIndex;
import org.gphash.JournalReplay;
import org.gphash.Journaling;
import org.gphash.error.PoolExistsException;
import org.gphash.error.PoolIoException;
import org.gphash.error.PoolLockedException;
import org.gphash.spi.Engine;
import org.gphash.spi.JournalFactory;

/**
 * The journal's factory (found through {@link java.util.ServiceLoader}): decides at open whether the
 * pool can be trusted or must be rebuilt from checkpoint and journal, and wraps the engine in a
 * {@link JournaledEngine}.
 *
 * <p>The pool is trusted only where the journal's state names it (its identity) and the machine has
 * not booted since it was made or last opened whole. Otherwise (the file gone with a tmpfs at a power
 * cut, a pool on a disk that was never flushed, a rebuild interrupted) it is removed and rebuilt. A
 * pool of this boot that is not the journal's (another identity) is refused: rebuilding would delete it.
 */
public final class Journals implements JournalFactory {

    private static final System.Logger LOG = System.getLogger("org.gphash.journal");

    /** The crash harness's observer of journal forces ({@link #observeFlushes}); none by default. */
    private static volatile Journal.FlushObserver observer = Journal.FlushObserver.NONE;

    /** For the crash harness: told after every force of which segment's bytes are durable. */
    public static void observeFlushes(ObjLongConsumer<Long> forced) {
        observer = (segment, bytes) -> forced.accept(segment, bytes);
    }

    /**
     * For benchmarks: where a journaled engine's writing batches spent their time so far (stripes,
     * engine, journal append, the wait for the flush), or "" for an engine without a journal.
     */
    public static String stages(Engine engine) {
        return engine instanceof JournaledEngine j ? j.stages.toString() : "";
    }

    @Override
    public boolean hasJournal(GPHashConfig config) {
        return Files.exists(JournalState.file(config.journaling().directory()), LinkOption.NOFOLLOW_LINKS);
    }

    @Override
    public Engine create(GPHashConfig config, Pools pools) {
        Journaling j = config.journaling();
        Path dir = j.directory();
        JournalFiles.prepareDirectory(dir);
        FileChannel lock = lock(dir);
        try {
            if (JournalState.read(dir) != null || !JournalFiles.list(dir, false).isEmpty()
                    || !JournalFiles.list(dir, true).isEmpty()) {
                throw new PoolExistsException("journal directory " + dir + " already holds a journal: open the index "
                        + "(open() or openOrCreate()) or give create() an empty directory; nothing was created");
            }
            Engine engine = pools.create(poolConfig(config));
            try {
                JournalState state = new JournalState(newJournalId(), engine.geometry().keySize(),
                        engine.geometry().valueSize(), engine.valueLengths(), engine.poolIdentity(), JournalState.currentBoot());
                JournalFiles.removeTemporaries(dir);
                Journal journal = new Journal(dir, state.keySize(), state.valueSize(), engine.valueLengths(),
                        state.journalId(), j, new JournalReader.End(null, false, 0, 0, 1, ""), observer);
                state.write(dir);
                return new JournaledEngine(engine, journal, dir, state.journalId(), j,
                        new JournalReplay(false, "created", "", 0, 0, 0, 0, -1, "", Duration.ZERO, Duration.ZERO), lock, false);
            } catch (RuntimeException e) {
                engine.close();
                throw e;
            }
        } catch (RuntimeException e) {
            close(lock);
            throw e;
        }
    }

    @Override
    public Engine open(GPHashConfig config, Pools pools) {
        Journaling j = config.journaling();
        Path dir = j.directory();
        JournalFiles.prepareDirectory(dir);
        FileChannel lock = lock(dir);
        try {
            long t0 = System.nanoTime();
            JournalState state = JournalState.read(dir);
            Path pool = config.path();
            boolean poolExists = Files.exists(pool, LinkOption.NOFOLLOW_LINKS);
            if (state == null) {
                if (!poolExists) {
                    throw new PoolIoException("cannot open pool " + pool + ": it does not exist, and journal directory "
                            + dir + " holds no journal to rebuild it from");
                }
                return adopt(config, pools, dir, lock);
            }
            checkSizes(config, state, dir);
            JournalFiles.removeTemporaries(dir);
            String boot = JournalState.currentBoot();
            String distrust = !poolExists ? "the pool file was missing"
                    : state.poolIdentity() == 0 ? "a rebuild of the pool was under way"
                    : !"unknown".equals(boot) && !boot.equals(state.bootId()) ? "the pool was made before the machine's last boot"
                    : null;
            Engine engine = null;
            if (distrust == null) {
                engine = pools.open(poolConfig(config));
                if (engine.poolIdentity() != state.poolIdentity()) {
                    // Another pool at this path (copied or restored over it): its data is not the
                    // journal's, and a rebuild would delete it. Refused; it is closed as it was opened.
                    long found = engine.poolIdentity();
                    engine.close();
                    throw new org.gphash.PoolConfigMismatchException("pool " + pool + " (identity "
                            + Long.toHexString(found) + ") is not the pool the journal in " + dir + " stands behind (identity "
                            + Long.toHexString(state.poolIdentity()) + "): move that pool away to have the journal's "
                            + "rebuilt there, or open it with its own journal directory; nothing was deleted");
                }
            }
            JournalReader reader = new JournalReader(dir, state.keySize(), state.valueSize(), state.journalId());
            if (engine != null) {
                // The pool is whole (a clean close, or a process crash its recovery repaired): find the journal's end.
                List<Path> segs = JournalFiles.list(dir, false);
                long from = segs.isEmpty() ? 1 : JournalFiles.seqOf(segs.get(segs.size() - 1), false);
                JournalReader.End end = reader.read(from, -1, r -> { });
                JournalState learned = state.withValueLengths(engine.valueLengths());
                if (learned != state) {
                    learned.write(dir);   // before any record that may hold a shorter value
                }
                Journal journal = new Journal(dir, state.keySize(), state.valueSize(), engine.valueLengths(),
                        state.journalId(), j, end, observer);
                boolean clean = engine.lastRecovery().previousShutdownClean();
                JournalReplay replay = new JournalReplay(false, clean ? "closed cleanly" : "recovered after a process crash",
                        "", 0, 0, 0, 0, end.nextSeq() - 1, end.cut(), Duration.ZERO, Duration.ofNanos(System.nanoTime() - t0));
                // After a process crash the pool may hold a write whose record never reached the journal
                // (it was applied, then the process died): a checkpoint at once makes it durable too.
                return new JournaledEngine(engine, journal, dir, state.journalId(), j, replay, lock, !clean);
            }
            return rebuild(config, pools, dir, lock, state, reader, distrust, t0);
        } catch (RuntimeException e) {
            close(lock);
            throw e;
        }
    }

    private Engine rebuild(GPHashConfig config, Pools pools, Path dir, FileChannel lock, JournalState state,
                           JournalReader reader, String why, long t0) {
        Path pool = config.path();
        String boot = JournalState.currentBoot();
        state.withPool(0, boot).write(dir);   // until the rebuild is done no pool is trusted
        try {
            Files.deleteIfExists(pool);
        } catch (IOException e) {
            throw new PoolIoException("cannot remove stale pool " + pool + " before rebuilding it: " + e.getMessage(), e);
        }
        List<Path> cps = JournalFiles.list(dir, true);
        Path checkpoint = cps.isEmpty() ? null : cps.get(cps.size() - 1);
        long entries = checkpoint == null ? 0 : Checkpoint.entries(checkpoint, state.keySize(), state.valueSize(),
                state.journalId());
        // The key and value size are the journal's (a builder that opens names neither); the rest of
        // the layout is the builder's, as for a new pool.
        GPHashIndex.Builder nb = GPHashIndex.from(poolConfig(config)).keySize(state.keySize()).valueSize(state.valueSize());
        if (state.valueLengths()) {
            nb.poolFormat(3);   // values of any length: only a format 3 pool holds them
        }
        if (entries > config.initialCapacity()) {
            nb.initialCapacity(entries + entries / 8);
        }
        GPHashConfig c = nb.config();
        Engine engine = pools.create(c);
        try {
            Rebuild rebuild = new Rebuild(engine);
            long from = 1;
            long c0 = System.nanoTime();
            if (checkpoint != null) {
                Checkpoint.Summary s = rebuild.loadCheckpoint(checkpoint, state.journalId());
                from = s.startSeq();
                rebuild.flush();
            }
            Duration checkpointLoad = Duration.ofNanos(System.nanoTime() - c0);
            JournalReader.End end = reader.read(from, from, rebuild::replay);
            rebuild.flush();
            Journal journal = new Journal(dir, state.keySize(), state.valueSize(), engine.valueLengths(), state.journalId(),
                    config.journaling(), end, observer);
            state.withPool(engine.poolIdentity(), boot).withValueLengths(engine.valueLengths()).write(dir);
            JournalReplay replay = new JournalReplay(true, why, checkpoint == null ? "" : checkpoint.getFileName().toString(),
                    from, rebuild.entriesLoaded, rebuild.recordsReplayed, rebuild.operationsReplayed, end.nextSeq() - 1,
                    end.cut(), checkpointLoad, Duration.ofNanos(System.nanoTime() - t0));
            if (!end.cut().isEmpty()) {
                LOG.log(System.Logger.Level.WARNING, "journal " + dir + ": " + end.cut());
            }
            return new JournaledEngine(engine, journal, dir, state.journalId(), config.journaling(), replay, lock, false);
        } catch (RuntimeException e) {
            engine.abandon();
            throw e;
        }
    }

    /** An existing pool given a journal for the first time: a checkpoint of it before the open returns. */
    private Engine adopt(GPHashConfig config, Pools pools, Path dir, FileChannel lock) {
        if (!JournalFiles.list(dir, false).isEmpty() || !JournalFiles.list(dir, true).isEmpty()) {
            throw new PoolIoException("journal directory " + dir + " holds journal files but no journal state ("
                    + JournalFiles.STATE + "): it is not a journal this version can open; nothing was changed");
        }
        Engine engine = pools.open(poolConfig(config));
        try {
            JournalState state = new JournalState(newJournalId(), engine.geometry().keySize(), engine.geometry().valueSize(),
                    engine.valueLengths(), engine.poolIdentity(), JournalState.currentBoot());
            Journal journal = new Journal(dir, state.keySize(), state.valueSize(), engine.valueLengths(), state.journalId(),
                    config.journaling(), new JournalReader.End(null, false, 0, 0, 1, ""), observer);
            state.write(dir);
            JournaledEngine journaled = new JournaledEngine(engine, journal, dir, state.journalId(), config.journaling(),
                    new JournalReplay(false, "journal started for an existing pool", "", 0, 0, 0, 0, -1, "", Duration.ZERO, Duration.ZERO),
                    lock, false);
            journaled.checkpoint();
            return journaled;
        } catch (RuntimeException e) {
            engine.close();
            throw e;
        }
    }

    private static void checkSizes(GPHashConfig config, JournalState state, Path dir) {
        if (config.keySize() != 0 && config.keySize() != state.keySize()
                || config.valueSize() != 0 && config.valueSize() != state.valueSize()) {
            throw new org.gphash.PoolConfigMismatchException("the journal in " + dir + " has key/value size "
                    + state.keySize() + "/" + state.valueSize() + " but " + config.keySize() + "/" + config.valueSize()
                    + " was asked for; nothing was opened");
        }
    }

    /** The pool's own settings: it flushes nothing, since the journal makes its writes durable. */
    private static GPHashConfig poolConfig(GPHashConfig config) {
        return GPHashIndex.from(config).durability(Durability.ON_CLOSE_OR_SYNC).config();
    }

    private static long newJournalId() {
        long id;
        do {
            id = new SecureRandom().nextLong();
        } while (id == 0);
        return id;
    }

    /** Holds the journal directory for this process: a second open of the same journal is refused. */
    private static FileChannel lock(Path dir) {
        Path file = dir.resolve(JournalFiles.LOCK);
        try {
            FileChannel ch = FileChannel.open(file, Set.of(StandardOpenOption.CREATE, StandardOpenOption.WRITE),
                    PosixFilePermissions.asFileAttribute(
                            PosixFilePermissions.fromString("rw-------")));
            FileLock l;
            try {
                l = ch.tryLock();
            } catch (OverlappingFileLockException e) {
                l = null;
            }
            if (l == null) {
                ch.close();
                throw new PoolLockedException("journal directory " + dir + " is in use by another open index");
            }
            return ch;
        } catch (IOException e) {
            throw new PoolIoException("cannot lock journal directory " + dir + ": " + e.getMessage(), e);
        }
    }

    private static void close(FileChannel ch) {
        try {
            ch.close();
        } catch (IOException ignored) {
            // releasing the lock of a failed open
        }
    }
}
