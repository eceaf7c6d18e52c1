package org.gphash.format;

import java.util.Arrays;

/**
 * Format 3's value size classes (issue 53; docs/lab/2026-11-29-format-3-plan.md): the value heap
 * gives each value a block of the least class that holds the value and its {@link #HEADER_BYTES}-byte
 * header. Class sizes step by 16 bytes from 32 to {@link #LINEAR_MAX_BYTES} (32, 48, 64, ..., 240,
 * 256), then 2^(1/4) apart, each rounded up to 16 bytes, equal neighbours merged (320, 368, 432, 512,
 * ...) up to {@link #MAX_BLOCK_BYTES}, in {@link #COUNT} classes. A simulation of the workload (values of 8 B to 4 KiB, ten rounds of
 * updates that change every value's size) kept the heap at 1.20x the live bytes with these classes,
 * against 1.29x for classes sqrt(2) apart and 1.54x for powers of two.
 *
 * <p>Integer arithmetic only, so that the CUDA side (core/value_classes.cuh) computes the same table
 * bit for bit: 2^(r/4) is a 16.16 fixed-point constant rounded up, and a size above the linear part
 * is {@code ceil16(ceil((32 << q) * m[r] / 65536))} for class step {@code 4q + r}.
 * {@code Format3AgreementTest} holds both sides to a committed file of known answers.
 *
 * <p>Not used by the engines yet: format 2 pools hold values of one size. This is the first step of
 * format 3, the constants both languages share.
 */
public final class ValueClasses {

    /** Bytes before a value in its block: its length (u32) and its item checksum (u32, 0 where the pool keeps none). */
    public static final int HEADER_BYTES = 8;
    /**
     * Blocks up to this size step by 16 bytes (the blocks' alignment), above it by 2^(1/4): a fixed
     * 128-byte value and its header take a block of 144 bytes, 12.5% over format 2's 128-byte stride,
     * where the quarter-octave steps alone gave it 160 (25% more heap, and more bytes written a value).
     * The four classes this adds fill the meta word's 6 bits.
     */
    public static final int LINEAR_MAX_BYTES = 256;
    /** 2^(r/4) for r = 0..3, in 16.16 fixed point, rounded up. */
    private static final long[] QUARTER_STEPS = {65_536, 77_936, 92_682, 110_218};
    private static final int[] BLOCK_BYTES = table();
    /** Classes: enough that the largest holds a value of 1 MiB and its header. */
    public static final int COUNT = BLOCK_BYTES.length;
    /** The largest block. */
    public static final int MAX_BLOCK_BYTES = BLOCK_BYTES[COUNT - 1];
    /** The longest value a block holds (a little over 1 MiB). */
    public static final int MAX_VALUE_BYTES = MAX_BLOCK_BYTES - HEADER_BYTES;

    private ValueClasses() {
    }

    private static int[] table() {
        int[] sizes = new int[64];
        int n = 0;
        for (int block = 32; block <= LINEAR_MAX_BYTES; block += 16) {
            sizes[n++] = block;
        }
        for (int step = 0; ; step++) {
            long raw = ceilDiv((32L << (step >> 2)) * QUARTER_STEPS[step & 3], 65_536);
            int block = (int) ((raw + 15) & ~15L);
            if (block > sizes[n - 1]) {
                sizes[n++] = block;
            }
            if (block >= (1 << 20) + HEADER_BYTES) {
                return Arrays.copyOf(sizes, n);
            }
        }
    }

    private static long ceilDiv(long a, long b) {
        return (a + b - 1) / b;
    }

    /** {@return the bytes of a block of class {@code c}, header included} */
    public static int blockBytes(int c) {
        if (c < 0 || c >= COUNT) {
            throw new IllegalArgumentException("value class " + c + " is not one of the " + COUNT + " classes");
        }
        return BLOCK_BYTES[c];
    }

    /**
     * {@return the least class whose block holds a value of {@code length} bytes and its header}
     *
     * @throws IllegalArgumentException if the length is negative or over {@link #MAX_VALUE_BYTES}
     */
    public static int classOf(long length) {
        if (length < 0 || length > MAX_VALUE_BYTES) {
            throw new IllegalArgumentException("a value of " + length + " bytes: values hold 0 to " + MAX_VALUE_BYTES
                    + " bytes");
        }
        long need = length + HEADER_BYTES;
        int lo = 0;
        int hi = COUNT - 1;
        while (lo < hi) {  // the least class with a block of at least need bytes
            int mid = (lo + hi) >>> 1;
            if (BLOCK_BYTES[mid] >= need) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return lo;
    }
}
