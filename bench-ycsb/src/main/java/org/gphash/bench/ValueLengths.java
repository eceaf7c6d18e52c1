package org.gphash.bench;

import java.util.Locale;

import org.gphash.cli.ValueCodec;

/**
 * How long the benchmark's values are (issue 53, item 5): every one of the value size ({@link #FIXED},
 * the paper's runs), or {@link #MIXED}: a length for each write drawn from a lognormal around 80
 * bytes (sigma 1, mean about 130 B), kept within {@link ValueCodec#MIN_VALUE_SIZE} (the bytes a
 * self-checking value needs for its key and version) and the value size, as the workload of
 * 8 B to 4 KiB and {@code ValueLengthsBench} draw them.
 *
 * <p>A length is a function of the key and the version written, so a read is checked against the
 * length its version had, without remembering what was written.
 */
public enum ValueLengths {

    /** Every value of the value size. */
    FIXED,
    /** Lengths of 16 B to the value size, lognormal around 80 B. */
    MIXED;

    /** The longest value of {@link #MIXED} when no value size is given: the 4 KiB. */
    public static final int MIXED_DEFAULT_VALUE_SIZE = 4096;

    /** {@code fixed} or {@code mixed}; else a clear error. */
    public static ValueLengths parse(String s) {
        return switch (s.strip().toLowerCase(Locale.ROOT)) {
            case "fixed" -> FIXED;
            case "mixed" -> MIXED;
            default -> throw new IllegalArgumentException("value lengths are fixed or mixed, got " + s);
        };
    }

    /**
     * {@return about how many bytes a batch holds per value of these lengths: the value size, or for
     * packed values of {@link #MIXED} lengths (mean about 130 B) the room a batch makes per value at
     * first (it doubles from there), with its offset and length}
     */
    public long bytesPerValue(int valueSize) {
        return this == FIXED ? valueSize : Math.min(valueSize, 256) + 2L * Integer.BYTES;
    }

    /** The length of key {@code id}'s value at {@code version}, in a run of values up to {@code valueSize}. */
    public int of(long id, long version, int valueSize) {
        if (this == FIXED) {
            return valueSize;
        }
        long h = id * 0x9E3779B97F4A7C15L + version;
        for (int draw = 0; draw < 8; draw++) {
            long a = mix(h += 0x632BE59BD9B4E019L);
            long b = mix(h += 0x632BE59BD9B4E019L);
            double u1 = ((a >>> 11) + 1) * 0x1.0p-53;   // (0, 1]
            double u2 = (b >>> 11) * 0x1.0p-53;
            double g = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
            int length = (int) Math.exp(LOG_MEDIAN + g);
            if (length >= ValueCodec.MIN_VALUE_SIZE && length <= valueSize) {
                return length;
            }
        }
        return Math.min(valueSize, Math.max(ValueCodec.MIN_VALUE_SIZE, (int) Math.exp(LOG_MEDIAN)));
    }

    private static final double LOG_MEDIAN = Math.log(80);

    /** SplitMix64's finaliser. */
    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
