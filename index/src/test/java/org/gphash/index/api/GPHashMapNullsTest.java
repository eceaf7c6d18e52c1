package org.gphash.index.api;

import static org.junit.jupiter.api.Assertions.*;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

import org.gphash.Codec;
import org.gphash.GPHashIndex;
import org.gphash.GPHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Null arguments behave as in {@link ConcurrentHashMap} (issue 28): a null key or value throws
 * {@link NullPointerException} from every read as well as every write, on both maps alike.
 */
class GPHashMapNullsTest {

    private final TestPools pools = TestPools.create();

    @AfterEach
    void cleanUp() {
        pools.close();
    }

    @Test
    void nullArgumentsThrowAsInConcurrentHashMap() {
        try (GPHashIndex index = GPHashIndex.builder(pools.pool("nulls.pool")).keySize(8).valueSize(8)
                .initialCapacity(100).seed(9).create()) {
            ConcurrentMap<Long, Long> map = GPHashMap.of(index, Codec.longs(), Codec.longs());
            ConcurrentMap<Long, Long> reference = new ConcurrentHashMap<>();
            for (ConcurrentMap<Long, Long> m : java.util.List.of(map, reference)) {
                m.put(1L, 2L);
                String which = m == map ? "GPHashMap" : "ConcurrentHashMap";
                assertThrows(NullPointerException.class, () -> m.get(null), which + ".get(null)");
                assertThrows(NullPointerException.class, () -> m.containsKey(null), which + ".containsKey(null)");
                assertThrows(NullPointerException.class, () -> m.remove(null), which + ".remove(null)");
                assertThrows(NullPointerException.class, () -> m.containsValue(null), which + ".containsValue(null)");
                assertThrows(NullPointerException.class, () -> m.remove(null, 2L), which + ".remove(null, v)");
                assertFalse(m.remove(1L, null), which + ".remove(k, null) is false");
                assertEquals(2L, m.get(1L), which + ": nothing changed");
                assertTrue(m.containsValue(2L), which + ".containsValue(2)");
                assertNull(m.get("not a long"), which + ": a key of another type is absent");
            }
        }
    }
}
