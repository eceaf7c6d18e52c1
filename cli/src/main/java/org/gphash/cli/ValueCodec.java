package org.gphash.cli;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * The demo's self-checking values, so that every read can be verified without remembering what
 * was written: bytes 0..7 hold the key, bytes 8..15 a version counter, and the rest a filler
 * derived from both.
 *
 * <p>The embedded key catches a read that returns another key's value (a wrong slot, a reused
 * value block); the filler catches a torn or half-overwritten value, since a value stitched from
 * two writes would not match its own header.
 */
public final class ValueCodec {

    public static final int MIN_VALUE_SIZE = 16;

    private static final ValueLayout.OfLong LONG =
            ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final int valueSize;

    public ValueCodec(int valueSize) {
        if (valueSize < MIN_VALUE_SIZE) {
            throw new IllegalArgumentException("demo values need at least " + MIN_VALUE_SIZE + " bytes, got " + valueSize);
        }
        this.valueSize = valueSize;
    }

    /** Writes the value of {@code key} at {@code version} into {@code out} (valueSize bytes). */
    public void encode(long key, long version, byte[] out) {
        encode(key, version, MemorySegment.ofArray(out), 0);
    }

    /** Writes the value of {@code key} at {@code version} at {@code offset} of {@code out} (valueSize bytes). */
    public void encode(long key, long version, MemorySegment out, long offset) {
        encode(key, version, out, offset, valueSize);
    }

    /**
     * Writes the value of {@code key} at {@code version}, {@code length} bytes of it ({@link #MIN_VALUE_SIZE}
     * to the value size: a value of any length), at {@code offset} of {@code out}.
     */
    public void encode(long key, long version, MemorySegment out, long offset, int length) {
        out.set(LONG, offset, key);
        out.set(LONG, offset + 8, version);
        long f = filler(key, version);
        int i = 16;
        for (; i + 8 <= length; i += 8) {
            out.set(LONG, offset + i, f);
        }
        for (; i < length; i++) {
            out.set(ValueLayout.JAVA_BYTE, offset + i, (byte) (f >>> (8 * (i & 7))));
        }
    }

    /**
     * Whether the {@code valueSize} bytes at {@code offset} of {@code values} are a well-formed
     * value of {@code key} (any version).
     */
    public boolean matches(MemorySegment values, long offset, long key) {
        return matches(values, offset, key, valueSize);
    }

    /** As {@link #matches(MemorySegment, long, long)}, for a value of {@code length} bytes. */
    public boolean matches(MemorySegment values, long offset, long key, int length) {
        if (length < MIN_VALUE_SIZE || values.get(LONG, offset) != key) {
            return false;
        }
        long f = filler(key, values.get(LONG, offset + 8));
        int i = 16;
        for (; i + 8 <= length; i += 8) {
            if (values.get(LONG, offset + i) != f) {
                return false;
            }
        }
        for (; i < length; i++) {
            if (values.get(ValueLayout.JAVA_BYTE, offset + i) != (byte) (f >>> (8 * (i & 7)))) {
                return false;
            }
        }
        return true;
    }

    /** A 64-bit mix of key and version (the SplitMix64 finaliser): any change flips many bits. */
    private static long filler(long key, long version) {
        long z = key * 0x9E3779B97F4A7C15L + version;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
