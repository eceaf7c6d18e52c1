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
    void valuesOfAnyLengthLiePackedEachAtItsOffset() {
        Batch b = Batch.create(8, 4096, 2, true);
        assertTrue(b.valuesPacked());
        java.util.Random random = new java.util.Random(53);
        byte[][] written = new byte[300][];
        for (int i = 0; i < written.length; i++) {
            if (i % 7 == 3) {
                b.get(i);   // an empty entry
                continue;
            }
            written[i] = new byte[random.nextInt(4097)];
            random.nextBytes(written[i]);
            b.put(i, written[i]);   // the column grows past its first room (2 x 256 bytes) many times
        }
        long packedBytes = 0;
        long offset = 0;
        for (int i = 0; i < written.length; i++) {
            int length = written[i] == null ? 0 : written[i].length;
            assertEquals(offset, b.valueOffset(i), "values lie back to back, in order");
            assertEquals(length, b.valueLength(i));
            if (written[i] != null) {
                assertArrayEquals(written[i], b.values().asSlice(b.valueOffset(i), length)
                        .toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
            }
            offset += length;
            packedBytes += length;
        }
        assertEquals(packedBytes, b.values().byteSize(), "the column holds the values' bytes and no more");

        IllegalStateException grow = assertThrows(IllegalStateException.class, () -> b.setSize(301));
        assertTrue(grow.getMessage().contains("filled by add"), grow.getMessage());
        b.setSize(10);
        assertEquals(b.valueOffset(9) + b.valueLength(9), b.values().byteSize(), "shrunk to its first ten");
        b.put(10L, new byte[] {9});
        assertEquals(b.valueOffset(9) + b.valueLength(9), b.valueOffset(10));

        Batch c = Batch.create(8, 4096, 1, true).compareAndSet(LongKeys.encode(7L, 8), new byte[] {1, 2}, new byte[] {3})
                .get(8L).compareAndDelete(LongKeys.encode(9L, 8), new byte[] {4, 5, 6});
        b.addRange(c, 0, 3);
        assertEquals(14, b.size());
        assertTrue(b.hasConditionalOperations());
        assertEquals(1, b.valueLength(11));
        assertEquals(2, b.expectedLength(11));
        assertEquals(3, b.expectedLength(13));
        assertArrayEquals(new byte[] {4, 5, 6}, b.expectedValues().asSlice(b.expectedOffset(13), 3)
                .toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
        byte[] whole = new byte[4096];
        whole[4095] = 42;
        b.addAll(Batch.create(8, 4096, 1).get(1L).put(2L, whole));   // values of the value size join, packed
        assertEquals(0, b.valueLength(14));
        assertEquals(4096, b.valueLength(15));
        assertEquals(42, b.values().get(java.lang.foreign.ValueLayout.JAVA_BYTE, b.valueOffset(15) + 4095));
        IllegalArgumentException mixed = assertThrows(IllegalArgumentException.class,
                () -> Batch.create(8, 4096, 1).addAll(b));
        assertTrue(mixed.getMessage().contains("value size"), mixed.getMessage());
        b.clear();
        assertEquals(0, b.values().byteSize());
        assertEquals(0, b.expectedValues().byteSize());
    }

    @Test
    void packedValuesAreBoundedByTheirBytesNotByPlacesOfTheValueSize() {
        int mib = 1 << 20;
        assertEquals(2047, Batch.maxOperations(8, mib), "places of 1 MiB: 2 GiB hold 2047");
        Batch b = Batch.create(8, mib, 5000, true);   // refused as places of the value size; packed, taken
        for (int i = 0; i < 5000; i++) {
            b.put(i, new byte[] {(byte) i, 1, 2});
        }
        assertEquals(5000, b.size());
        assertEquals(15_000, b.values().byteSize());
        BatchResult r = new BatchResult(mib, 1);
        r.reset(b);   // a result of 5000 operations of values up to 1 MiB, packed
        assertEquals(5000, r.size());
        assertThrows(IllegalArgumentException.class, () -> Batch.create(8, mib, 5000, false));
    }

    @Test
    void resultsTakeTheLayoutOfTheirBatch() {
        Batch packed = Batch.create(8, 4096, 4, true).get(1L).get(2L).get(3L);
        BatchResult r = new BatchResult(4096, 1);
        r.reset(packed);
        assertTrue(r.valuesPacked());
        assertEquals(0, r.values().byteSize(), "no place of 4 KiB per result");
        long at = r.reserveValue(4096);
        r.valueBlock().asSlice(at, 3).copyFrom(MemorySegment.ofArray(new byte[] {1, 2, 3}));
        r.commitValue(2, 3);   // results finish in any order
        r.setOutcome(2, Outcome.FOUND);
        r.putValue(0, MemorySegment.ofArray(new byte[] {4, 5}), 0, 2);
        r.setOutcome(0, Outcome.FOUND);
        assertArrayEquals(new byte[] {1, 2, 3}, r.value(2));
        assertArrayEquals(new byte[] {4, 5}, r.value(0));
        assertEquals(3, r.valueOffset(0));
        assertEquals(5, r.values().byteSize());
        assertThrows(IllegalStateException.class, () -> r.setValueLength(1, 4));

        r.reset(Batch.create(8, 4096, 1).get(1L));   // back to a place of the value size per result
        assertFalse(r.valuesPacked());
        r.putValue(0, MemorySegment.ofArray(new byte[] {6}), 0, 1);
        r.setOutcome(0, Outcome.FOUND);
        assertArrayEquals(new byte[] {6}, r.value(0));
        assertEquals(4096, r.values().byteSize());
    }
}
