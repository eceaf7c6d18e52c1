package org.gphash.index;

import java.nio.file.Path;
import java.util.OptionalLong;

import org.gphash.Backend;
import org.gphash.Coalescing;
import org.gphash.Durability;
import org.gphash.GPHashConfig;
import org.gphash.IndexMirror;
import org.gphash.bktcache.BktCacheConfig;
import org.gphash.spi.CrashHook;

/** Configurations for tests that set the geometry, the seed and a crash hook directly. */
final class Configs {

    private Configs() {
    }

    /** Every other setting at its default (refuse damage beyond a crash, PER_BATCH, AUTO coalescing). */
    static GPHashConfig of(Path path, int keySize, int valueSize, int levels, int hashes, int slotsPerBucket,
                           long initialCapacity, long maxPoolBytes, Backend backend, boolean jdkPersistence,
                           OptionalLong seed, CrashHook crashHook, BktCacheConfig bucketCache) {
        return new GPHashConfig(path, keySize, valueSize, levels, hashes, slotsPerBucket, initialCapacity, maxPoolBytes,
                backend, jdkPersistence, seed, crashHook, bucketCache, IndexMirror.AUTO, false, false, false, 0, false,
                Durability.PER_BATCH, Coalescing.AUTO, org.gphash.GpuTuning.fromSystemProperty(), org.gphash.Placement.SINGLE_POOL, null);
    }
}
