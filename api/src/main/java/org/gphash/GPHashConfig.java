package org.gphash;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;

import org.gphash.bktcache.BktCacheConfig;
import org.gphash.spi.CrashHook;

/**
 * Immutable configuration of an index, made by {@link GPHashIndex.Builder}, where every setting is
 * written, defaulted and documented once: the withers below go back through the builder
 * ({@link GPHashIndex#from}), so no copy of the field list lives here. Geometry fields are 0
 * when not specified: {@code create} then uses the defaults of {@link Geometry#DEFAULT} and
 * {@code open} takes them from the pool; a specified field must match the pool on open.
 * {@code bucketCache} configures BktCache, the GPU engine's cache of hot buckets in GPU memory
 * (the CPU engine has none). {@code repairBeyondCrash} lets open clear damage no crash can explain
 * instead of refusing the pool (what {@code gphash recover --force} does; default off).
 * {@code followSymlinks} lets open follow a symbolic link at the path (default off).
 * {@code itemChecksums} makes a new pool keep a CRC32C of every item (default off; open takes the
 * pool's own setting). {@code verifyOnOpen} scans and judges the table even after a clean close.
 * {@code durability} says when writes become durable ({@link Durability}; default PER_BATCH).
 * {@code coalescing} says whether single-key calls are merged into batches ({@link Coalescing}).
 *
 * @param path              the pool file
 * @param keySize           bytes per key (0: the default on create, the pool's on open)
 * @param valueSize         bytes per value (0: as above)
 * @param levels            levels of buckets the table starts with (0: as above)
 * @param hashes            hash functions, candidate buckets per level (0: as above)
 * @param slotsPerBucket    slots per bucket (0: as above)
 * @param initialCapacity   items the table is sized for on create (0: the default)
 * @param maxPoolBytes      the most bytes the pool file may grow to (0: no limit)
 * @param backend           the engine: CPU or GPU
 * @param jdkPersistence    persist with the JDK's msync even where libpmem is present
 * @param seed              the hash seed of a new pool (empty: chosen at random)
 * @param crashHook         told at every persist point ({@link CrashHook#NONE}; crash tests set another, {@link #withCrashHook})
 * @param bucketCache       BktCache's settings (the GPU engine's cache of hot buckets)
 * @param indexMirror       whether the GPU engine keeps a copy of the index in GPU memory
 * @param repairBeyondCrash clear damage no crash can explain instead of refusing the pool
 * @param followSymlinks    follow a symbolic link at the path
 * @param itemChecksums     keep a CRC32C of every item (new pools)
 * @param poolFormat        the pool format a new pool takes (0: the default, 2); open takes the pool's
 *                          own and refuses a pool of another when one is asked for
 * @param verifyOnOpen      scan and judge the table on every open
 * @param durability        when writes become durable
 * @param coalescing        whether single-key calls are merged into batches
 * @param gpuTuning         the GPU engine's tuning ({@link GpuTuning}; the CPU engine ignores it)
 * @param placement         one pool file or a directory of shards, and the GPUs ({@link Placement})
 * @param journaling        the journal and checkpoints that make the index survive a power cut
 *                          ({@link Journaling}), or null for none
 */
public record GPHashConfig(Path path, int keySize, int valueSize, int levels, int hashes, int slotsPerBucket,
                           long initialCapacity, long maxPoolBytes, Backend backend, boolean jdkPersistence,
                           OptionalLong seed, CrashHook crashHook, BktCacheConfig bucketCache,
                           IndexMirror indexMirror, boolean repairBeyondCrash, boolean followSymlinks,
                           boolean itemChecksums, int poolFormat, boolean verifyOnOpen, Durability durability,
                           Coalescing coalescing, GpuTuning gpuTuning, Placement placement, Journaling journaling) {

    /** Items a new pool is sized for when {@code initialCapacity} is 0. */
    public static final long DEFAULT_INITIAL_CAPACITY = 1L << 16;

    /** Checks the fields: each names what is wrong in its exception. */
    public GPHashConfig {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(backend, "backend");
        Objects.requireNonNull(seed, "seed");
        Objects.requireNonNull(crashHook, "crashHook");
        Objects.requireNonNull(bucketCache, "bucketCache");
        Objects.requireNonNull(indexMirror, "indexMirror");
        Objects.requireNonNull(durability, "durability");
        Objects.requireNonNull(coalescing, "coalescing");
        Objects.requireNonNull(gpuTuning, "gpuTuning");
        Objects.requireNonNull(placement, "placement");
        if (initialCapacity < 1) {
            throw new IllegalArgumentException("initialCapacity must be at least 1, got " + initialCapacity);
        }
        if (maxPoolBytes < 1) {
            throw new IllegalArgumentException("maxPoolBytes must be positive, got " + maxPoolBytes);
        }
        if (poolFormat != 0 && poolFormat != 2 && poolFormat != 3) {
            throw new IllegalArgumentException("poolFormat must be 2 or 3 (0: the default), got " + poolFormat);
        }
    }

    /**
     * This configuration with another index placement.
     *
     * @param mirror AUTO, REQUIRED or OFF
     * @return a copy with it
     */
    public GPHashConfig withIndexMirror(IndexMirror mirror) {
        return GPHashIndex.from(this).indexMirror(mirror).config();
    }

    /**
     * This configuration, repairing damage beyond a crash on open or not.
     *
     * @param repair whether open clears damage beyond a crash
     * @return a copy with it
     */
    public GPHashConfig withRepairBeyondCrash(boolean repair) {
        return GPHashIndex.from(this).repairBeyondCrash(repair).config();
    }

    /**
     * This configuration, scanning the table on open even after a clean close, or not.
     *
     * @param verify whether every open scans the table
     * @return a copy with it
     */
    public GPHashConfig withVerifyOnOpen(boolean verify) {
        return GPHashIndex.from(this).verifyOnOpen(verify).config();
    }

    /**
     * This configuration with a crash hook: told at every persist point, for crash tests and the crash
     * harness ({@link CrashHook}, part of the SPI; a user's builder has no such setting). Open it with
     * {@link GPHashIndex#from(GPHashConfig)}.
     *
     * @param hook the hook
     * @return a copy with it
     */
    public GPHashConfig withCrashHook(CrashHook hook) {
        return GPHashIndex.from(this).crashHook(hook).config();
    }

    /**
     * This configuration with another BktCache.
     *
     * @param cache BktCache's settings
     * @return a copy with them
     */
    public GPHashConfig withBucketCache(BktCacheConfig cache) {
        return GPHashIndex.from(this).bucketCache(cache).config();
    }

    /**
     * This configuration with another tuning of the GPU engine.
     *
     * @param tuning the tuning
     * @return a copy with it
     */
    public GPHashConfig withGpuTuning(GpuTuning tuning) {
        return GPHashIndex.from(this).gpuTuning(tuning).config();
    }

    /**
     * The configuration of one shard pool of the sharded index this configures: a single pool file
     * at {@code shardPool} on GPU {@code device}, sized for its share of {@code initialCapacity} and
     * {@code maxPoolBytes}, every other setting as here.
     *
     * @param shardPool the shard's pool file
     * @param device    the GPU it runs on (the CPU engine ignores it)
     * @return the shard's configuration
     */
    public GPHashConfig forShard(Path shardPool, int device) {
        return GPHashIndex.shardConfig(this, shardPool, device);
    }

    /** {@return the geometry a new pool gets: specified fields, defaults for the rest. Validates it} */
    public Geometry geometryForCreate() {
        Geometry d = Geometry.DEFAULT;
        Geometry g = new Geometry(or(levels, d.levels()), or(hashes, d.hashes()), or(slotsPerBucket, d.slotsPerBucket()),
                or(keySize, d.keySize()), or(valueSize, d.valueSize()), itemChecksums);
        if (g.levels() * g.hashes() * g.slotsPerBucket() < 2) {
            // One candidate slot per key: two keys whose hashes meet force a resize, so the table
            // grows with the square of the items (5,000 items made a 1 GiB pool; issue 27).
            throw new IllegalArgumentException("levels x hashes x slotsPerBucket is 1: each key would have a single "
                    + "candidate slot, and the table would double whenever two keys meet (5,000 items made a 1 GiB pool); "
                    + "give keys at least 2 candidate slots (the default is 2 levels x 2 hashes x 8 slots); nothing was created");
        }
        return g;
    }

    /** Candidate slots per key and level below which {@code create} warns that the table will resize long before it fills. */
    public static final int FEW_CANDIDATES = 4;

    private static int or(int value, int fallback) {
        return value == 0 ? fallback : value;
    }

    /**
     * The differences between the specified fields and a pool's geometry; empty when they agree.
     *
     * @param pool the pool's geometry
     * @return one line per field that differs
     */
    public List<String> mismatches(Geometry pool) {
        return mismatches(pool, 0);
    }

    /**
     * What a pool of geometry {@code pool} and format {@code poolFormat} does not match of what this
     * configuration asks for (a field left 0 matches anything); empty when it matches.
     *
     * @param pool       the pool's geometry
     * @param poolFormat the pool's format version (0: not compared)
     * @return one line per mismatch
     */
    public List<String> mismatches(Geometry pool, int poolFormat) {
        List<String> out = new ArrayList<>();
        if (poolFormat != 0) {
            compare(out, "poolFormat", this.poolFormat, poolFormat);
        }
        compare(out, "keySize", keySize, pool.keySize());
        compare(out, "valueSize", valueSize, pool.valueSize());
        compare(out, "levels", levels, pool.levels());
        compare(out, "hashes", hashes, pool.hashes());
        compare(out, "slotsPerBucket", slotsPerBucket, pool.slotsPerBucket());
        return out;
    }

    private static void compare(List<String> out, String name, int asked, int actual) {
        if (asked != 0 && asked != actual) {
            out.add(name + " " + asked + " was asked for but the pool has " + actual);
        }
    }
}
