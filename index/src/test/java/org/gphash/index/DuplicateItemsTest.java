package org.gphash.index;

import static org.gphash.index.CrashPointTest.key;
import static org.gphash.index.CrashPointTest.plantDuplicate;
import static org.gphash.index.CrashPointTest.value;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.foreign.MemorySegment;
import java.util.OptionalLong;

import org.gphash.Backend;
import org.gphash.Outcome;
import org.gphash.bktcache.BktCacheConfig;
import org.gphash.index.api.TestPools;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A key with a second, less valid copy in a later candidate bucket (what an insert racing another
 * leaves until it removes its copy): a read returns the valid item's value, though it stops at the
 * first match; a conditional write scans every candidate, removes the copy and frees its block, so
 * that the key does not come back with the copy's value. Fails if reads took the last match, or if
 * conditional writes stopped at the first.
 */
class DuplicateItemsTest {

    private static final int VALUE_SIZE = 128;  // CrashPointTest.value's size
    private final TestPools pools = TestPools.create();

    @AfterEach
    void cleanUp() {
        pools.close();
    }

    @Test
    void readsTakeTheValidItemAndConditionalWritesRemoveTheCopies() {
        try (CpuEngine engine = CpuEngine.create(Configs.of(pools.pool("dup"), 8, VALUE_SIZE, 0, 0, 0, 16, Long.MAX_VALUE,
                Backend.CPU, false, OptionalLong.of(7), org.gphash.spi.CrashHook.NONE, BktCacheConfig.DISABLED))) {
            int keys = 200;
            for (long k = 0; k < keys; k++) {
                assertEquals(Outcome.INSERTED, engine.insert(key(k), MemorySegment.ofArray(value(k, 0))));
            }
            long[] planted = new long[3];
            int n = 0;
            for (long k = 0; k < keys && n < planted.length; k++) {
                if (plantDuplicate(engine.table(), k, value(k, 99))) {  // the copy holds another value
                    planted[n++] = k;
                }
            }
            assertEquals(planted.length, n, "could not plant the copies");
            engine.table().table.headers.admitOpsInFlight(n + 1);
            MemorySegment out = MemorySegment.ofArray(new byte[VALUE_SIZE]);
            for (long k : planted) {
                assertEquals(Outcome.FOUND, engine.get(key(k), out));
                assertArrayEquals(value(k, 0), out.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE), "the valid item's value");
            }
            // compare-and-delete: both copies go.
            assertEquals(Outcome.DELETED, engine.compareAndDelete(key(planted[0]), MemorySegment.ofArray(value(planted[0], 0))));
            assertEquals(Outcome.NOT_FOUND, engine.get(key(planted[0]), out), "the copy must not come back");
            // compare-and-set: the valid item changes, the copy goes.
            assertEquals(Outcome.UPDATED, engine.compareAndSet(key(planted[1]), MemorySegment.ofArray(value(planted[1], 0)),
                    MemorySegment.ofArray(value(planted[1], 5))));
            assertEquals(Outcome.DELETED, engine.delete(key(planted[1])));
            assertEquals(Outcome.NOT_FOUND, engine.get(key(planted[1]), out), "the copy must not come back");
            assertEquals(keys - 2 + 1, engine.stats().size(), "one copy left, of the untouched key");
        }
    }
}
