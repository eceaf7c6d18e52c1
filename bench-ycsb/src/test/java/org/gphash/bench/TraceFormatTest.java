package org.gphash.bench;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.util.Arrays;

import org.gphash.OpKind;
import org.junit.jupiter.api.Test;

class TraceFormatTest {

    private static byte[] sampleTrace() throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (TraceWriter w = new TraceWriter(bytes, new TraceFormat.Header(8, 16, "test trace, two batches"))) {
            OpBatch b = new OpBatch(8, 16, 4);
            byte[] v = new byte[16];
            for (OpKind k : OpKind.values()) {
                Arrays.fill(v, (byte) k.ordinal());
                b.add(k, 100 + k.ordinal(), v);
            }
            w.write(b);
            b.clear();
            b.add(OpKind.GET, 7, v);
            w.write(b);
        }
        return bytes.toByteArray();
    }

    @Test
    void writtenBatchesReadBackUnchanged() throws Exception {
        try (TraceReader r = new TraceReader("t", new ByteArrayInputStream(sampleTrace()))) {
            assertEquals(new TraceFormat.Header(8, 16, "test trace, two batches"), r.header());
            assertEquals("test", r.header().label());
            OpBatch b = new OpBatch(8, 16, 1);
            assertTrue(r.next(b));
            assertEquals(OpKind.values().length, b.size());
            KeyCodec keys = new KeyCodec(8);
            byte[] key = new byte[8];
            byte[] value = new byte[16];
            for (OpKind k : OpKind.values()) {
                int i = k.ordinal();
                assertEquals(k, b.kind(i));
                b.key(i, key);
                assertArrayEquals(keys.encode(100 + i), key);
                if (k.hasValue()) {
                    b.value(i, value);
                    byte[] expected = new byte[16];
                    Arrays.fill(expected, (byte) i);
                    assertArrayEquals(expected, value);
                }
            }
            assertTrue(r.next(b));
            assertEquals(1, b.size());
            assertFalse(r.next(b));
            assertFalse(r.next(b));
        }
    }

    @Test
    void malformedTracesAreRefusedWithWhereAndWhat() throws Exception {
        byte[] good = sampleTrace();
        assertMalformed(new byte[] {'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd', '!'}, "not a gphash trace");
        byte[] version = good.clone();
        version[8] = 9;
        assertMalformed(version, "version 9");
        byte[] keySize = good.clone();
        keySize[10] = 0;
        assertMalformed(keySize, "key size 0");
        int firstBatch = 20 + "test trace, two batches".length();
        byte[] kind = good.clone();
        kind[firstBatch + 4] = 42;
        assertMalformed(kind, "unknown operation kind 42");
        assertMalformed(Arrays.copyOf(good, good.length - 4), "cut short");
        assertMalformed(Arrays.copyOf(good, firstBatch + 10), "cut short");
    }

    private static void assertMalformed(byte[] bytes, String expected) {
        TraceFormatException e = assertThrows(TraceFormatException.class, () -> {
            try (TraceReader r = new TraceReader("bad.trace", new ByteArrayInputStream(bytes))) {
                OpBatch b = new OpBatch(r.header().keySize(), r.header().valueSize(), 1,
                        r.header().lengths() ? ValueLengths.MIXED : ValueLengths.FIXED);
                while (r.next(b)) {
                    // read to the end
                }
            }
        });
        assertTrue(e.getMessage().contains(expected) && e.getMessage().startsWith("bad.trace: byte "), e.getMessage());
    }

    /** Version 2: each value behind its length, read back at it; a length over the value size is refused by where it is. */
    @Test
    void valuesOfAnyLengthReadBackAtTheirLengths() throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        TraceFormat.Header header = new TraceFormat.Header(8, 16, "lengths", true);
        try (TraceWriter w = new TraceWriter(bytes, header)) {
            OpBatch b = new OpBatch(8, 16, 4, ValueLengths.MIXED);
            for (int length : new int[] {0, 5, 16}) {
                byte[] v = new byte[16];
                Arrays.fill(v, (byte) (length + 1));
                b.addRaw(OpKind.PUT, new KeyCodec(8).encode(length), 0, v, 0, length);
            }
            b.addRaw(OpKind.GET, new KeyCodec(8).encode(99), 0, new byte[16], 0);
            w.write(b);
        }
        byte[] trace = bytes.toByteArray();
        assertEquals(2, trace[8], "version 2");
        try (TraceReader r = new TraceReader("t", new ByteArrayInputStream(trace))) {
            assertEquals(header, r.header());
            OpBatch b = new OpBatch(8, 16, 1, ValueLengths.MIXED);
            assertTrue(r.next(b));
            assertEquals(4, b.size());
            byte[] value = new byte[16];
            int[] lengths = {0, 5, 16};
            for (int i = 0; i < 3; i++) {
                assertEquals(lengths[i], b.valueLength(i));
                b.value(i, value);
                byte[] expected = new byte[16];
                Arrays.fill(expected, 0, lengths[i], (byte) (lengths[i] + 1));
                assertArrayEquals(expected, value, "value " + i + ", the rest of its place zeroed");
            }
            assertFalse(r.next(b));
        }
        int firstValueLength = 20 + "lengths".length() + 4 + 1 + 8;   // header, the batch's count, a kind, a key
        byte[] over = trace.clone();
        over[firstValueLength] = 17;
        assertMalformed(over, "over the value size 16");
        TraceFormatException e = assertThrows(TraceFormatException.class, () -> {
            try (TraceReader r = new TraceReader("t", new ByteArrayInputStream(over))) {
                r.next(new OpBatch(8, 16, 1, ValueLengths.MIXED));
            }
        });
        assertTrue(e.getMessage().contains("byte " + firstValueLength), e.getMessage());
        OpBatch fixed = new OpBatch(8, 16, 1);
        assertThrows(IllegalArgumentException.class, () -> fixed.addRaw(OpKind.PUT, new byte[8], 0, new byte[16], 0, 5),
                "a batch of values of the value size takes no shorter one");
    }
}
