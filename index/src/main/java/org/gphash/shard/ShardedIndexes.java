package org.gphash.shard;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.concurrent.ExecutorService;
import java.util.function.IntFunction;

import org.gphash.GPHashConfig;
import org.gphash.Geometry;
import org.gphash.GpuFeatures;
import org.gphash.PoolConfigMismatchException;
import org.gphash.error.PoolExistsException;
import org.gphash.error.PoolFormatException;
import org.gphash.error.PoolIoException;
import org.gphash.format.HeaderStore;
import org.gphash.format.PoolHeader;
import org.gphash.format.SlotMeta;
import org.gphash.persistence.PoolFile;
import org.gphash.spi.Engine;
import org.gphash.spi.EngineFactory;
import org.gphash.spi.ShardedIndexFactory;
import org.gphash.table.PoolInspector;
import org.gphash.table.TableLayout;

/**
 * Creates, opens and copies sharded indexes: a directory holding a manifest ({@link ShardManifest})
 * and one pool per shard. Found by the API through {@link ServiceLoader}.
 *
 * <p>Create makes the directory (owner-only) and the shard pools at once, then writes the manifest
 * last: a directory without one is an index whose create did not finish, and open refuses it. Open
 * reads the manifest and every shard pool's header read-only, refusing a missing shard, a pool of
 * another index or another geometry before any shard is opened for writing; then it opens the
 * shards at once, each running its own recovery.
 */
public final class ShardedIndexes implements ShardedIndexFactory {

    /** For {@link ServiceLoader}. */
    public ShardedIndexes() {
    }

    /** A directory: a sharded index, or one whose create did not finish (its open says so). */
    @Override
    public boolean isShardedIndex(Path path) {
        return Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS);
    }

    /**
     * Creates the index whole or not at all, and race-safe (issue 52: of four processes calling
     * {@code openOrCreate} on one new directory, three were told to remove the winner's directory): the
     * shards and the manifest are made in a hidden staging directory beside it
     * ({@code .NAME.creating-XXXX}), closed, and the directory renamed into place in one step. A
     * process that loses the race finds the name taken and gets {@link PoolExistsException}
     * ({@code openOrCreate} then opens the winner's index); a directory at the index's name always has
     * its manifest. Then the index is opened as any other.
     */
    /** A pool file whose header carries a shard membership (read-only; any doubt is left to open). */
    @Override
    public String shardOfAnIndex(Path path) {
        if (!Files.isRegularFile(path, LinkOption.NOFOLLOW_LINKS)) {
            return null;
        }
        PoolHeader.ShardMembership m;
        try {
            m = membershipOf(path);
        } catch (RuntimeException e) {
            return null;  // locked, damaged, not a pool: open says what it finds
        }
        if (m == null) {
            return null;
        }
        return "pool " + path + " is shard " + m.shard() + " of the " + m.shards() + " shards of a sharded index (in "
                + "directory " + path.toAbsolutePath().getParent() + "); open that directory: keys written to one shard "
                + "opened alone are unreachable from the index (nothing was opened)";
    }

    @Override
    public Engine create(GPHashConfig config, EngineFactory factory) {
        Path dir = config.path().toAbsolutePath().normalize();
        int n = config.placement().shards();
        Geometry geometry = config.geometryForCreate();
        if (Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            throw new PoolExistsException("cannot create sharded index " + dir + ": it exists");
        }
        Path staging = dir.resolveSibling("." + dir.getFileName() + ".creating-" + Long.toHexString(nonZeroRandom()));
        try {
            Files.createDirectory(staging, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        } catch (IOException e) {
            throw new PoolIoException("cannot create sharded index " + dir + ": " + e.getMessage(), e);
        }
        int visible = factory.visibleDevices();
        ExecutorService workers = ShardedEngine.newWorkers(staging);
        try {
            Engine[] shards = everyShard(n, workers, s -> factory.create(config.forShard(ShardManifest.shardPath(staging, s),
                    config.placement().deviceOf(s, visible))));
            ShardManifest manifest;
            try {
                long[] ids = new long[n];
                for (int s = 0; s < n; s++) {
                    ids[s] = shards[s].poolIdentity();
                }
                long seed = config.seed().isPresent() ? mix(config.seed().getAsLong()) : nonZeroRandom();
                manifest = new ShardManifest(n, seed, geometry, System.currentTimeMillis(), ids, nonZeroRandom(), 1);
                ShardTasks.onEveryShard(n, workers, s -> {
                    shards[s].commitShardMembership(manifest.indexId(), seed, s, n, manifest.epoch());
                    return null;
                });
            } catch (RuntimeException | Error e) {
                closeAll(List.of(shards), e);
                throw e;
            }
            RuntimeException closing = null;
            for (Engine shard : shards) {
                try {
                    shard.close();
                } catch (RuntimeException e) {
                    closing = closing == null ? e : closing;
                }
            }
            if (closing != null) {
                throw closing;
            }
            manifest.write(staging);
            publish(staging, dir);
        } catch (RuntimeException | Error e) {
            removeQuietly(staging, n);
            throw e;
        } finally {
            workers.shutdown();
        }
        return open(config, factory);
    }

    /** Renames the finished staging directory to the index's name, which must still be free. */
    private static void publish(Path staging, Path dir) {
        try {
            // rename(2): fails on a directory that holds anything (every index does), so a winner's stays.
            Files.move(staging, dir, StandardCopyOption.ATOMIC_MOVE);
        } catch (FileAlreadyExistsException | DirectoryNotEmptyException e) {
            throw new PoolExistsException("cannot create sharded index " + dir + ": it exists (made meanwhile)");
        } catch (IOException e) {
            if (Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
                throw new PoolExistsException("cannot create sharded index " + dir + ": it exists (made meanwhile)");
            }
            throw new PoolIoException("cannot create sharded index " + dir + ": " + e.getMessage(), e);
        }
        ShardManifest.syncDirectory(dir.getParent());
    }

    @Override
    public Engine open(GPHashConfig config, EngineFactory factory) {
        long started = System.nanoTime();
        Path dir = config.path();
        ShardManifest checked = checkBeforeOpen(dir, config);
        int visible = factory.visibleDevices();
        ExecutorService workers = ShardedEngine.newWorkers(dir);
        try {
            Engine[] shards = everyShard(checked.shards(), workers,
                    s -> factory.open(config.forShard(ShardManifest.shardPath(dir, s), config.placement().deviceOf(s, visible))));
            Optional<GpuFeatures> gpu;
            ShardManifest manifest;
            try {
                manifest = raiseEpoch(dir, checked, shards, workers);
                gpu = factory.gpuFeaturesAcross(dir, List.of(shards), manifest.seed(), workers);
            } catch (RuntimeException | Error e) {
                closeAll(List.of(shards), e);
                throw e;
            }
            return new ShardedEngine(dir, manifest, shards, workers, gpu, Duration.ofNanos(System.nanoTime() - started));
        } catch (RuntimeException | Error e) {
            workers.shutdown();
            throw e;
        }
    }

    /**
     * Raises the index's open epoch: first in every shard's header, then in the manifest, so that a
     * shard later put back from a copy made before this open has an epoch below the manifest's and is
     * refused (issue 52). A crash between the two leaves shards at the new epoch and the manifest at
     * the old one, which the next open accepts. A version 1 manifest gets an identity here (the one its
     * shards already carry where an earlier upgrade was interrupted).
     */
    private static ShardManifest raiseEpoch(Path dir, ShardManifest raised, Engine[] shards, ExecutorService workers) {
        ShardTasks.onEveryShard(shards.length, workers, s -> {
            shards[s].commitShardMembership(raised.indexId(), raised.seed(), s, raised.shards(), raised.epoch());
            return null;
        });
        raised.write(dir);
        return raised;
    }

    private static PoolHeader.ShardMembership membershipOf(Path pool) {
        try (PoolFile file = PoolFile.openReadOnly(pool)) {
            return HeaderStore.read(file).header().membership();
        }
    }

    /**
     * Makes every shard's engine at once ({@link ShardTasks#onEveryShard}); when one fails, closes those made
     * and throws the first failure.
     */
    private static Engine[] everyShard(int n, ExecutorService workers, IntFunction<Engine> make) {
        List<Engine> made = new ArrayList<>();
        try {
            return ShardTasks.onEveryShard(n, workers, s -> {
                Engine e = make.apply(s);
                synchronized (made) {
                    made.add(e);
                }
                return e;
            }).toArray(Engine[]::new);
        } catch (RuntimeException | Error e) {
            closeAll(made, e);
            throw e;
        }
    }

    private static void closeAll(List<Engine> engines, Throwable failure) {
        for (Engine m : engines) {
            try {
                m.close();
            } catch (RuntimeException suppressed) {
                failure.addSuppressed(suppressed);
            }
        }
    }

    /**
     * The manifest of {@code dir} at the epoch this open raises it to, once it and every shard pool's
     * header (read-only) agree with each other and with the geometry {@code config} names; else the
     * refusal, nothing written.
     */
    static ShardManifest checkBeforeOpen(Path dir, GPHashConfig config) {
        ShardManifest manifest = ShardManifest.read(dir);
        int asked = config.placement().shards();
        if (asked > 0 && asked != manifest.shards()) {
            throw new PoolConfigMismatchException("sharded index " + dir + " has " + manifest.shards() + " shards; the "
                    + "builder asks for " + asked + " (a sharded index keeps its shard count: leave shards() unset to open it)");
        }
        Geometry g = manifest.geometry();
        mismatch(dir, "keySize", config.keySize(), g.keySize());
        mismatch(dir, "valueSize", config.valueSize(), g.valueSize());
        mismatch(dir, "levels", config.levels(), g.levels());
        mismatch(dir, "hashes", config.hashes(), g.hashes());
        mismatch(dir, "slotsPerBucket", config.slotsPerBucket(), g.slotsPerBucket());
        // The epoch this open raises the index to: one past every epoch a shard or the manifest has (a
        // crash may have left shards one ahead); for a version 1 manifest also an identity (the one its
        // shards carry where an earlier upgrade was interrupted).
        long id = manifest.indexId();
        long epoch = manifest.epoch();
        for (int s = 0; s < manifest.shards(); s++) {
            PoolHeader.ShardMembership m = checkShard(dir, manifest, s);
            if (m != null) {
                id = id == 0 ? m.indexId() : id;
                epoch = Math.max(epoch, m.epoch());
            }
        }
        return manifest.at(id == 0 ? nonZeroRandom() : id, epoch + 1);
    }

    /**
     * Checks that shard {@code s}'s pool is the one {@code manifest} names, reading its header only
     * (what open and {@code gphash check} ask of every shard).
     *
     * @param dir      the sharded index's directory
     * @param manifest its manifest
     * @param s        the shard
     * @throws PoolIoException when the pool is missing or cannot be read
     * @return what the shard's header says of its place in the index (null for a shard of a version 1 index)
     * @throws PoolFormatException when it is another pool (another index's or another shard's) or has another geometry
     */
    public static PoolHeader.ShardMembership checkShard(Path dir, ShardManifest manifest, int s) {
        Path pool = ShardManifest.shardPath(dir, s);
        if (!Files.exists(pool, LinkOption.NOFOLLOW_LINKS)) {
            throw new PoolIoException("cannot open sharded index " + dir + ": shard " + s + " (" + pool.getFileName()
                    + ") is missing; the manifest names " + manifest.shards() + " shards");
        }
        PoolHeader h;
        try (PoolFile file = PoolFile.openReadOnly(pool)) {
            h = HeaderStore.read(file).header();
        }
        long id = manifest.poolIds()[s];
        if (h.poolId() != id) {
            throw new PoolFormatException(PoolFormatException.Reason.FOREIGN_HEADER, pool, "shard " + s + " of "
                    + dir + " should be pool " + Long.toHexString(id) + " (the manifest's), but this file is pool "
                    + Long.toHexString(h.poolId()) + ": a pool of another index or another shard was put here");
        }
        if (!h.geometry().equals(manifest.geometry())) {
            throw new PoolFormatException(PoolFormatException.Reason.FOREIGN_HEADER, pool, "shard " + s + " of " + dir
                    + " has geometry " + h.geometry() + "; the manifest says " + manifest.geometry());
        }
        checkMembership(dir, manifest, s, pool, h.membership());
        return h.membership();
    }

    /**
     * What the shard's own header says of its place against what the manifest says (issue 52: the
     * manifest alone decided, so a crafted one, or a shard restored from an older copy, was accepted).
     */
    private static void checkMembership(Path dir, ShardManifest manifest, int s, Path pool, PoolHeader.ShardMembership m) {
        String where = "shard " + s + " of " + dir + " (" + pool.getFileName() + ")";
        if (m == null) {
            if (manifest.indexId() == 0) {
                return;  // a version 1 index, not yet upgraded: its shards carry nothing yet
            }
            throw refused(pool, where + " carries no membership of this index, which every shard of it has: a pool "
                    + "copied in from elsewhere");
        }
        if (manifest.indexId() != 0 && m.indexId() != manifest.indexId()) {
            throw refused(pool, where + " belongs to sharded index " + Long.toHexString(m.indexId()) + ", not to "
                    + Long.toHexString(manifest.indexId()) + " (the manifest's): a pool or manifest of another index");
        }
        if (m.shard() != s || m.shards() != manifest.shards()) {
            throw refused(pool, where + " is shard " + m.shard() + " of " + m.shards() + " by its own header, but the "
                    + "manifest puts it at " + s + " of " + manifest.shards() + ": shard files swapped, a shard left out, "
                    + "or a manifest that was edited");
        }
        if (m.seed() != manifest.seed()) {
            throw refused(pool, where + " was written with shard seed " + Long.toHexString(m.seed()) + ", but the "
                    + "manifest says " + Long.toHexString(manifest.seed()) + ": keys would be looked for in the wrong "
                    + "shards (a manifest that was edited)");
        }
        if (manifest.indexId() == 0) {
            return;
        }
        if (m.epoch() < manifest.epoch()) {
            throw refused(pool, where + " is at open epoch " + m.epoch() + ", the index at " + manifest.epoch() + ": it was "
                    + "restored from an older copy of itself, and writes acknowledged since are missing from it; put "
                    + "back the shard as the index last had it, or restore every shard and the manifest from one "
                    + "snapshot");
        }
        if (m.epoch() > manifest.epoch() + 1) {
            throw refused(pool, where + " is at open epoch " + m.epoch() + ", past the manifest's " + manifest.epoch()
                    + ": the manifest is an older copy");
        }
    }

    /**
     * The items of shard {@code s}'s pool whose key the manifest's shard function sends to another
     * shard: unreachable through the index (what {@code gphash check} counts; 0 in an intact index).
     *
     * @param dir      the sharded index's directory
     * @param manifest its manifest
     * @param s        the shard
     * @return the number of such items
     */
    public static long misplacedItems(Path dir, ShardManifest manifest, int s) {
        ShardFunction function = new ShardFunction(manifest.seed(), manifest.shards());
        try (PoolInspector in = PoolInspector.open(ShardManifest.shardPath(dir, s))) {
            MemorySegment seg = in.segment();
            TableLayout t = in.layout();
            Geometry g = in.geometry();
            long misplaced = 0;
            for (int d = 0; d < t.levelCount(); d++) {
                long slots = t.bucketsAtDepth(d) * g.slotsPerBucket();
                for (long i = 0; i < slots; i++) {
                    long slot = t.levelOffset(d) + i * g.slotSize();
                    if (SlotMeta.isItem(seg.get(PoolHeader.LONG, slot))
                            && function.shardOf(seg, slot + SlotMeta.BYTES, g.keySize()) != s) {
                        misplaced++;
                    }
                }
            }
            return misplaced;
        }
    }

    private static PoolFormatException refused(Path pool, String why) {
        return new PoolFormatException(PoolFormatException.Reason.FOREIGN_HEADER, pool, why + "; nothing was changed");
    }

    private static void mismatch(Path dir, String field, int asked, int actual) {
        if (asked != 0 && asked != actual) {
            throw new PoolConfigMismatchException("sharded index " + dir + " has " + field + " " + actual + ", the builder asks for " + asked);
        }
    }

    /**
     * A copy of the sharded index at {@code dir}, which no process has open, at {@code target} (which
     * must not exist), for {@code gphash snapshot}: every shard checked against the manifest and held
     * read-only at once (no writer can run meanwhile), each copied and fsynced, the manifest written,
     * all in a hidden directory renamed into place, so a crash leaves no partial copy at the name.
     *
     * @param dir    the index's directory
     * @param target where the copy goes
     * @return the manifest copied
     */
    public static ShardManifest copyIndex(Path dir, Path target) {
        ShardManifest manifest = ShardManifest.read(dir);
        Path t = target.toAbsolutePath().normalize();
        if (Files.exists(t, LinkOption.NOFOLLOW_LINKS)) {
            throw new PoolExistsException("cannot snapshot to " + t + ": it exists");
        }
        for (int s = 0; s < manifest.shards(); s++) {
            checkShard(dir, manifest, s);
        }
        Path staging = t.resolveSibling("." + t.getFileName() + ".creating-" + Long.toHexString(nonZeroRandom()));
        List<PoolInspector> held = new ArrayList<>();
        try {
            Files.createDirectory(staging, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            for (int s = 0; s < manifest.shards(); s++) {
                held.add(PoolInspector.open(ShardManifest.shardPath(dir, s)));
            }
            for (int s = 0; s < manifest.shards(); s++) {
                held.get(s).copyTo(ShardManifest.shardPath(staging, s));
            }
            manifest.write(staging);
            publish(staging, t);
            return manifest;
        } catch (IOException e) {
            removeQuietly(staging, manifest.shards());
            throw new PoolIoException("cannot snapshot to " + t + ": " + e.getMessage(), e);
        } catch (RuntimeException | Error e) {
            removeQuietly(staging, manifest.shards());
            throw e;
        } finally {
            for (PoolInspector in : held) {
                in.close();
            }
        }
    }

    /** Removes what a failed create made: the shard pools, a manifest in the writing, the directory. */
    private static void removeQuietly(Path dir, int n) {
        try {
            for (int s = 0; s < n; s++) {
                Files.deleteIfExists(ShardManifest.shardPath(dir, s));
            }
            Files.deleteIfExists(dir.resolve(ShardManifest.FILE_NAME + ".tmp"));
            Files.deleteIfExists(dir.resolve(ShardManifest.FILE_NAME));
            Files.deleteIfExists(dir);
        } catch (IOException e) {
            // Left for the user: open refuses a directory without a manifest, saying so.
        }
    }

    /** The shard seed of an index created with a fixed table seed: derived, so the same seed gives the same index. */
    private static long mix(long seed) {
        long h = (seed ^ 0x5ad5c0de5ad5c0deL) * 0x9E3779B97F4A7C15L;
        h ^= h >>> 31;
        return h == 0 ? 1 : h;
    }

    private static long nonZeroRandom() {
        long s;
        do {
            s = new SecureRandom().nextLong();
        } while (s == 0);
        return s;
    }
}
