package org.gphash.cluster;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Byte arrays kept for the next message: a batch of 2^20 operations moves about 140 MB through its
 * messages' columns, and allocating them anew for every batch made the client's young-generation
 * pauses long (docs/PERFORMANCE.md, "A cluster"). Arrays come in power-of-two sizes, so an
 * array serves any column up to its size (a message says how many of its bytes count); the pool
 * keeps at most {@link #MAX_KEPT_BYTES} in all and drops what is returned beyond it.
 *
 * <p>Shared by the JVM's cluster clients and nodes: a message is read (Hazelcast's deserialization)
 * before anything knows which client or node it is for.
 */
final class ByteArrays {

    /** The most bytes the pool keeps. */
    static final long MAX_KEPT_BYTES = 1L << 30;
    /** Arrays below this size are not pooled (allocating them is cheap). */
    static final int MIN_POOLED = 1 << 12;
    private static final int CLASSES = 31;  // sizes 2^0 .. 2^30

    @SuppressWarnings("unchecked")
    private static final ConcurrentLinkedQueue<byte[]>[] FREE = new ConcurrentLinkedQueue[CLASSES];
    private static final AtomicLong KEPT = new AtomicLong();
    /** The empty column. */
    static final byte[] NONE = new byte[0];

    static {
        for (int c = 0; c < CLASSES; c++) {
            FREE[c] = new ConcurrentLinkedQueue<>();
        }
    }

    private ByteArrays() {
    }

    /** {@return an array of at least {@code length} bytes (its contents are whatever they were)} */
    static byte[] take(int length) {
        if (length == 0) {
            return NONE;
        }
        if (length < MIN_POOLED || length > 1 << 30) {
            return new byte[length];
        }
        int c = sizeClass(length);
        byte[] a = FREE[c].poll();
        if (a != null) {
            KEPT.addAndGet(-a.length);
            return a;
        }
        return new byte[1 << c];
    }

    /** Gives {@code a} back for a later {@link #take}; the caller no longer uses it. */
    static void give(byte[] a) {
        if (a.length < MIN_POOLED || Integer.bitCount(a.length) != 1) {
            return;  // not one of the pool's
        }
        if (KEPT.addAndGet(a.length) > MAX_KEPT_BYTES) {
            KEPT.addAndGet(-a.length);
            return;
        }
        FREE[sizeClass(a.length)].offer(a);
    }

    /** The size class of an array of {@code length} bytes: the power of two at or above it. */
    private static int sizeClass(int length) {
        return length <= 1 ? 0 : 32 - Integer.numberOfLeadingZeros(length - 1);
    }
}
