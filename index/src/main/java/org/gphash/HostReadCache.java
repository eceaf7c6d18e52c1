package org.gphash;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLongArray;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;

/**
 * Hot keys' values on the host, in front of the coalescer (KVCG's CPU-side cache): a single-key get
 * that hits never waits for a GPU batch. Caffeine (W-TinyLFU, bounded in bytes) holds the values.
 *
 * <p>It never returns a value the pool no longer holds. Every write that passes through the index
 * bumps its key's stripe counter and removes the key, once when it is queued and once when it has
 * run. A get that missed notes its key's stripe before it is queued and caches what it read only if
 * the stripe has not moved meanwhile, inside the cache map's own lock for that key (so a writer's
 * removal, which takes the same lock, comes wholly before or wholly after it). Any write that may
 * have run after the read was taken therefore either stops the insert or removes the entry. Writes
 * that bypass the index (the GPU engine's device-resident batches) cannot be seen: asking the index
 * for its engine turns the cache off ({@link #disable}).
 */
final class HostReadCache {

    private static final int STRIPES = 1 << 14;

    private final Cache<KeyBytes, byte[]> cache;
    private final AtomicLongArray stripes = new AtomicLongArray(STRIPES);
    private volatile boolean enabled = true;

    HostReadCache(long maxBytes) {
        this.cache = Caffeine.newBuilder()
                .maximumWeight(maxBytes)
                .weigher((KeyBytes k, byte[] v) -> k.bytes.length + v.length + 64)
                .recordStats()
                .build();
    }

    /** A key's bytes as a map key (arrays compare by identity). */
    static final class KeyBytes {
        final byte[] bytes;
        private final int hash;

        KeyBytes(byte[] bytes) {
            this.bytes = bytes;
            this.hash = Arrays.hashCode(bytes);
        }

        int stripe() {
            int h = hash * 0x9E3779B9;
            return (h ^ (h >>> 16)) & (STRIPES - 1);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof KeyBytes k && k.hash == hash && Arrays.equals(k.bytes, bytes);
        }

        @Override
        public int hashCode() {
            return hash;
        }
    }

    /** The cached value (not a copy: callers copy it out), or null. */
    byte[] get(KeyBytes key) {
        return enabled ? cache.getIfPresent(key) : null;
    }

    /** What a missed get notes before it is queued. */
    long stamp(KeyBytes key) {
        return stripes.get(key.stripe());
    }

    /** A missed get's result, cached unless a write to its stripe came since {@code stamp}. */
    void offer(KeyBytes key, long stamp, byte[] value) {
        if (!enabled) {
            return;
        }
        int s = key.stripe();
        cache.asMap().compute(key, (k, old) -> stripes.get(s) == stamp ? value : old);
    }

    /** A write to {@code key} is about to be queued, or has run. */
    void written(KeyBytes key) {
        stripes.incrementAndGet(key.stripe());
        cache.invalidate(key);
    }

    /** Off for good: writes are about to bypass the index. */
    void disable() {
        enabled = false;
        for (int i = 0; i < STRIPES; i++) {
            stripes.incrementAndGet(i);
        }
        cache.invalidateAll();
    }

    boolean enabled() {
        return enabled;
    }

    long hits() {
        return cache.stats().hitCount();
    }

    long misses() {
        return cache.stats().missCount();
    }
}
