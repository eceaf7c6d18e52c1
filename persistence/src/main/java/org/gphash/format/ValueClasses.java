package org.gphash.format;

import java.util.Arrays;

/**
 * Format 3's value size classes (issue 53; docs/lab/2026-11-29-format-3-plan.md): the value heap
 * gives each value a block of the least class that holds the value and its {@link #HEADER_BYTES}-byte
 * header. Class sizes step by 16 bytes from 32 to {@link #LINEAR_MAX_BYTES} (32, 48, 64, ..., 240,
 * 256), then 2^(1/4) apart, each rounded up to 16 bytes, equal neighbours merged (320, 368, 432, 512,
 * ...) up to {@link #MAX_BLOCK_BYTES}, in {@link #SIZES} sizes. A simulation of the workload (values of 8 B to 4 KiB, ten rounds of
 * updates that change every value's size) kept the heap at 1.20x the live bytes with these classes,
 * against 1.29x for classes sqrt(2) apart and 1.54x for powers of two.
 *
 * <p>Integer arithmetic only, so that the CUDA side (core/value_classes.cuh) computes the same table
 * bit for bit: 2^(r/4) is a 16.16 fixed-point constant rounded up, and a size above the linear part
 * is {@code ceil16(ceil((32 << q) * m[r] / 65536))} for class step {@code 4q + r}.
 * {@code Format3AgreementTest} holds both sides to a committed file of known answers.
 *
 * <p><b>Framed and bare.</b> Each block size gives two classes: an even class {@code 2i}, whose blocks
 * hold a value behind its header ("framed"), and an odd class {@code 2i + 1}, whose blocks hold a value
 * of exactly the block's size and nothing else ("bare": its length is the block's, known from the
 * class the meta word names). A value of the pool's value size, where that size is a block size, is
 * stored bare where the pool keeps no item checksums (they live in the header; {@code ValueFormat}
 * chooses): a fixed 128-byte value then takes a block of 128 bytes, whole 64-byte lines, where framed
 * it took 144 across three lines, and the GPU's link pays per line touched (issue 53; the figures are
 * in docs/PERFORMANCE.md, "Pool format 3 on the GPU engine"). A segment of the heap holds blocks of one class, so
 * bare and framed blocks of one size never share one, and the close record names each segment's
 * class. Old pools' words, before bare classes, read as framed: their class field was the even
 * number's upper six bits.
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
    /** Block sizes: enough that the largest holds a value of 1 MiB and its header. */
    public static final int SIZES = BLOCK_BYTES.length;
    /** Classes: a framed and a bare one per block size (the meta word's 7 bits). */
    public static final int COUNT = 2 * SIZES;
    /** The largest block. */
    public static final int MAX_BLOCK_BYTES = BLOCK_BYTES[SIZES - 1];
    /** The longest value a block holds (a little over 1 MiB). */
    public static final int MAX_VALUE_BYTES = MAX_BLOCK_BYTES - HEADER_BYTES;

    /**
     * Needs (value and header) up to this many bytes find their class in {@link #DIRECT}, by the need
     * rounded up to 16: every block size is a multiple of 16, so the least block of at least
     * {@code need} bytes is the least of at least that. A search of the sizes for every value written
     * and read was a tenth of a format 3 pool's reads from 2 threads (bench ycsb C, values of 16 B to
     * 4 KiB, a recording on the build machine).
     */
    private static final int DIRECT_MAX_BYTES = 8192;
    private static final int[] DIRECT = direct();

    private ValueClasses() {
    }

    /** The framed class of each need of {@code 16 * i} bytes, {@code i} up to {@link #DIRECT_MAX_BYTES} / 16. */
    private static int[] direct() {
        int[] classes = new int[DIRECT_MAX_BYTES / 16 + 1];
        int size = 0;
        for (int i = 0; i < classes.length; i++) {
            while (BLOCK_BYTES[size] < 16 * i) {
                size++;
            }
            classes[i] = 2 * size;
        }
        return classes;
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

    /** {@return the bytes of a block of class {@code c}, header included where it has one} */
    public static int blockBytes(int c) {
        if (c < 0 || c >= COUNT) {
            throw new IllegalArgumentException("value class " + c + " is not one of the " + COUNT + " classes");
        }
        return BLOCK_BYTES[c >>> 1];
    }

    /** {@return whether blocks of class {@code c} hold a value of their own size and no header} */
    public static boolean isBare(int c) {
        return (c & 1) != 0;
    }

    /** {@return the bytes before the value in a block of class {@code c}: its header's, or none} */
    public static int headerBytes(int c) {
        return isBare(c) ? 0 : HEADER_BYTES;
    }

    /**
     * {@return the bare class of a value of {@code length} bytes: the one whose block has exactly that
     * size, or -1 where no block does}
     */
    public static int bareClassOf(long length) {
        int i = Arrays.binarySearch(BLOCK_BYTES, (int) Math.min(length, Integer.MAX_VALUE));
        return length >= 0 && i >= 0 ? 2 * i + 1 : -1;
    }

    /**
     * {@return the framed class of the least block that holds a value of {@code length} bytes and its header}
     *
     * @throws IllegalArgumentException if the length is negative or over {@link #MAX_VALUE_BYTES}
     */
    public static int classOf(long length) {
        if (length < 0 || length > MAX_VALUE_BYTES) {
            throw new IllegalArgumentException("a value of " + length + " bytes: values hold 0 to " + MAX_VALUE_BYTES
                    + " bytes");
        }
        long need = length + HEADER_BYTES;
        if (need <= DIRECT_MAX_BYTES) {
            return DIRECT[(int) ((need + 15) >>> 4)];
        }
        int lo = 0;
        int hi = SIZES - 1;
        while (lo < hi) {  // the least block size of at least need bytes
            int mid = (lo + hi) >>> 1;
            if (BLOCK_BYTES[mid] >= need) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return 2 * lo;
    }
}
