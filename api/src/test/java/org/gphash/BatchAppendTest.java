package org.gphash;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;

import org.junit.jupiter.api.Test;

/**
 * The batch's appends from segments and from another batch (what the front end merges callers'
 * calls and batches with): each refuses what does not fit, naming it, and appends nothing then.
 */
class BatchAppendTest {

    private static MemorySegment bytes(int n, int fill) {
        byte[] b = new byte[n];
        java.util.Arrays.fill(b, (byte) fill);
        return MemorySegment.ofArray(b);
    }

    @Test
    void segmentsOfTheWrongSizeOrAConditionalKindAreRefused() {
        Batch b = Batch.create(8, 16, 4);
        IllegalArgumentException key = assertThrows(IllegalArgumentException.class,
                () -> b.add(OpKind.PUT, bytes(7, 1), bytes(16, 2)));
        assertTrue(key.getMessage().contains("key must be 8 bytes"), key.getMessage());
        IllegalArgumentException value = assertThrows(IllegalArgumentException.class,
                () -> b.add(OpKind.PUT, bytes(8, 1), bytes(15, 2)));
        assertTrue(value.getMessage().contains("value must be 16 bytes"), value.getMessage());
        assertThrows(NullPointerException.class, () -> b.add(OpKind.UPDATE, bytes(8, 1), null));
        IllegalArgumentException conditional = assertThrows(IllegalArgumentException.class,
                () -> b.add(OpKind.COMPARE_AND_SET, bytes(8, 1), bytes(16, 2)));
        assertTrue(conditional.getMessage().contains("expected value"), conditional.getMessage());
        assertEquals(0, b.size(), "nothing was appended");
        b.add(OpKind.DELETE, bytes(8, 3), null);  // no value for a delete
        assertEquals(1, b.size());
        assertArrayEquals(bytes(8, 3).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE), b.key(0));
    }

    @Test
    void anotherBatchIsAppendedInItsOrderAndOnlyOfTheSameSizes() {
        Batch a = Batch.create(8, 16, 4).get(1L).put(2L, new byte[16]);
        Batch b = Batch.create(8, 16, 4).delete(3L).compareAndDelete(LongKeys.encode(4L, 8), new byte[16]);
        a.addAll(b);
        assertEquals(4, a.size());
        assertEquals(3L, LongKeys.decode(a.key(2), 0, 8));
        assertTrue(a.hasConditionalOperations(), "the conditional operation came with its expected value");
        assertFalse(a.onlyGets());
        assertTrue(Batch.create(8, 16, 2).get(5L).onlyGets());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> a.addAll(Batch.create(8, 32, 1).get(1L)));
        assertTrue(e.getMessage().contains("32-byte values"), e.getMessage());
        assertEquals(4, a.size(), "nothing was appended");
    }

    @Test
    void valuesWrittenInPlaceTakeTheirLengthsAndGrowingTheBatchKeepsThem() {
        Batch b = Batch.create(8, 16, 2, true).put(1L, new byte[] {1, 2, 3});
        b.setSize(3);   // two more written in place: the value size unless said otherwise
        assertEquals(3, b.valueLength(0), "the appended operation keeps its length");
        assertEquals(16, b.valueLength(1));
        b.values().asSlice(2 * 16, 16).fill((byte) 7);
        b.setValueLength(2, 5);
        assertEquals(5, b.valueLength(2));
        assertArrayEquals(new byte[11], b.values().asSlice(2 * 16 + 5, 11).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE),
                "the rest of its place is zeroed");
        b.setValueLength(2, 16);
        b.setSize(1);
        assertTrue(b.hasShorterValues(), "operation 0 is still shorter");
        b.setValueLength(0, 16);
        b.setSize(1);
        assertFalse(b.hasShorterValues(), "no shorter value is left");
        assertThrows(IllegalArgumentException.class, () -> b.setValueLength(0, 17));
        assertThrows(IndexOutOfBoundsException.class, () -> b.setValueLength(1, 4));
        IllegalStateException fixed = assertThrows(IllegalStateException.class,
                () -> Batch.create(8, 16, 1).put(1L, new byte[16]).setValueLength(0, 4));
        assertTrue(fixed.getMessage().contains("value size"), fixed.getMessage());
    }
}
