package org.gphash.cuda.routing;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import org.gphash.OpKind;

/**
 * How many gets, deletes and read-modify-writes a run of a batch's kind bytes holds, which is all a
 * chunk's plan needs (the rest carry a value to write). Eight kinds per step, compared in place
 * (SWAR): reading a byte at a time through the segment, with a table lookup each, was a tenth to a
 * quarter of a host batch's time (issue 25).
 */
public final class KindCounts {

    private static final long ONES = 0x0101010101010101L;
    private static final long LOW7 = 0x7F7F7F7F7F7F7F7FL;
    private static final long HIGH = 0x8080808080808080L;
    private static final int GET = OpKind.GET.ordinal();
    private static final int DELETE = OpKind.DELETE.ordinal();
    private static final int RMW = OpKind.READ_MODIFY_WRITE.ordinal();

    /** Index of gets, deletes and read-modify-writes in {@link #count}'s output. */
    public static final int GETS = 0;
    public static final int DELETES = 1;
    public static final int RMWS = 2;

    private KindCounts() {
    }

    /**
     * Counts kinds {@code [first, first + m)} of {@code kinds} into {@code out} (gets, deletes,
     * read-modify-writes). Kinds must be below 8 (the batch's entry checks them).
     */
    public static void count(MemorySegment kinds, int first, int m, long[] out) {
        long gets = 0;
        long deletes = 0;
        long rmws = 0;
        int i = first;
        int end = first + m;
        for (; i + 8 <= end; i += 8) {
            long w = kinds.get(ValueLayout.JAVA_LONG_UNALIGNED, i);
            gets += equalBytes(w, GET);
            deletes += equalBytes(w, DELETE);
            rmws += equalBytes(w, RMW);
        }
        for (; i < end; i++) {
            int k = kinds.get(ValueLayout.JAVA_BYTE, i);
            gets += k == GET ? 1 : 0;
            deletes += k == DELETE ? 1 : 0;
            rmws += k == RMW ? 1 : 0;
        }
        out[GETS] = gets;
        out[DELETES] = deletes;
        out[RMWS] = rmws;
    }

    /**
     * Counts the kinds of {@code kinds} at positions {@code [first, first + m)} of {@code positions}
     * (4-byte ints: a shard's part of a batch) into {@code out}, as {@link #count}.
     */
    public static void countAt(MemorySegment kinds, MemorySegment positions, int first, int m, long[] out) {
        long gets = 0;
        long deletes = 0;
        long rmws = 0;
        for (int j = first, end = first + m; j < end; j++) {
            int k = kinds.get(ValueLayout.JAVA_BYTE, positions.getAtIndex(ValueLayout.JAVA_INT_UNALIGNED, j));
            gets += k == GET ? 1 : 0;
            deletes += k == DELETE ? 1 : 0;
            rmws += k == RMW ? 1 : 0;
        }
        out[GETS] = gets;
        out[DELETES] = deletes;
        out[RMWS] = rmws;
    }

    /** Bytes of {@code w} equal to {@code v}, where every byte of {@code w} and {@code v} is below 8. */
    private static int equalBytes(long w, int v) {
        long x = w ^ (v * ONES);                     // zero exactly where equal; every byte below 8
        long nonZero = (x + LOW7) & HIGH;            // high bit of each byte that is not zero (no carries)
        return 8 - Long.bitCount(nonZero);
    }
}
