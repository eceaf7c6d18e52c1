package org.gphash.table;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

import org.gphash.format.SlotMeta;

/**
 * The hash functions of the table: one 64-bit hash per seed over the key read as little-endian
 * 8-byte words (the last word zero-padded), in the structure of MurmurHash3's x64 mixing with a
 * final avalanche. Simple on purpose: the CUDA kernels compute exactly the same function.
 *
 * <p>Hash {@code j} of a key uses seed {@code seeds[j]}; the fingerprint comes from the top 16 bits
 * of hash 0, which never select a bucket (levels stay far below 2^48 buckets).
 */
public final class KeyHasher {

    private static final ValueLayout.OfLong WORD = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfByte BYTE = ValueLayout.JAVA_BYTE;
    private static final long C1 = 0x87c37b91114253d5L;
    private static final long C2 = 0x4cf5ad432745937fL;

    private KeyHasher() {
    }

    /** Hash of {@code keySize} bytes of {@code key} at {@code offset}, with {@code seed}. */
    public static long hash(MemorySegment key, long offset, int keySize, long seed) {
        long h = seed ^ (keySize * 0x9E3779B97F4A7C15L);
        int full = keySize & ~7;
        for (int i = 0; i < full; i += 8) {
            h = mixWord(h, key.get(WORD, offset + i));
        }
        if (full < keySize) {
            long tail = 0;
            for (int i = keySize - 1; i >= full; i--) {
                tail = (tail << 8) | (key.get(BYTE, offset + i) & 0xFF);
            }
            h = mixWord(h, tail);
        }
        return avalanche(h ^ keySize);
    }

    private static long mixWord(long h, long word) {
        long k = word * C1;
        k = Long.rotateLeft(k, 31);
        k *= C2;
        h ^= k;
        h = Long.rotateLeft(h, 27);
        return h * 5 + 0x52dce729L;
    }

    /** MurmurHash3's 64-bit finaliser. */
    static long avalanche(long h) {
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        h *= 0xc4ceb9fe1a85ec53L;
        h ^= h >>> 33;
        return h;
    }

    /** The 16-bit fingerprint of a key whose hash 0 is {@code hash0}; never a reserved value. */
    public static int fingerprint(long hash0) {
        int fp = (int) (hash0 >>> 48);
        return fp < SlotMeta.FIRST_VALID_FINGERPRINT ? fp + SlotMeta.FIRST_VALID_FINGERPRINT : fp;
    }
}
