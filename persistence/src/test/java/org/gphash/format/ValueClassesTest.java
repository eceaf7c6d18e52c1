package org.gphash.format;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;

/** Format 3's size classes and meta word (issue 53), against their definitions. */
class ValueClassesTest {

    @Test
    void classesRiseBy16BytesTo256ThenByAtMostAQuarterOctaveToOverAMebibyte() {
        assertEquals(32, ValueClasses.blockBytes(0));
        assertEquals(48, ValueClasses.blockBytes(2));
        assertEquals(128, ValueClasses.blockBytes(12));
        assertEquals(144, ValueClasses.blockBytes(14), "a 128-byte value and its header: 12.5% over 128, not 25%");
        assertEquals(256, ValueClasses.blockBytes(28));
        assertEquals(320, ValueClasses.blockBytes(30), "then quarter octaves");
        assertEquals(14, ValueClasses.classOf(128));
        assertEquals(64, ValueClasses.SIZES);
        assertEquals(128, ValueClasses.COUNT, "7 bits of class in the meta word, all used: a framed and a bare class a size");
        assertTrue(ValueClasses.MAX_VALUE_BYTES >= 1 << 20, "a value of 1 MiB fits");
        for (int c = 0; c < ValueClasses.COUNT; c += 2) {
            assertEquals(ValueClasses.blockBytes(c), ValueClasses.blockBytes(c + 1), "a framed and a bare class a size");
            assertTrue(!ValueClasses.isBare(c) && ValueClasses.isBare(c + 1));
            assertEquals(ValueClasses.HEADER_BYTES, ValueClasses.headerBytes(c));
            assertEquals(0, ValueClasses.headerBytes(c + 1));
            assertEquals(c + 1, ValueClasses.bareClassOf(ValueClasses.blockBytes(c)), "a value of the block's size");
            assertEquals(-1, ValueClasses.bareClassOf(ValueClasses.blockBytes(c) - 8), "a value 8 bytes short: framed");
        }
        for (int c = 2; c < ValueClasses.COUNT; c += 2) {
            int a = ValueClasses.blockBytes(c - 2);
            int b = ValueClasses.blockBytes(c);
            assertTrue(b > a && b % 16 == 0, "class " + c + ": " + a + " then " + b);
            // 2^(1/4) = 1.1892, and a rounding to 16 bytes, at most, between neighbours.
            assertTrue(b <= Math.ceil(a * 1.18921) + 16 || c < 32, "class " + c + ": " + a + " then " + b);
            assertTrue(b - a == 16 || a >= ValueClasses.LINEAR_MAX_BYTES, "16 bytes apart up to 256: " + a + " then " + b);
        }
        assertThrows(IllegalArgumentException.class, () -> ValueClasses.blockBytes(ValueClasses.COUNT));
        assertThrows(IllegalArgumentException.class, () -> ValueClasses.classOf(ValueClasses.MAX_VALUE_BYTES + 1L));
        assertThrows(IllegalArgumentException.class, () -> ValueClasses.classOf(-1));
        assertEquals(-1, ValueClasses.bareClassOf(-32));
        assertEquals(-1, ValueClasses.bareClassOf(0));
    }

    @Property(tries = 2000)
    void aValueGoesToTheLeastClassThatHoldsItAndItsHeader(@ForAll @LongRange(min = 0, max = 1_246_968) long length) {
        int c = ValueClasses.classOf(length);
        assertTrue(!ValueClasses.isBare(c), "framed");
        assertTrue(ValueClasses.blockBytes(c) >= length + ValueClasses.HEADER_BYTES, "it fits");
        assertTrue(c == 0 || ValueClasses.blockBytes(c - 2) < length + ValueClasses.HEADER_BYTES, "the least that fits");
    }

    @Test
    void everyLengthUpToPastTheDirectTableGoesToTheLeastClassThatHoldsIt() {
        for (int length = 0; length <= 10_000; length++) {   // the lookup by 16-byte steps, and past it the search
            int c = ValueClasses.classOf(length);
            assertTrue(ValueClasses.blockBytes(c) >= length + ValueClasses.HEADER_BYTES, "length " + length + " fits");
            assertTrue(c == 0 || ValueClasses.blockBytes(c - 2) < length + ValueClasses.HEADER_BYTES,
                    "length " + length + ": the least that fits");
        }
    }

    @Property(tries = 2000)
    void theMetaWordGivesBackWhatMadeIt(@ForAll @IntRange(min = 2, max = 0xFFFF) int fingerprint,
                                        @ForAll @IntRange(min = 0, max = 127) int valueClass,
                                        @ForAll @LongRange(min = 1, max = (1L << 41) - 1) long units) {
        long offset = units * SlotMetaV3.OFFSET_UNIT;
        long m = SlotMetaV3.make(fingerprint, valueClass, offset);
        assertEquals(fingerprint, SlotMetaV3.fingerprint(m));
        assertEquals(valueClass, SlotMetaV3.valueClass(m));
        assertEquals(offset, SlotMetaV3.valueOffset(m));
        assertTrue(SlotMetaV3.isItem(m));
        assertEquals(ValueClasses.isBare(valueClass), (m >>> 41 & 1) == 1, "the class's lowest bit is bit 41");
    }

    /**
     * A word written before bare classes (six bits of class above a 42-bit offset) reads as the same
     * framed class and offset, in any pool under 32 TiB.
     */
    @Property(tries = 500)
    void aWordOfTheLayoutBeforeBareClassesReadsTheSame(@ForAll @IntRange(min = 2, max = 0xFFFF) int fingerprint,
                                                      @ForAll @IntRange(min = 0, max = 63) int size,
                                                      @ForAll @LongRange(min = 1, max = (1L << 41) - 1) long units) {
        long old = ((long) fingerprint << 48) | ((long) size << 42) | units;
        assertEquals(2 * size, SlotMetaV3.valueClass(old));
        assertEquals(units * SlotMetaV3.OFFSET_UNIT, SlotMetaV3.valueOffset(old));
        assertEquals(fingerprint, SlotMetaV3.fingerprint(old));
    }

    @Test
    void aWordThatCannotHoldItsPartsIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> SlotMetaV3.make(1, 0, 16), "fingerprint 1 is INSERT");
        assertThrows(IllegalArgumentException.class, () -> SlotMetaV3.make(2, ValueClasses.COUNT, 16));
        assertThrows(IllegalArgumentException.class, () -> SlotMetaV3.make(2, 0, 24), "not on 16 bytes");
        assertThrows(IllegalArgumentException.class, () -> SlotMetaV3.make(2, 0, 0), "offset 0 is the header");
        assertThrows(IllegalArgumentException.class, () -> SlotMetaV3.make(2, 0, SlotMetaV3.MAX_OFFSET + 16));
        assertTrue(!SlotMetaV3.isItem(SlotMetaV3.EMPTY) && !SlotMetaV3.isItem(SlotMetaV3.INSERT));
    }
}
