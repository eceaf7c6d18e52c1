package org.gphash.index.api;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentMap;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.StringLength;
import org.gphash.Codec;
import org.gphash.GPHashIndex;
import org.gphash.GPHashMap;
import org.junit.jupiter.api.Test;

/**
 * Strings and byte arrays of bounded length ({@link Codec#strings}, {@link Codec#bytesUpTo}): every
 * one that fits comes back as it went, equal ones encode to equal bytes (so they work as keys), longer
 * ones are refused with the lengths named; and a map of string keys and values on a pool behaves as a
 * plain map.
 */
class StringCodecsTest {

    @Property(tries = 500)
    void stringsThatFitComeBackAndEqualStringsEncodeEqually(@ForAll @StringLength(max = 40) String s,
                                                            @ForAll @IntRange(min = 1, max = 200) int maxBytes) {
        Codec<String> c = Codec.strings(maxBytes);
        int utf8 = s.getBytes(StandardCharsets.UTF_8).length;
        if (utf8 > maxBytes) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> c.encode(s));
            assertTrue(e.getMessage().contains(utf8 + " UTF-8 bytes") && e.getMessage().contains("refused"), e.getMessage());
            return;
        }
        byte[] b = c.encode(s);
        assertEquals(maxBytes + 2, b.length);
        assertEquals(s.isEmpty() ? "" : new String(s.getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8), c.decode(b, 0));
        assertArrayEquals(b, c.encode(new String(s.toCharArray())), "equal strings, equal bytes");
    }

    @Property(tries = 300)
    void byteArraysUpToTheirBoundComeBack(@ForAll @IntRange(min = 0, max = 300) int length,
                                          @ForAll @IntRange(min = 0, max = 256) int maxLength) {
        Codec<byte[]> c = Codec.bytesUpTo(maxLength);
        byte[] v = new byte[length];
        new Random(length).nextBytes(v);
        if (length > maxLength) {
            assertThrows(IllegalArgumentException.class, () -> c.encode(v));
            return;
        }
        byte[] out = new byte[c.size() + 3];
        c.encode(v, out, 3);
        assertArrayEquals(v, c.decode(out, 3));
    }

    @Test
    void boundsOutsideTheirRangeAreRefusedByName() {
        assertThrows(IllegalArgumentException.class, () -> Codec.strings(0));
        assertThrows(IllegalArgumentException.class, () -> Codec.strings(65_536));
        assertThrows(IllegalArgumentException.class, () -> Codec.bytesUpTo(-1));
        byte[] corrupt = new byte[12];
        corrupt[0] = 11;  // a length longer than the codec's 10
        assertThrows(IllegalArgumentException.class, () -> Codec.strings(10).decode(corrupt, 0));
    }

    @Test
    void aMapOfStringsOnAPoolIsAPlainMap() {
        try (TestPools pools = TestPools.create();
             GPHashIndex index = GPHashIndex.builder(pools.pool("strings.pool")).keySize(34).valueSize(68)
                     .initialCapacity(1000).seed(4).create()) {
            ConcurrentMap<String, String> map = GPHashMap.of(index, Codec.strings(32), Codec.strings(66));
            Map<String, String> model = new HashMap<>();
            Random random = new Random(5);
            for (int i = 0; i < 3000; i++) {
                String k = "user" + random.nextInt(400) + (i % 7 == 0 ? "é" : "");
                String v = "v".repeat(random.nextInt(60)) + i;
                switch (random.nextInt(3)) {
                    case 0 -> assertEquals(model.put(k, v), map.put(k, v));
                    case 1 -> assertEquals(model.remove(k), map.remove(k));
                    default -> assertEquals(model.get(k), map.get(k));
                }
            }
            assertEquals(model.size(), map.size());
            assertEquals(model, new HashMap<>(map));
            assertThrows(IllegalArgumentException.class, () -> map.put("k".repeat(33), "v"));
        }
    }
}
