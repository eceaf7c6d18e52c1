package org.gphash.format;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;

/**
 * The pool's meta-word format as the engines decode through it: format 2's words are {@link SlotMeta}'s
 * bit for bit (every pool today), format 3's {@link SlotMetaV3}'s with the class of each value's block;
 * the fingerprint and what names a block are the same bits in both.
 */
class MetaFormatTest {

    @Property(tries = 500)
    void formatTwoIsSlotMetaBitForBit(@ForAll @IntRange(min = 2, max = 0xFFFF) int fingerprint,
                                      @ForAll @LongRange(min = 1, max = (1L << 48) - 1) long offset) {
        long word = MetaFormat.V2.make(fingerprint, -1, offset);
        assertEquals(SlotMeta.make(fingerprint, offset), word);
        assertEquals(offset, MetaFormat.V2.valueOffset(word));
        assertEquals(fingerprint, SlotMeta.fingerprint(word));
        assertEquals(2, MetaFormat.V2.version());
        assertEquals(MetaFormat.V2, MetaFormat.of(PoolHeader.FORMAT_VERSION));
        assertEquals(3, MetaFormat.of(PoolHeader.FORMAT_3).version());
    }

    @Property(tries = 500)
    void formatThreeIsSlotMetaV3WithTheValuesClass(@ForAll @IntRange(min = 2, max = 0xFFFF) int fingerprint,
                                                    @ForAll @LongRange(min = 1, max = (1L << 30)) long units,
                                                    @ForAll @IntRange(min = 0, max = 1 << 16) int valueSize) {
        MetaFormat f = MetaFormat.V3;
        long offset = units * SlotMetaV3.OFFSET_UNIT;
        long word = f.make(fingerprint, ValueClasses.classOf(valueSize), offset);
        assertEquals(ValueClasses.classOf(valueSize), f.valueClass(word));
        assertEquals(SlotMetaV3.make(fingerprint, ValueClasses.classOf(valueSize), offset), word);
        assertEquals(offset, f.valueOffset(word));
        assertEquals(ValueClasses.classOf(valueSize), SlotMetaV3.valueClass(word));
        assertEquals(fingerprint, SlotMeta.fingerprint(word), "the fingerprint is the same bits in both formats");
        assertTrue(SlotMeta.isItem(word));
    }

    @Property(tries = 500)
    void sameBlockComparesWhatNamesTheBlockNotTheFingerprint(@ForAll @IntRange(min = 2, max = 0xFFFF) int a,
                                                            @ForAll @IntRange(min = 2, max = 0xFFFF) int b,
                                                            @ForAll @LongRange(min = 1, max = 1L << 40) long units,
                                                            @ForAll @LongRange(min = 1, max = 1L << 40) long other) {
        int c = ValueClasses.classOf(128);
        for (MetaFormat f : new MetaFormat[] {MetaFormat.V2, MetaFormat.V3}) {
            long offset = units * 16;
            assertTrue(MetaFormat.sameBlock(f.make(a, c, offset), f.make(b, c, offset)), f + ": one block, two fingerprints");
            assertEquals(units == other, MetaFormat.sameBlock(f.make(a, c, offset), f.make(a, c, other * 16)), f.toString());
        }
    }

    @Property(tries = 50)
    void aVersionThisBuildCannotReadIsRefusedByName(@ForAll @IntRange(min = -5, max = 100) int version) {
        if (PoolHeader.readable(version)) {
            return;
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> MetaFormat.of(version));
        assertTrue(e.getMessage().contains("pool format " + version), e.getMessage());
        assertFalse(e.getMessage().isEmpty());
    }
}
