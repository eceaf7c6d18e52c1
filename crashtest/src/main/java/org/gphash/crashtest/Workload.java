package org.gphash.crashtest;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
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

    /**
     * Where a worker thread's sequence numbers start: thread {@code t}'s are {@code t << THREAD_SHIFT}
     * and up, so that an operation's sequence number names its thread ({@link #threadOf}), and the
     * values it wrote say which thread wrote them.
     */
    static final int THREAD_SHIFT = 40;

    static final int VALUE_SIZE = 64;
    private static final int CRC_AT = VALUE_SIZE - 4;

    private final long seed;
    private final long keys;
    private final int threads;

    Workload(long seed, long keys) {
        this(seed, keys, 1);
    }

    /**
     * Operations of {@code threads} worker threads on keys of their own: thread {@code t}'s keys are
     * those with {@code (key - 1) % threads == t} (so no two threads' batches touch one key, and each
     * key's history is one thread's, in its order); one thread has every key, as before threads came.
     */
    Workload(long seed, long keys, int threads) {
        if (threads < 1 || keys < threads) {
            throw new IllegalArgumentException("need at least one key per thread: " + keys + " keys, " + threads + " threads");
        }
        this.seed = seed;
        this.keys = keys;
        this.threads = threads;
    }

    int threads() {
        return threads;
    }

    /** The thread whose operation {@code seq} is. */
    static int threadOf(long seq) {
        return (int) (seq >>> THREAD_SHIFT);
    }

    /** The thread whose keys include {@code key}. */
    int ownerOf(long key) {
        return (int) ((key - 1) % threads);
    }

    /** Thread {@code t}'s first sequence number. */
    static long firstSeq(int t) {
        return ((long) t << THREAD_SHIFT) + 1;
    }

    long keys() {
        return keys;
    }

    /** The operation with sequence number {@code seq}: 30% put, 25% insert, 25% update, 20% delete. */
    Op op(long seq) {
        long h = mix(seed ^ (seq * 0x9E3779B97F4A7C15L));
        int roll = (int) Long.remainderUnsigned(h, 100);
        Kind kind = roll < 30 ? Kind.PUT : roll < 55 ? Kind.INSERT : roll < 80 ? Kind.UPDATE : Kind.DELETE;
        int t = threadOf(seq);
        long key = 1 + t + threads * Long.remainderUnsigned(mix(h), keys / threads);
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
                && Arrays.equals(v, value(key, b.getLong(8)));
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
