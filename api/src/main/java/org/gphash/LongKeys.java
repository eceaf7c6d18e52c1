package org.gphash;

/** The encoding of {@code long} keys: 8 bytes, little-endian (the order a GPU reads a 64-bit word in). */
final class LongKeys {

    private LongKeys() {
    }

    static byte[] encode(long key, int keySize) {
        if (keySize != 8) {
            throw new IllegalArgumentException("long keys need a pool with keySize 8; this pool's keys are " + keySize + " bytes");
        }
        byte[] b = new byte[8];
        for (int i = 0; i < 8; i++) {
            b[i] = (byte) (key >>> (8 * i));
        }
        return b;
    }

    /** The key of 8 bytes at {@code b[offset]}, as {@link #encode} wrote it. */
    static long decode(byte[] b, int offset, int keySize) {
        if (keySize != 8) {
            throw new IllegalArgumentException("long keys need a pool with keySize 8; this pool's keys are " + keySize + " bytes");
        }
        long k = 0;
        for (int i = 7; i >= 0; i--) {
            k = (k << 8) | (b[offset + i] & 0xFF);
        }
        return k;
    }
}
