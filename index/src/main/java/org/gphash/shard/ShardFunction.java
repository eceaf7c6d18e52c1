package org.gphash.shard;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Which shard a key lives in: a keyed 64-bit hash of the key, scaled to the shard count by a
 * multiply (the top bits, no modulo bias worth the name at 256 shards).
 *
 * <p>Independent of the table's hashes on purpose. A shard's table picks buckets and fingerprints
 * from Murmur-style hashes of the key ({@code org.gphash.table.KeyHasher}); had sharding used one of
 * those hashes, every key of a shard would share the top bits its fingerprints come from. This one
 * is built differently (each 8-byte word folded in by a 128-bit multiply, wyhash's construction) and
 * keyed by a seed of its own, kept in the manifest, so a shard's keys look random to its table.
 */
public final class ShardFunction {

    private static final ValueLayout.OfLong WORD = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final long P0 = 0xa0761d6478bd642fL;
    private static final long P1 = 0xe7037ed1a0b428dbL;
    private static final long P2 = 0x8ebc6af09c88c6e3L;

    private final long seed;
    private final int shards;

    /**
     * The function of a manifest.
     *
     * @param seed   the manifest's shard seed
     * @param shards the number of shards, 1 or more
     */
    public ShardFunction(long seed, int shards) {
        if (shards < 1) {
            throw new IllegalArgumentException("shards must be at least 1, got " + shards);
        }
        this.seed = seed;
        this.shards = shards;
    }

    /** {@return the number of shards} */
    public int shards() {
        return shards;
    }

    /**
     * The shard of the {@code keySize}-byte key at {@code offset} of {@code keys}.
     *
     * @param keys    where the key lies
     * @param offset  its first byte
     * @param keySize its length
     * @return 0 to {@code shards() - 1}
     */
    public int shardOf(MemorySegment keys, long offset, int keySize) {
        if (shards == 1) {
            return 0;
        }
        return (int) Math.unsignedMultiplyHigh(hash(keys, offset, keySize, seed), shards);
    }

    /**
     * The keyed hash of the key at {@code offset} under this function's seed: what {@link #shardOf}
     * takes the shard from ({@link #shardOfHash}), for callers that split a shard's keys further.
     *
     * @param keys    where the key lies
     * @param offset  its first byte
     * @param keySize its length
     * @return the hash
     */
    public long hashOf(MemorySegment keys, long offset, int keySize) {
        return hash(keys, offset, keySize, seed);
    }

    /**
     * The shard of a key whose {@link #hashOf} is {@code hash}: the same as {@link #shardOf} of the key.
     *
     * @param hash the key's hash
     * @return 0 to {@code shards() - 1}
     */
    public int shardOfHash(long hash) {
        return shards == 1 ? 0 : (int) Math.unsignedMultiplyHigh(hash, shards);
    }

    /**
     * The keyed hash the shard is taken from (public for the check of the CUDA side,
     * {@code shard_hash.cuh}, against this one).
     *
     * @param keys    where the key lies
     * @param offset  its first byte
     * @param keySize its length
     * @param seed    the manifest's shard seed
     * @return the hash
     */
    public static long hash(MemorySegment keys, long offset, int keySize, long seed) {
        long h = seed ^ P0 ^ keySize;
        int full = keySize & ~7;
        for (int i = 0; i < full; i += 8) {
            h = mum(h ^ keys.get(WORD, offset + i), P1);
        }
        if (full < keySize) {
            long tail = 0;
            for (int i = keySize - 1; i >= full; i--) {
                tail = (tail << 8) | (keys.get(ValueLayout.JAVA_BYTE, offset + i) & 0xFF);
            }
            h = mum(h ^ tail, P1);
        }
        return mum(h ^ P2, h ^ P1);
    }

    /** The 128-bit product of {@code a} and {@code b}, its halves xored. */
    private static long mum(long a, long b) {
        return (a * b) ^ Math.unsignedMultiplyHigh(a, b);
    }
}
