package org.gphash.format;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/** Format 3's value block header: what it holds comes back, and a header is whole only in its length's class. */
class ValueBlockHeaderTest {

    @Property(tries = 500)
    void lengthAndChecksumComeBack(@ForAll @IntRange(min = 0) int raw, @ForAll int checksum) {
        int length = raw % (ValueClasses.MAX_VALUE_BYTES + 1);
        long h = ValueBlockHeader.make(length, checksum);
        assertEquals(length, ValueBlockHeader.length(h));
        assertEquals(checksum, ValueBlockHeader.checksum(h));
    }

    @Property(tries = 500)
    void aHeaderIsWholeInItsLengthsClassAndNoOther(@ForAll @IntRange(min = 0) int raw, @ForAll @IntRange(min = 0) int rawClass,
                                                   @ForAll int checksum) {
        int length = raw % 5000 < 4000 ? raw % 5000 : raw % (ValueClasses.MAX_VALUE_BYTES + 1);  // mostly small ones
        int other = rawClass % ValueClasses.COUNT;
        long h = ValueBlockHeader.make(length, checksum);
        int own = ValueClasses.classOf(length);
        assertTrue(ValueBlockHeader.wholeIn(h, own));
        assertEquals(other == own, ValueBlockHeader.wholeIn(h, other), "length " + length + ", class " + other);
    }

    @Test
    void lengthsNoBlockHoldsAreRefusedAndNeverWhole() {
        assertThrows(IllegalArgumentException.class, () -> ValueBlockHeader.make(-1, 0));
        assertThrows(IllegalArgumentException.class, () -> ValueBlockHeader.make(ValueClasses.MAX_VALUE_BYTES + 1, 0));
        long tooLong = ValueClasses.MAX_VALUE_BYTES + 1L;
        for (int c = 0; c < ValueClasses.COUNT; c++) {
            assertFalse(ValueBlockHeader.wholeIn(tooLong, c));
            assertFalse(ValueBlockHeader.wholeIn(-1L, c), "all ones: never written as a header");
        }
    }
}
