package org.gphash;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;

import org.gphash.bktcache.BktCacheConfig;
import org.gphash.index.CrashHook;
import org.gphash.index.Geometry;

/**
 * Immutable configuration of an index, made by {@link GPHashIndex.Builder}. Geometry fields are 0
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
 */
public record GPHashConfig(Path path, int keySize, int valueSize, int levels, int hashes, int slotsPerBucket,
                           long initialCapacity, long maxPoolBytes, Backend backend, boolean jdkPersistence,
                           OptionalLong seed, CrashHook crashHook, BktCacheConfig bucketCache,
                           IndexMirror indexMirror, boolean repairBeyondCrash, boolean followSymlinks,
                           boolean itemChecksums, boolean verifyOnOpen, Durability durability,
                           Coalescing coalescing) {

    public static final long DEFAULT_INITIAL_CAPACITY = 1L << 16;

    public GPHashConfig {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(backend, "backend");
        Objects.requireNonNull(seed, "seed");
        Objects.requireNonNull(crashHook, "crashHook");
        Objects.requireNonNull(bucketCache, "bucketCache");
        Objects.requireNonNull(indexMirror, "indexMirror");
        Objects.requireNonNull(durability, "durability");
        Objects.requireNonNull(coalescing, "coalescing");
        if (initialCapacity < 1) {
            throw new IllegalArgumentException("initialCapacity must be at least 1, got " + initialCapacity);
        }
        if (maxPoolBytes < 1) {
            throw new IllegalArgumentException("maxPoolBytes must be positive, got " + maxPoolBytes);
        }
    }

    /** A configuration that refuses damage beyond a crash (the default). */
    public GPHashConfig(Path path, int keySize, int valueSize, int levels, int hashes, int slotsPerBucket,
                        long initialCapacity, long maxPoolBytes, Backend backend, boolean jdkPersistence,
                        OptionalLong seed, CrashHook crashHook, BktCacheConfig bucketCache, IndexMirror indexMirror) {
        this(path, keySize, valueSize, levels, hashes, slotsPerBucket, initialCapacity, maxPoolBytes, backend,
                jdkPersistence, seed, crashHook, bucketCache, indexMirror, false, false, false, false, Durability.PER_BATCH,
                Coalescing.AUTO);
    }

    /** A configuration with the default index placement ({@link IndexMirror#AUTO}). */
    public GPHashConfig(Path path, int keySize, int valueSize, int levels, int hashes, int slotsPerBucket,
                        long initialCapacity, long maxPoolBytes, Backend backend, boolean jdkPersistence,
                        OptionalLong seed, CrashHook crashHook, BktCacheConfig bucketCache) {
        this(path, keySize, valueSize, levels, hashes, slotsPerBucket, initialCapacity, maxPoolBytes, backend,
                jdkPersistence, seed, crashHook, bucketCache, IndexMirror.AUTO);
    }

    /** This configuration with another index placement. */
    public GPHashConfig withIndexMirror(IndexMirror mirror) {
        return new GPHashConfig(path, keySize, valueSize, levels, hashes, slotsPerBucket, initialCapacity, maxPoolBytes,
                backend, jdkPersistence, seed, crashHook, bucketCache, mirror, repairBeyondCrash, followSymlinks,
                itemChecksums, verifyOnOpen, durability, coalescing);
    }

    /** This configuration, repairing damage beyond a crash on open or not. */
    public GPHashConfig withRepairBeyondCrash(boolean repair) {
        return new GPHashConfig(path, keySize, valueSize, levels, hashes, slotsPerBucket, initialCapacity, maxPoolBytes,
                backend, jdkPersistence, seed, crashHook, bucketCache, indexMirror, repair, followSymlinks,
                itemChecksums, verifyOnOpen, durability, coalescing);
    }

    /** This configuration, scanning the table on open even after a clean close, or not. */
    public GPHashConfig withVerifyOnOpen(boolean verify) {
        return new GPHashConfig(path, keySize, valueSize, levels, hashes, slotsPerBucket, initialCapacity, maxPoolBytes,
                backend, jdkPersistence, seed, crashHook, bucketCache, indexMirror, repairBeyondCrash, followSymlinks,
                itemChecksums, verify, durability, coalescing);
    }

    /** This configuration with another BktCache. */
    public GPHashConfig withBucketCache(BktCacheConfig cache) {
        return new GPHashConfig(path, keySize, valueSize, levels, hashes, slotsPerBucket, initialCapacity, maxPoolBytes,
                backend, jdkPersistence, seed, crashHook, cache, indexMirror, repairBeyondCrash, followSymlinks,
                itemChecksums, verifyOnOpen, durability, coalescing);
    }

    /** The geometry a new pool gets: specified fields, defaults for the rest. Validates it. */
    public Geometry geometryForCreate() {
        Geometry d = Geometry.DEFAULT;
        return new Geometry(or(levels, d.levels()), or(hashes, d.hashes()), or(slotsPerBucket, d.slotsPerBucket()),
                or(keySize, d.keySize()), or(valueSize, d.valueSize()), itemChecksums);
    }

    private static int or(int value, int fallback) {
        return value == 0 ? fallback : value;
    }

    /** The differences between the specified fields and a pool's geometry; empty when they agree. */
    public List<String> mismatches(Geometry pool) {
        List<String> out = new ArrayList<>();
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
