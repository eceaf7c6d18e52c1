package org.gphash.index.api;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
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
 * Strings and byte arrays of bounded length ({@link Codec#strings}, {@link Codec#bytesUpTo}), and
 * strings, byte arrays, lists and records of any length for format 3 pools: every
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

    /**
     * Codecs of values of any length ({@link Codec#utf8()}, {@link Codec#byteArrays()}) on a format 3
     * pool: a map of strings of many lengths is a plain map, each value stored at its UTF-8 length and
     * read back whole after a reopen; a string longer than the value size is refused by the pool; such a
     * codec is refused for keys, on a pool of fixed values, and inside a codec of fixed size.
     */
    @Test
    void valuesOfAnyLengthMakeAMapOfStringsOnAFormatThreePool() {
        try (TestPools pools = TestPools.create()) {
            java.nio.file.Path path = pools.pool("any-length-strings.pool");
            Map<Long, String> model = new HashMap<>();
            try (GPHashIndex index = GPHashIndex.builder(path).keySize(8).valueSize(4000).poolFormat(3).create()) {
                ConcurrentMap<Long, String> map = GPHashMap.of(index, Codec.longs(), Codec.utf8());
                Random random = new Random(11);
                for (int i = 0; i < 3000; i++) {
                    long k = random.nextInt(500);
                    String v = "é".repeat(random.nextInt(1000)) + i;  // 2 UTF-8 bytes a letter
                    assertEquals(model.put(k, v), map.put(k, v));
                }
                assertEquals(model.size(), map.size());
                String longest = model.values().stream().max(java.util.Comparator.comparingInt(String::length)).orElseThrow();
                long key = model.entrySet().stream().filter(e -> e.getValue().equals(longest)).findFirst().orElseThrow().getKey();
                assertEquals(longest.getBytes(StandardCharsets.UTF_8).length, index.get(key).length,
                        "stored at its UTF-8 length, not padded");
                assertThrows(IllegalArgumentException.class, () -> map.put(1L, "x".repeat(4001)), "over the value size");
                ConcurrentMap<Long, byte[]> bytes = GPHashMap.of(index, Codec.longs(), Codec.byteArrays());
                assertArrayEquals(new byte[0], bytes.computeIfAbsent(100_000L, k -> new byte[0]), "an empty value");
                assertEquals(0, index.get(100_000L).length);
                bytes.remove(100_000L);
            }
            try (GPHashIndex index = GPHashIndex.builder(path).open()) {
                ConcurrentMap<Long, String> map = GPHashMap.of(index, Codec.longs(), Codec.utf8());
                assertEquals(model, new HashMap<>(map), "every string after a reopen");
            }
        }
        try (TestPools pools = TestPools.create();
             GPHashIndex fixed = GPHashIndex.builder(pools.pool("fixed.pool")).keySize(8).valueSize(64).create()) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> GPHashMap.of(fixed, Codec.longs(), Codec.utf8()));
            assertTrue(e.getMessage().contains("any length"), e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> GPHashMap.of(fixed, Codec.utf8(), Codec.bytesUpTo(60)));
        }
        assertThrows(IllegalArgumentException.class, () -> Codec.listOf(Codec.utf8(), 4));
        assertThrows(UnsupportedOperationException.class, () -> Codec.utf8().encode("a", new byte[8], 0));
    }

    /** A record with components of any length, and one of fixed size between them. */
    public record User(String name, int age, List<String> tags, byte[] photo) {
    }

    /**
     * Records and lists of any length (issue 53): a record with a string, a list of strings and a byte
     * array of any length comes back as it went, its encoding exactly as long as its parts (each part of
     * any length behind its 4-byte length, the int in its 4 bytes); lists of fixed-size and of
     * any-length elements likewise, nested lists too; a value cut short is refused by name, never read
     * as another.
     */
    @Property(tries = 300)
    void recordsAndListsOfAnyLengthComeBackAsTheyWent(@ForAll @StringLength(max = 60) String name,
                                                       @ForAll int age,
                                                       @ForAll("tags") List<String> tags,
                                                       @ForAll @IntRange(min = 0, max = 300) int photoBytes) {
        Codec<User> c = Codec.record(java.lang.invoke.MethodHandles.lookup(), User.class,
                Map.of("name", Codec.utf8(), "tags", Codec.listOf(Codec.utf8()), "photo", Codec.byteArrays()));
        assertEquals(Codec.VARIABLE, c.size());
        byte[] photo = new byte[photoBytes];
        new Random(photoBytes).nextBytes(photo);
        User u = new User(name, age, tags, photo);
        byte[] b = c.encode(u);
        int tagBytes = 4 + tags.stream().mapToInt(t -> 4 + t.getBytes(StandardCharsets.UTF_8).length).sum();
        assertEquals(4 + name.getBytes(StandardCharsets.UTF_8).length + 4 + 4 + tagBytes + 4 + photoBytes, b.length,
                "exactly as long as its parts");
        User back = c.decode(b, 0);
        assertEquals(new String(name.getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8), back.name());
        assertEquals(age, back.age());
        assertEquals(tags.stream().map(t -> new String(t.getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8)).toList(),
                back.tags());
        assertArrayEquals(photo, back.photo());
        assertThrows(IllegalArgumentException.class, () -> c.decode(java.util.Arrays.copyOf(b, b.length - 1 - photoBytes), 0),
                "a value cut short");
        Codec<List<Long>> longs = Codec.listOf(Codec.longs());
        List<Long> ls = List.of((long) age, (long) photoBytes, -1L);
        assertEquals(4 + 3 * 8, longs.encode(ls).length);
        assertEquals(ls, longs.decode(longs.encode(ls), 0));
        Codec<List<List<String>>> nested = Codec.listOf(Codec.listOf(Codec.utf8()));
        List<List<String>> n = List.of(List.of(), List.of("a", ""), List.of(name.isEmpty() ? "x" : "y"));
        assertEquals(n, nested.decode(nested.encode(n), 0));
    }

    @net.jqwik.api.Provide
    net.jqwik.api.Arbitrary<List<String>> tags() {
        return net.jqwik.api.Arbitraries.strings().ofMaxLength(20).list().ofMaxSize(6);
    }

    /**
     * A map of such records on a format 3 pool is a plain map, each record stored at its own length and
     * read back after a reopen; a record codec of any length is refused on a pool of fixed values and
     * inside a codec of fixed size, and encodes into no fixed place.
     */
    @Test
    void aMapOfRecordsOfAnyLengthOnAFormatThreePool() {
        Codec<User> users = Codec.record(java.lang.invoke.MethodHandles.lookup(), User.class,
                Map.of("name", Codec.utf8(), "tags", Codec.listOf(Codec.utf8()), "photo", Codec.byteArrays()));
        try (TestPools pools = TestPools.create()) {
            java.nio.file.Path path = pools.pool("records-any-length.pool");
            Map<Long, User> model = new HashMap<>();
            try (GPHashIndex index = GPHashIndex.builder(path).keySize(8).valueSize(2000).poolFormat(3).create()) {
                ConcurrentMap<Long, User> map = GPHashMap.of(index, Codec.longs(), users);
                Random random = new Random(12);
                for (int i = 0; i < 2000; i++) {
                    long k = random.nextInt(300);
                    User u = new User("user " + i, i, List.of("t".repeat(random.nextInt(30)), "x" + k),
                            new byte[random.nextInt(600)]);
                    model.put(k, u);
                    map.put(k, u);
                    if (i == 1999) {
                        assertEquals(users.encode(u).length, index.get(k).length, "stored at its own length");
                    }
                }
                assertSameUsers(model, map);
            }
            try (GPHashIndex index = GPHashIndex.builder(path).open()) {
                assertSameUsers(model, GPHashMap.of(index, Codec.longs(), users));
            }
        }
        try (TestPools pools = TestPools.create();
             GPHashIndex fixed = GPHashIndex.builder(pools.pool("fixed-records.pool")).keySize(8).valueSize(64).create()) {
            assertThrows(IllegalArgumentException.class, () -> GPHashMap.of(fixed, Codec.longs(), users));
        }
        assertThrows(IllegalArgumentException.class, () -> Codec.listOf(users, 4));
        assertThrows(UnsupportedOperationException.class, () -> users.encode(
                new User("a", 1, List.of(), new byte[0]), new byte[64], 0));
    }

    private static void assertSameUsers(Map<Long, User> model, Map<Long, User> map) {
        assertEquals(model.size(), map.size());
        for (Map.Entry<Long, User> e : model.entrySet()) {
            User got = map.get(e.getKey());
            User want = e.getValue();
            assertEquals(want.name(), got.name());
            assertEquals(want.age(), got.age());
            assertEquals(want.tags(), got.tags());
            assertArrayEquals(want.photo(), got.photo(), "key " + e.getKey());
        }
    }
}
