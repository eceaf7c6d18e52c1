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
                OpBatch b = new OpBatch(r.header().keySize(), r.header().valueSize(), 1);
                while (r.next(b)) {
                    // read to the end
                }
            }
        });
        assertTrue(e.getMessage().contains(expected) && e.getMessage().startsWith("bad.trace: byte "), e.getMessage());
    }
}
