package org.gphash.index.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentMap;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.EdgeCasesMode;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.gphash.Codec;
import org.gphash.GPHashIndex;
import org.gphash.GPHashMap;
import org.junit.jupiter.api.Test;

/**
 * {@link GPHashMap} against a {@link HashMap} model: random sequences of the map operations (the
 * conditional ones and the compute/merge family included) give the model's return values, and the
 * same contents at the end and after a reopen; codecs round-trip; many threads merging into shared
 * counters lose no increment.
 */
class GPHashMapProperties {

    /** A value type of primitives, as a user would declare it. */
    public record Point(int x, double y, boolean seen) {
    }

    enum Op { GET, CONTAINS, PUT, PUT_IF_ABSENT, REMOVE, REMOVE_VALUE, REPLACE, REPLACE_VALUE, MERGE, COMPUTE_IF_ABSENT,
        COMPUTE_IF_PRESENT }

    record Step(Op op, long key, int a, int b) {
    }

    @Provide
    Arbitrary<List<Step>> steps() {
        Arbitrary<Step> step = Combinators.combine(Arbitraries.of(Op.class), Arbitraries.longs().between(0, 40),
                Arbitraries.integers().between(0, 3), Arbitraries.integers().between(0, 3)).as(Step::new);
        return step.list().ofMinSize(1).ofMaxSize(300);
    }

    private static Point point(int v) {
        return new Point(v, v / 2.0, v % 2 == 0);
    }

    @Property(tries = 40, edgeCases = EdgeCasesMode.NONE)
    void behavesLikeAHashMap(@ForAll("steps") List<Step> steps) {
        try (TestPools pools = TestPools.create()) {
            Codec<Point> pc = Codec.record(Point.class);
            Map<Long, Point> model = new HashMap<>();
            try (GPHashIndex index = GPHashIndex.builder(pools.pool("m.pool")).keySize(8).valueSize(pc.size())
                    .initialCapacity(8).create()) {
                ConcurrentMap<Long, Point> map = GPHashMap.of(index, Codec.longs(), pc);
                for (Step s : steps) {
                    Long k = s.key();
                    Point a = point(s.a());
                    Point b = point(s.b());
                    String what = s.toString();
                    switch (s.op()) {
                        case GET -> assertEquals(model.get(k), map.get(k), what);
                        case CONTAINS -> assertEquals(model.containsKey(k), map.containsKey(k), what);
                        case PUT -> assertEquals(model.put(k, a), map.put(k, a), what);
                        case PUT_IF_ABSENT -> assertEquals(model.putIfAbsent(k, a), map.putIfAbsent(k, a), what);
                        case REMOVE -> assertEquals(model.remove(k), map.remove(k), what);
                        case REMOVE_VALUE -> assertEquals(model.remove(k, a), map.remove(k, a), what);
                        case REPLACE -> assertEquals(model.replace(k, a), map.replace(k, a), what);
                        case REPLACE_VALUE -> assertEquals(model.replace(k, a, b), map.replace(k, a, b), what);
                        case MERGE -> assertEquals(model.merge(k, a, GPHashMapProperties::add),
                                map.merge(k, a, GPHashMapProperties::add), what);
                        case COMPUTE_IF_ABSENT -> assertEquals(model.computeIfAbsent(k, x -> a), map.computeIfAbsent(k, x -> a),
                                what);
                        case COMPUTE_IF_PRESENT -> assertEquals(model.computeIfPresent(k, (x, v) -> v.x() > 2 ? null : b),
                                map.computeIfPresent(k, (x, v) -> v.x() > 2 ? null : b), what);
                    }
                    assertEquals(model.size(), map.size(), what + ": size");
                }
                assertEquals(model, new HashMap<>(map), "contents by iteration");
            }
            try (GPHashIndex index = GPHashIndex.builder(pools.pool("m.pool")).open()) {
                assertEquals(model, new HashMap<>(GPHashMap.of(index, Codec.longs(), pc)), "contents after a reopen");
            }
        }
    }

    private static Point add(Point p, Point q) {
        return new Point(p.x() + q.x(), p.y() + q.y(), p.seen() && q.seen());
    }

    @Test
    void codecsRoundTripAndRefuseWhatDoesNotFit() {
        UUID u = UUID.randomUUID();
        assertEquals(u, Codec.uuids().decode(Codec.uuids().encode(u), 0));
        assertEquals(-5L, Codec.longs().decode(Codec.longs().encode(-5L), 0));
        assertEquals(Integer.MIN_VALUE, Codec.ints().decode(Codec.ints().encode(Integer.MIN_VALUE), 0));
        Point p = new Point(-3, 2.5, true);
        assertEquals(p, Codec.record(Point.class).decode(Codec.record(Point.class).encode(p), 0));
        assertEquals(13, Codec.record(Point.class).size());
        assertEquals(1, Codec.longs().encode(1L)[0], "little-endian, as GPHashIndex.put(long, ...) stores keys");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Codec.bytes(4).encode(new byte[5]));
        assertTrue(e.getMessage().contains("4 bytes"), e.getMessage());
        record WithString(String s) {
        }
        e = assertThrows(IllegalArgumentException.class, () -> Codec.record(WithString.class));
        assertTrue(e.getMessage().contains("give it a codec by name"), e.getMessage());
    }

    @Test
    void theMapRefusesCodecsOfTheWrongSizeAndNulls() {
        try (TestPools pools = TestPools.create();
             GPHashIndex index = GPHashIndex.builder(pools.pool("s.pool")).keySize(8).valueSize(16).create()) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> GPHashMap.of(index, Codec.longs(), Codec.longs()));
            assertTrue(e.getMessage().contains("values of 8") && e.getMessage().contains("16 bytes"), e.getMessage());
            GPHashMap<Long, UUID> map = GPHashMap.of(index, Codec.longs(), Codec.uuids());
            assertThrows(NullPointerException.class, () -> map.put(1L, null));
            assertThrows(NullPointerException.class, () -> map.put(null, UUID.randomUUID()));
            assertNull(map.get("not a long"));
            assertFalse(map.containsKey(3));
            map.put(1L, new UUID(1, 2));
            assertEquals(new UUID(1, 2), index.get(1L) == null ? null : Codec.uuids().decode(index.get(1L), 0),
                    "the map writes what the index reads");
            map.clear();
            assertTrue(map.isEmpty());
        }
    }

    @Test
    void threadsMergingIntoSharedCountersLoseNothing() throws Exception {
        try (TestPools pools = TestPools.create();
             GPHashIndex index = GPHashIndex.builder(pools.pool("c.pool")).keySize(8).valueSize(8).create()) {
            GPHashMap<Long, Long> counters = GPHashMap.of(index, Codec.longs(), Codec.longs());
            int threads = 6;
            int rounds = 3000;
            Thread[] ts = new Thread[threads];
            for (int t = 0; t < threads; t++) {
                ts[t] = Thread.ofPlatform().start(() -> {
                    for (int i = 0; i < rounds; i++) {
                        counters.merge((long) (i % 17), 1L, Long::sum);
                    }
                });
            }
            for (Thread t : ts) {
                t.join();
            }
            long total = 0;
            for (long k = 0; k < 17; k++) {
                total += counters.get(k);
            }
            assertEquals((long) threads * rounds, total);
        }
    }
}
