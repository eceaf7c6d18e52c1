package org.gphash.bench;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Key ids as key bytes of a fixed size. 8-byte keys are the id, little-endian (the engine's own
 * {@code long} key encoding). Longer keys carry the id in their first 8 bytes and a filler derived
 * from it in the rest, so that the whole key takes part in hashing and comparison, as a real
 * 32-byte key would; shorter keys are the id's low bytes.
 */
public final class KeyCodec {

    private final int keySize;

    public KeyCodec(int keySize) {
        if (keySize < 1) {
            throw new IllegalArgumentException("key size must be positive, got " + keySize);
        }
        this.keySize = keySize;
    }

    public int keySize() {
        return keySize;
    }

    /** Writes key {@code id} at {@code offset} of {@code out}. */
    public void encode(long id, byte[] out, int offset) {
        encode(id, MemorySegment.ofArray(out), offset);
    }

    /** Writes key {@code id} at {@code offset} of {@code out}. */
    public void encode(long id, MemorySegment out, long offset) {
        int head = Math.min(8, keySize);
        for (int i = 0; i < head; i++) {
            out.set(ValueLayout.JAVA_BYTE, offset + i, (byte) (id >>> (8 * i)));
        }
        long f = id;
        for (int i = 8; i < keySize; i++) {
            if ((i & 7) == 0) {
                f = mix(f + i);
            }
            out.set(ValueLayout.JAVA_BYTE, offset + i, (byte) (f >>> (8 * (i & 7))));
        }
    }

    public byte[] encode(long id) {
        byte[] k = new byte[keySize];
        encode(id, k, 0);
        return k;
    }

    /** The 64-bit finaliser of MurmurHash3 (fmix64): every input bit reaches every output bit. */
    public static long mix(long z) {
        z = (z ^ (z >>> 33)) * 0xFF51AFD7ED558CCDL;
        z = (z ^ (z >>> 33)) * 0xC4CEB9FE1A85EC53L;
        return z ^ (z >>> 33);
    }
}
