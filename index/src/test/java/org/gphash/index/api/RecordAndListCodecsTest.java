package org.gphash.index.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.invoke.MethodHandles;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentMap;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import net.jqwik.api.constraints.StringLength;
import org.gphash.Codec;
import org.gphash.GPHashIndex;
import org.gphash.GPHashMap;
import org.junit.jupiter.api.Test;

/**
 * Issue 53, item 2: a record codec holds strings and lists ({@link Codec#record(MethodHandles.Lookup,
 * Class, Map)}, {@link Codec#listOf}): records and lists that fit come back as they went, ones that do
 * not are refused naming why, and a map of such records on a pool behaves as a plain map.
 */
class RecordAndListCodecsTest {

    /** A user: primitives, a string and a list of strings. */
    record User(long id, String name, boolean active, List<String> tags, double score) {
    }

    private static final Codec<User> USERS = Codec.record(MethodHandles.lookup(), User.class,
            Map.of("name", Codec.strings(40), "tags", Codec.listOf(Codec.strings(16), 6)));

    @Property(tries = 400)
    void recordsWithStringsAndListsThatFitComeBack(@ForAll long id, @ForAll @StringLength(max = 12) String name,
                                                  @ForAll boolean active,
                                                  @ForAll @Size(max = 8) List<@StringLength(max = 5) String> tags,
                                                  @ForAll double score) {
        User u = new User(id, name, active, tags, score);
        boolean fits = name.getBytes(StandardCharsets.UTF_8).length <= 40 && tags.size() <= 6
                && tags.stream().allMatch(t -> t.getBytes(StandardCharsets.UTF_8).length <= 16);
        if (!fits) {
            assertThrows(IllegalArgumentException.class, () -> USERS.encode(u));
            return;
        }
        byte[] b = USERS.encode(u);
        assertEquals(8 + 42 + 1 + (2 + 6 * 18) + 8, b.length, "the parts' sizes, in order");
        User back = USERS.decode(b, 0);
        assertEquals(u.id(), back.id());
        assertEquals(new String(name.getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8),
                back.name());
        assertEquals(u.active(), back.active());
        assertEquals(tags.size(), back.tags().size());
        assertEquals(Double.doubleToRawLongBits(score), Double.doubleToRawLongBits(back.score()));
    }

    @Property(tries = 300)
    void listsUpToTheirBoundComeBackInOrder(@ForAll @Size(max = 20) List<Long> values,
                                            @ForAll @IntRange(min = 0, max = 16) int max) {
        Codec<List<Long>> c = Codec.listOf(Codec.longs(), max);
        assertEquals(2 + 8 * max, c.size());
        if (values.size() > max) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> c.encode(values));
            assertTrue(e.getMessage().contains(values.size() + " elements"), e.getMessage());
            return;
        }
        byte[] out = new byte[c.size() + 5];
        c.encode(values, out, 5);
        List<Long> back = c.decode(out, 5);
        assertEquals(values, back);
        assertThrows(UnsupportedOperationException.class, () -> back.add(1L), "a decoded list is unmodifiable");
    }

    record Named(String name, int count) {
    }

    @Test
    void aRecordCodecSaysWhatItCannotDo() {
        MethodHandles.Lookup lookup = MethodHandles.lookup();
        IllegalArgumentException none = assertThrows(IllegalArgumentException.class, () -> Codec.record(lookup, Named.class));
        assertTrue(none.getMessage().contains("component name is a java.lang.String"), none.getMessage());
        IllegalArgumentException unknown = assertThrows(IllegalArgumentException.class,
                () -> Codec.record(lookup, Named.class, Map.of("name", Codec.strings(8), "nmae", Codec.strings(8))));
        assertTrue(unknown.getMessage().contains("no component named [nmae]"), unknown.getMessage());
        IllegalArgumentException wrongType = assertThrows(IllegalArgumentException.class,
                () -> Codec.record(lookup, Named.class, Map.of("name", Codec.longs())));
        assertTrue(wrongType.getMessage().contains("encodes java.lang.Long"), wrongType.getMessage());
        Codec<Named> c = Codec.record(lookup, Named.class, Map.of("name", Codec.strings(8), "count", Codec.ints()));
        assertEquals(10 + 4, c.size(), "a primitive may take a codec of its own too");
        assertEquals(new Named("x", 7), c.decode(c.encode(new Named("x", 7)), 0));
        NullPointerException nulls = assertThrows(NullPointerException.class, () -> c.encode(new Named(null, 1)));
        assertTrue(nulls.getMessage().contains("component name is null"), nulls.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Codec.listOf(Codec.longs(), 65_536));
        // A record inside a record, by its own codec.
        Codec<Pair> pairs = Codec.record(lookup, Pair.class, Map.of("first", c));
        assertEquals(c.size() + 8, pairs.size());
        assertEquals(new Pair(new Named("ab", 3), -9), pairs.decode(pairs.encode(new Pair(new Named("ab", 3), -9)), 0));
    }

    record Pair(Named first, long second) {
    }

    /** A map of long keys to users on a pool, against a plain map. */
    @Test
    void aMapOfRecordsWithStringsBehavesAsAPlainMap() {
        try (TestPools p = TestPools.create();
             GPHashIndex index = GPHashIndex.builder(p.pool("users.pool")).keySize(8).valueSize(USERS.size())
                     .initialCapacity(1000).create()) {
            ConcurrentMap<Long, User> map = GPHashMap.of(index, Codec.longs(), USERS);
            Map<Long, User> model = new HashMap<>();
            Random random = new Random(53);
            for (int i = 0; i < 3000; i++) {
                long k = random.nextInt(400);
                if (random.nextInt(4) == 0) {
                    assertEquals(model.remove(k), map.remove(k));
                } else {
                    User u = new User(k, "user " + random.nextInt(1000), random.nextBoolean(),
                            List.of("t" + random.nextInt(9), "u" + random.nextInt(9)), random.nextDouble());
                    assertEquals(model.put(k, u), map.put(k, u));
                }
            }
            assertEquals(model, Map.copyOf(map));
        }
    }
}
