package org.gphash.spi;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Bytes of a segment copied into a new array without wrapping the array in a heap segment, as
 * {@code asSlice(..).toArray(..)} does. Why: the JDK's segment access code is shared by every
 * segment access in the process, and once it has seen heap segments beside the native batches and
 * the mapped pool, the JIT stops folding its alignment checks ({@code
 * AbstractMemorySegmentImpl.isAlignedForElement} then shows under every access): a profile of YCSB-C
 * after a coalesced load, whose writes read their keys with {@code toArray}, found that check under
 * every access with {@code toArray} and almost never with this.
 */
public final class SegmentBytes {

    private SegmentBytes() {
    }

    /**
     * {@return every byte of {@code segment}, in a new array}
     *
     * @param segment at most 2^31 - 1 bytes
     * @throws ArithmeticException if the segment is larger than an array can be
     */
    public static byte[] copyOf(MemorySegment segment) {
        return copyOf(segment, 0, Math.toIntExact(segment.byteSize()));
    }

    /**
     * {@return {@code length} bytes of {@code segment} from {@code offset}, in a new array}
     *
     * @param segment where the bytes are
     * @param offset  the first byte's offset
     * @param length  how many bytes
     */
    public static byte[] copyOf(MemorySegment segment, long offset, int length) {
        byte[] bytes = new byte[length];
        MemorySegment.copy(segment, ValueLayout.JAVA_BYTE, offset, bytes, 0, length);
        return bytes;
    }
}
