package org.gphash.crashtest;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.zip.CRC32C;

/**
 * The worker's operations as a pure function of (seed, sequence number): the driver regenerates the
 * one operation that may have been in flight at a kill without the worker having to log intents.
 * Values carry their key, their sequence number and a CRC32C, so a value read back after a crash is
 * either provably whole (and then names exactly which write produced it) or torn. In a format 3 pool,
 * whose values have any length, single calls and batches write values of lengths from
 * {@link #MIN_LENGTH} to the value size ({@link #lengthOf}), so that updates move values between size
 * classes.
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

    /** The value size of a format 2 pool. */
    static final int VALUE_SIZE = 64;
    /** The value size of a format 3 pool: values of {@link #MIN_LENGTH} to this many bytes, 17 size classes. */
    static final int VALUE_SIZE_FORMAT_3 = 256;
    /** The shortest value: its key, its sequence number and its checksum. */
    static final int MIN_LENGTH = 20;

    /** {@return the value size of a pool of format {@code poolFormat}} */
    static int valueSize(int poolFormat) {
        return poolFormat == 3 ? VALUE_SIZE_FORMAT_3 : VALUE_SIZE;
    }

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

    /** The value written by operation {@code seq} on {@code key} in a pool of {@link #VALUE_SIZE}-byte values. */
    static byte[] value(long key, long seq) {
        return value(key, seq, VALUE_SIZE);
    }

    /** The value of {@code length} bytes (at least {@link #MIN_LENGTH}) written by operation {@code seq} on {@code key}. */
    static byte[] value(long key, long seq, int length) {
        ByteBuffer b = ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(key).putLong(seq);
        long x = mix(key * 31 + seq);
        int crcAt = length - 4;
        while (b.position() < crcAt) {
            x = mix(x);
            b.put((byte) x);
        }
        CRC32C crc = new CRC32C();
        crc.update(b.array(), 0, crcAt);
        b.putInt((int) crc.getValue());
        return b.array();
    }

    /**
     * The length of the value a single call of operation {@code seq} on {@code key} writes in a pool
     * of values of any length up to {@code valueSize}: a quarter the whole size, the rest spread from
     * {@link #MIN_LENGTH} up.
     */
    static int lengthOf(long key, long seq, int valueSize) {
        long h = mix(key * 0x9E3779B97F4A7C15L + seq);
        return (h & 3) == 0 ? valueSize : MIN_LENGTH + (int) Long.remainderUnsigned(h >>> 2, valueSize - MIN_LENGTH + 1);
    }

    /** Whether {@code v} is a whole value of {@code key}: checksum right, key right, content as generated. */
    static boolean whole(long key, byte[] v) {
        if (v.length < MIN_LENGTH) {
            return false;
        }
        ByteBuffer b = ByteBuffer.wrap(v).order(ByteOrder.LITTLE_ENDIAN);
        CRC32C crc = new CRC32C();
        int crcAt = v.length - 4;
        crc.update(v, 0, crcAt);
        return b.getInt(crcAt) == (int) crc.getValue() && b.getLong(0) == key
                && Arrays.equals(v, value(key, b.getLong(8), v.length));
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
