package org.gphash.spi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import org.junit.jupiter.api.Test;

/** {@link SegmentBytes#copyOf}: the bytes at the offset, as many as asked, and bounds checked. */
class SegmentBytesTest {

    @Test
    void copiesTheBytesAtTheOffsetAndNoMore() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment s = arena.allocate(64);
            for (int i = 0; i < 64; i++) {
                s.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 3 + 1));
            }
            byte[] expected = new byte[13];
            for (int i = 0; i < expected.length; i++) {
                expected[i] = (byte) ((i + 7) * 3 + 1);
            }
            assertArrayEquals(expected, SegmentBytes.copyOf(s, 7, 13));
            assertArrayEquals(expected, SegmentBytes.copyOf(s.asSlice(7, 13)));
            assertArrayEquals(new byte[0], SegmentBytes.copyOf(s, 64, 0));
            assertThrows(IndexOutOfBoundsException.class, () -> SegmentBytes.copyOf(s, 60, 5));
        }
    }
}
