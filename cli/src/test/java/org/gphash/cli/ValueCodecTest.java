package org.gphash.cli;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;

import org.junit.jupiter.api.Test;

class ValueCodecTest {

    @Test
    void encodedValueMatchesItsKeyOnly() {
        for (int size : new int[] {16, 21, 128}) {
            ValueCodec c = new ValueCodec(size);
            byte[] v = new byte[size];
            c.encode(42, 7, v);
            assertTrue(c.matches(MemorySegment.ofArray(v), 0, 42));
            assertFalse(c.matches(MemorySegment.ofArray(v), 0, 43));
        }
    }

    @Test
    void tornValueIsDetected() {
        ValueCodec c = new ValueCodec(128);
        byte[] a = new byte[128];
        byte[] b = new byte[128];
        c.encode(5, 1, a);
        c.encode(5, 2, b);
        // The first half of one write and the second half of another.
        System.arraycopy(b, 64, a, 64, 64);
        assertFalse(c.matches(MemorySegment.ofArray(a), 0, 5));
    }

    @Test
    void valuesAtAnOffsetAreChecked() {
        ValueCodec c = new ValueCodec(32);
        byte[] v = new byte[32];
        c.encode(9, 3, v);
        byte[] two = new byte[64];
        System.arraycopy(v, 0, two, 32, 32);
        assertTrue(c.matches(MemorySegment.ofArray(two), 32, 9));
        assertFalse(c.matches(MemorySegment.ofArray(two), 0, 9));
    }
}
