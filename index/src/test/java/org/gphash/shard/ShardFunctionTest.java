package org.gphash.shard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.gphash.table.KeyHasher;
import org.junit.jupiter.api.Test;

/** The shard function spreads keys evenly, and independently of the table's own hashes. */
class ShardFunctionTest {

    private static final ValueLayout.OfLong WORD = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);

    /** Sequential ids, random ids and wide keys: every shard within 5% of its share (2^16 keys, 6 sigma at 16 shards). */
    @Property(tries = 40)
    void everyShardGetsItsShareOfTheKeys(@ForAll @IntRange(min = 2, max = 16) int shards, @ForAll long seed,
                                         @ForAll @IntRange(min = 0, max = 2) int keys) {
        ShardFunction f = new ShardFunction(seed, shards);
        int n = 1 << 16;
        int keySize = keys == 2 ? 20 : 8;
        MemorySegment k = MemorySegment.ofArray(new byte[keySize]);
        java.util.SplittableRandom r = new java.util.SplittableRandom(seed);
        int[] counts = new int[shards];
        for (int i = 0; i < n; i++) {
            long id = keys == 1 ? r.nextLong() : i;
            k.set(WORD, 0, id);
            if (keySize > 8) {
                k.set(WORD, 8, id * 31);
            }
            int s = f.shardOf(k, 0, keySize);
            assertTrue(s >= 0 && s < shards, "shard " + s);
            counts[s]++;
        }
        double share = (double) n / shards;
        for (int s = 0; s < shards; s++) {
            assertTrue(Math.abs(counts[s] - share) < 0.05 * share + 6 * Math.sqrt(share),
                    "shard " + s + " got " + counts[s] + " of " + n + " keys (share " + share + ")");
        }
    }

    /**
     * Within one shard, the table's hash still spreads keys: its top 4 bits (the fingerprint's) and
     * low 4 bits (the bucket's) are uniform over the keys of shard 0 of 4. Had sharding used the
     * table's hash, the keys of a shard would share their top bits.
     */
    @Test
    void aShardsKeysLookRandomToItsTable() {
        ShardFunction f = new ShardFunction(0x1234_5678_9abcL, 4);
        MemorySegment k = MemorySegment.ofArray(new byte[8]);
        int[] top = new int[16];
        int[] low = new int[16];
        int inShard = 0;
        for (long id = 0; id < 1 << 18; id++) {
            k.set(WORD, 0, id);
            if (f.shardOf(k, 0, 8) != 0) {
                continue;
            }
            inShard++;
            long h = KeyHasher.hash(k, 0, 8, 0x1234_5678_9abcL);
            top[(int) (h >>> 60)]++;
            low[(int) (h & 15)]++;
        }
        double expect = inShard / 16.0;
        assertTrue(chiSquare(top, expect) < 45, "top bits of the table hash within a shard: " + java.util.Arrays.toString(top));
        assertTrue(chiSquare(low, expect) < 45, "low bits of the table hash within a shard: " + java.util.Arrays.toString(low));
    }

    private static double chiSquare(int[] counts, double expect) {
        double x = 0;
        for (int c : counts) {
            x += (c - expect) * (c - expect) / expect;
        }
        return x;  // 15 degrees of freedom: 45 is far past p = 0.0001
    }

    @Test
    void theSeedChangesTheAssignmentAndOneShardTakesEverything() {
        MemorySegment k = MemorySegment.ofArray(new byte[8]);
        int same = 0;
        for (long id = 0; id < 1000; id++) {
            k.set(WORD, 0, id);
            same += new ShardFunction(1, 8).shardOf(k, 0, 8) == new ShardFunction(2, 8).shardOf(k, 0, 8) ? 1 : 0;
            assertEquals(0, new ShardFunction(id, 1).shardOf(k, 0, 8));
        }
        assertNotEquals(1000, same);
        assertTrue(same < 250, same + " of 1000 keys in the same shard under two seeds (1/8 expected)");
    }
}
