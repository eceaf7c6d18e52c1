package org.gphash.frontend;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

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
 *
 * <p>A large batch of writes does the same for every key at once ({@link #writtenAll}): it moves a
 * generation that every stamp includes and every entry carries, so that each entry cached before it
 * is dead (never returned, evicted in time) at the cost of one increment, instead of two cache
 * operations and a key copy per written key, which made 16 threads' large batches of YCSB-A slower
 * through the coalescer than with it off.
 */
final class HostReadCache {

    private static final int STRIPES = 1 << 14;

    private final Cache<KeyBytes, Entry> cache;
    private final AtomicLongArray stripes = new AtomicLongArray(STRIPES);
    /** Moved by {@link #writtenAll}: entries of an earlier generation are dead. */
    private final AtomicLong generation = new AtomicLong();
    private final LongAdder hits = new LongAdder();
    private final LongAdder misses = new LongAdder();
    private volatile boolean enabled = true;

    /** A cached value and the generation it was read in. */
    private record Entry(long generation, byte[] value) {
    }

    HostReadCache(long maxBytes) {
        this.cache = Caffeine.newBuilder()
                .maximumWeight(maxBytes)
                .weigher((KeyBytes k, Entry e) -> k.bytes.length + e.value.length + 96)
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
        if (!enabled) {
            return null;
        }
        Entry e = cache.getIfPresent(key);
        if (e == null || e.generation != generation.get()) {
            misses.increment();
            return null;
        }
        hits.increment();
        return e.value;
    }

    /**
     * What a missed get notes before it is queued: its stripe's count plus the generation. Both only
     * grow, so the sum moves exactly when either does.
     */
    long stamp(KeyBytes key) {
        return stripes.get(key.stripe()) + generation.get();
    }

    /** A missed get's result, cached unless a write to its stripe, or to every key, came since {@code stamp}. */
    void offer(KeyBytes key, long stamp, byte[] value) {
        if (!enabled) {
            return;
        }
        int s = key.stripe();
        cache.asMap().compute(key, (k, old) -> {
            long g = generation.get();
            return stripes.get(s) + g == stamp ? new Entry(g, value) : old;
        });
    }

    /** A batch that may write any key is about to run, or has run: every entry cached so far is dead. */
    void writtenAll() {
        generation.incrementAndGet();
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
        return hits.sum();
    }

    long misses() {
        return misses.sum();
    }
}
