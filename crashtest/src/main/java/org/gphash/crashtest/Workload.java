package org.gphash.crashtest;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * The worker's operations as a pure function of (seed, sequence number): the driver regenerates the
 * one operation that may have been in flight at a kill without the worker having to log intents.
 * Values carry their key, their sequence number and a CRC32C, so a value read back after a crash is
 * either provably whole (and then names exactly which write produced it) or torn.
 */
final class Workload {

    enum Kind { PUT, INSERT, UPDATE, DELETE }

    /** One operation: kind and key (keys are 1..keys). */
    record Op(long seq, Kind kind, long key) {
    }

    static final int VALUE_SIZE = 64;
    private static final int CRC_AT = VALUE_SIZE - 4;

    private final long seed;
    private final long keys;

    Workload(long seed, long keys) {
        this.seed = seed;
        this.keys = keys;
    }

    long keys() {
        return keys;
    }

    /** The operation with sequence number {@code seq}: 30% put, 25% insert, 25% update, 20% delete. */
    Op op(long seq) {
        long h = mix(seed ^ (seq * 0x9E3779B97F4A7C15L));
        int roll = (int) Long.remainderUnsigned(h, 100);
        Kind kind = roll < 30 ? Kind.PUT : roll < 55 ? Kind.INSERT : roll < 80 ? Kind.UPDATE : Kind.DELETE;
        long key = 1 + Long.remainderUnsigned(mix(h), keys);
        return new Op(seq, kind, key);
    }

    /** The value written by operation {@code seq} on {@code key}. */
    static byte[] value(long key, long seq) {
        ByteBuffer b = ByteBuffer.allocate(VALUE_SIZE).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(key).putLong(seq);
        long x = mix(key * 31 + seq);
        while (b.position() < CRC_AT) {
            x = mix(x);
            b.put((byte) x);
        }
        CRC32C crc = new CRC32C();
        crc.update(b.array(), 0, CRC_AT);
        b.putInt((int) crc.getValue());
        return b.array();
    }

    /** Whether {@code v} is a whole value of {@code key}: checksum right, key right, content as generated. */
    static boolean whole(long key, byte[] v) {
        ByteBuffer b = ByteBuffer.wrap(v).order(ByteOrder.LITTLE_ENDIAN);
        CRC32C crc = new CRC32C();
        crc.update(v, 0, CRC_AT);
        return b.getInt(CRC_AT) == (int) crc.getValue() && b.getLong(0) == key
                && java.util.Arrays.equals(v, value(key, b.getLong(8)));
    }

    /** The sequence number a whole value carries. */
    static long seqOf(byte[] v) {
        return ByteBuffer.wrap(v).order(ByteOrder.LITTLE_ENDIAN).getLong(8);
    }

    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }
}
